#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <memory>
#include <random>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ketch/common/memory_manager.h"
#include "ketch/exec/morsel.h"
#include "ketch/exec/operator.h"

namespace ketch {

/// Blocking sink of `DataFrame.sample(size=k)`: exactly `k` rows drawn uniformly from its whole
/// input, holding at most about 2 × k rows (plus one morsel's selected rows) at any time.
///
/// Without replacement it is reservoir sampling, Algorithm R (J. S. Vitter, "Random Sampling with
/// a Reservoir", ACM TOMS 11(1), 1985): row t (0-based) fills slot t while t < k, else replaces
/// slot j for j uniform in [0, t] when j < k; every k-subset is equally likely. With replacement
/// each of the k slots is an independent uniform draw: row t replaces each slot with probability
/// 1 / (t + 1), i.e. Binomial(k, 1 / (t + 1)) distinct slots chosen uniformly.
///
/// Morsels arrive in input order (the executor re-orders), and the generator is seeded with
/// `seed`, so a seeded sample of the same input is reproducible. Only the rows a slot still
/// refers to at the end of each morsel are kept (`take`), charged to the query's MemoryManager.
///
/// ProduceOutput fails with Invalid ("Cannot take a sample larger than the population when
/// 'replace=False'", Daft's text) when the input has fewer than k rows without replacement; with
/// replacement an empty input gives no rows.
class SampleSizeSink : public BlockingSink {
 public:
  SampleSizeSink(std::shared_ptr<arrow::Schema> schema, int64_t size, bool with_replacement, uint64_t seed,
                 int64_t morsel_rows, MemoryManager* memory)
      : schema_(std::move(schema)),
        size_(size),
        with_replacement_(with_replacement),
        rng_(seed ^ 0x5DEECE66DULL),
        morsel_rows_(morsel_rows),
        memory_(memory) {}
  std::string name() const override { return "SampleSize"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Status ProduceOutput(const Source::Emit& emit) override;

 private:
  /// Where a slot's row is: piece -1 is `kept_`, piece p >= 0 is `pieces_[p]`.
  struct Ref {
    int32_t piece = -1;
    int64_t row = -1;
  };
  /// Gathers every slot's row into `kept_` (slot order) and drops the pieces.
  arrow::Status Compact();
  /// Marks the slots row `i` of the current morsel (piece `piece`) takes.
  arrow::Status Draw(int32_t piece, int64_t i);

  std::shared_ptr<arrow::Schema> schema_;
  int64_t size_;
  bool with_replacement_;
  std::mt19937_64 rng_;
  int64_t morsel_rows_;
  MemoryManager* memory_;
  std::vector<Ref> slots_;
  std::unordered_set<int64_t> chosen_;  ///< scratch of Draw (with replacement)
  int64_t seen_ = 0;                    ///< input rows so far
  std::shared_ptr<arrow::RecordBatch> kept_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> pieces_;
  int64_t piece_rows_ = 0;
  HeldBytes held_;
};

}  // namespace ketch
