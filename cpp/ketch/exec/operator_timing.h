#pragma once

// Per-operator metrics of a pipeline run (explain_analyze): thread CPU time of a scope and the
// morsels, rows and bytes an operator saw.

#include <time.h>

#include <memory>

#include "ketch/exec/executor.h"
#include "ketch/exec/morsel.h"

namespace ketch::exec {

inline int64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Adds the thread CPU time of a scope to a metric.
class CpuTimer {
 public:
  explicit CpuTimer(OperatorMetrics* metrics) : metrics_(metrics), start_(metrics ? ThreadCpuNanos() : 0) {}
  ~CpuTimer() {
    if (metrics_) metrics_->cpu_ns += ThreadCpuNanos() - start_;
  }

 private:
  OperatorMetrics* metrics_;
  int64_t start_;
};

inline void Count(OperatorMetrics* metrics, int64_t rows_in, const std::shared_ptr<arrow::RecordBatch>& out) {
  if (!metrics) return;
  metrics->morsels++;
  metrics->rows_in += rows_in;
  if (out) {
    metrics->rows_out += out->num_rows();
    metrics->bytes_out += BatchBytes(*out);
  }
}

}  // namespace ketch::exec
