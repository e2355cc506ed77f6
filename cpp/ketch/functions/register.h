#pragma once

#include <arrow/status.h>

namespace ketch {

/// Registers every built-in Ketch kernel family and the extension types; idempotent. Called once
/// by the Python module at import and by the C++ tests.
arrow::Status RegisterBuiltins();

}  // namespace ketch
