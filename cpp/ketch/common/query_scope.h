#pragma once

#include <cstdint>

namespace ketch {

/// The query the calling thread is working for: the executor opens a scope around each operator
/// call, so a kernel can key per-query state (a tokenizer file read once per query) by
/// `QueryScope::Current()`. Ids are unique in the process and never 0; 0 means "no query" (plan-time
/// constant folding, direct Evaluate calls). Scopes nest (the inner id wins until it closes).
class QueryScope {
 public:
  explicit QueryScope(uint64_t query_id) : previous_(current_) { current_ = query_id; }
  ~QueryScope() { current_ = previous_; }
  QueryScope(const QueryScope&) = delete;
  QueryScope& operator=(const QueryScope&) = delete;

  static uint64_t Current() { return current_; }

 private:
  uint64_t previous_;
  static inline thread_local uint64_t current_ = 0;
};

}  // namespace ketch
