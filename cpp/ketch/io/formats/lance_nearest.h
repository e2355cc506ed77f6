#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ketch::io {

/// A vector index of a Lance dataset, as `LanceDataset.describe_indices()` reports it.
struct LanceVectorIndex {
  std::string name;        ///< e.g. "emb_idx"
  std::string index_type;  ///< e.g. "IVF_PQ", "IVF_HNSW_SQ"
  std::string column;      ///< the one indexed column
  std::string metric;      ///< lower case: "cosine", "l2" or "dot"
};

/// A nearest-neighbour search pushed into a Lance scan (`LanceDataset.scanner(nearest=...)`): the
/// scan returns the `k` rows nearest to `query` in `column` (fewer when the dataset has fewer rows),
/// searched over the whole dataset version with the scan's filter applied first (Lance's
/// prefilter), through the index `index_name`. The rows come without Lance's `_distance`: Ketch
/// recomputes its own distance above the scan and sorts by it.
struct LanceNearest {
  std::string column;
  std::vector<double> query;  ///< the query vector (sent to Lance as float32)
  int64_t k = 0;
  std::string metric;  ///< "cosine" or "l2"
  std::string index_name;
  std::string index_type;
  int64_t nprobes = 0;        ///< IVF partitions probed
  int64_t refine_factor = 0;  ///< k * refine_factor candidates re-ranked with exact distances
};

}  // namespace ketch::io
