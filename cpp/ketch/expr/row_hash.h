#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ketch {

/// True when rows can be hashed by columns of this type (RowHashes): booleans, integers, floats,
/// decimals, strings, binaries, dates, times, timestamps, durations, dictionaries of those, null.
/// Images, tensors, embeddings, lists, structs and Python objects cannot. Extension types answer
/// false here; CanBeKey (key_storage.h) looks through them to their storage.
bool IsHashableType(const arrow::DataType& type);

/// One 64-bit hash per row of `batch` over the columns `keys` (in order), for hash partitioning.
/// Equal values hash equally whatever the batch or the process (no per-process seed), so map tasks
/// on different workers agree: integers hash by value whatever their width, -0.0 as 0.0, every NaN
/// alike, nulls alike, strings/binaries by bytes (Arrow's ComputeStringHash, xxh3), the column
/// hashes combined in order (boost's hash_combine on 64 bits). Extension columns hash as their
/// storage (key_storage.h: a UUID like its 16 bytes). TypeError for a column that cannot be a key.
arrow::Result<std::vector<uint64_t>> RowHashes(const arrow::RecordBatch& batch,
                                               const std::vector<std::string>& keys);

}  // namespace ketch
