#pragma once

// How big morsels are and how many are in flight (executor.cc): the in-flight bound of a
// pipeline, and the byte targets that size the morsels of segments whose operators grow them.

#include "ketch/exec/pipeline.h"

namespace ketch::exec {

/// Morsels a pipeline may hold at once: the configured bound; when that is the default (`auto_bound`),
/// raised so that every worker of its operators with workers of their own (a UDF's `concurrency`
/// threads or processes) can hold one while the compute pool works on others (else a UDF stage would
/// run below its concurrency). A bound the user set is kept.
int64_t MorselsInFlight(const Pipeline& pipeline, const ExecutionConfig& config, bool auto_bound);

constexpr int64_t kMinTargetMorselBytes = 1LL << 20;
// Until a growing operator's output has been seen, its segment's morsels are 1/512 of their size
// (a download stage or a row-wise UDF starts with one row, a batch UDF with 16), so the first
// morsels in flight cannot blow the budget before anything is known.
constexpr int64_t kProbeDivisor = 512;

}  // namespace ketch::exec
