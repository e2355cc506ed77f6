#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <exception>
#include <new>
#include <type_traits>
#include <utility>

namespace ketch {

/// Runs `f` (returning arrow::Status or arrow::Result<T>) and turns a C++ exception escaping it
/// into an error Status: std::bad_alloc → OutOfMemory, any other std::exception → UnknownError
/// with its what(), anything else → UnknownError. Used where engine code runs on worker threads
/// (operators, sources, sinks): an exception escaping a thread would std::terminate the process.
template <typename F>
auto GuardExceptions(const char* where, F&& f) -> decltype(f()) {
  using R = decltype(f());
  try {
    return std::forward<F>(f)();
  } catch (const std::bad_alloc&) {
    return R(arrow::Status::OutOfMemory(where, ": out of memory (std::bad_alloc)"));
  } catch (const std::exception& e) {
    return R(arrow::Status::UnknownError(where, ": unexpected C++ exception: ", e.what()));
  } catch (...) {
    return R(arrow::Status::UnknownError(where, ": unexpected C++ exception"));
  }
}

}  // namespace ketch
