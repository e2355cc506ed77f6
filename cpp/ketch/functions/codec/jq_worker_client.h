#pragma once

#include <arrow/api.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ketch::codec {

/// The outcome of a jq filter on one row: no output, its output (compact JSON text, several
/// outputs as one JSON array), or the row's error message.
struct JqRowResult {
  enum class Kind { kNoOutput, kOutput, kError } kind = Kind::kNoOutput;
  std::string text;
};

/// Bounds on one row's work in the worker.
struct JqLimits {
  uint64_t max_outputs = 1'000'000;          ///< outputs of the filter for one row
  uint64_t max_output_bytes = 256ULL << 20;  ///< bytes of those outputs together
  uint64_t address_space_bytes = 0;          ///< the worker's RLIMIT_AS (0: none)
};

/// One ketch-jq-worker process (cpp/jq_worker) with one compiled filter: libjq runs there, so a
/// filter that never ends or allocates without bound can be stopped (the process is killed) and
/// one that crashes libjq costs only the worker. Not thread-safe: one per engine thread.
///
/// The worker binary is found beside the loaded _core module, else where the build put it.
class JqWorker {
 public:
  /// Spawns a worker (posix_spawn, empty environment) and compiles `filter` there. Invalid with
  /// libjq's message for a filter that does not compile; IOError when the worker cannot start.
  static arrow::Result<std::unique_ptr<JqWorker>> Start(const std::string& filter, const JqLimits& limits);
  ~JqWorker();
  JqWorker(const JqWorker&) = delete;
  JqWorker& operator=(const JqWorker&) = delete;

  /// Runs the filter on each text (rows in order). `cancelled` (may be null) is polled every
  /// 100 ms: when it turns true the worker is killed and Cancelled returned. When the worker dies
  /// (a libjq abort, out of memory under the address-space limit), returns IOError naming how it
  /// died, with `*failed_row` set to the index of the row it was on; the worker is unusable then.
  arrow::Result<std::vector<JqRowResult>> Run(const std::vector<std::string_view>& texts,
                                              const std::atomic<bool>* cancelled, int64_t* failed_row);
  bool alive() const { return pid_ > 0; }

 private:
  JqWorker() = default;
  void Kill();
  /// Why the worker exited (after waitpid), in words.
  std::string Reap();

  int pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  JqLimits limits_;
};

}  // namespace ketch::codec
