#include "ketch/plan/physical/physical_plan.h"

#include <algorithm>
#include <cmath>

#include "ketch/exec/blocking/top_n.h"
#include "ketch/plan/physical/into_partitions_cuts.h"

namespace ketch {
namespace {

// Kernels that do much work per row and therefore want small morsels.
bool HasHeavyKernel(const Expr& expr) {
  if (expr.kind() == ExprKind::kCall &&
      (expr.name().rfind("image_", 0) == 0 || expr.name().rfind("url_", 0) == 0 ||
       expr.name().rfind("pdf_", 0) == 0 || expr.name().rfind("audio_", 0) == 0 ||
       expr.name().rfind("video_", 0) == 0 || expr.name() == "get_video_frame_by_idx")) {
    return true;
  }
  for (const auto& child : expr.children()) {
    if (HasHeavyKernel(*child)) return true;
  }
  return false;
}

bool HasIoKernel(const Expr& expr) {
  if (expr.kind() == ExprKind::kCall &&
      (expr.name().rfind("url_", 0) == 0 || expr.name() == "file_read" ||
       expr.name() == "file_guess_mime_type" || expr.name() == "file_size")) {
    return true;
  }
  for (const auto& child : expr.children()) {
    if (HasIoKernel(*child)) return true;
  }
  return false;
}

void CollectUdfs(const Expr& expr, std::vector<const Expr*>* out) {
  if (expr.kind() == ExprKind::kUdf) out->push_back(&expr);
  for (const auto& child : expr.children()) CollectUdfs(*child, out);
}

constexpr int64_t kHeavyKernelMorselRows = 64;  // decoded images are large: few per morsel
constexpr int64_t kDefaultUdfMorselRows = 512;
// Prefix bucketing's window: a morsel holds at least this many rows, or this many batches.
constexpr int64_t kBucketingWindowRows = 512;
constexpr int64_t kBucketingWindowBatches = 16;

// Rows per call of a UDF project whose UDFs set no batch size: the smallest preferred size of its
// UDFs (large for batch functions, small for row-wise ones), cut so that an input of known size
// is spread over all `concurrency` workers (7 rows through 4 instances: calls of 2 rows).
int64_t DefaultUdfMorselRows(const LogicalPlan& plan, const std::vector<const Expr*>& udfs,
                             int32_t concurrency) {
  int64_t rows = 0;
  for (const Expr* udf : udfs) {
    const int64_t preferred = udf->udf_properties().default_batch_rows;
    if (preferred > 0) rows = rows > 0 ? std::min(rows, preferred) : preferred;
  }
  if (rows <= 0) rows = kDefaultUdfMorselRows;
  if (concurrency > 1) {
    const double input_rows = EstimateRows(*plan.inputs()[0]);
    if (input_rows > 0) {
      const auto spread = static_cast<int64_t>(std::ceil(input_rows / concurrency));
      rows = std::clamp<int64_t>(spread, 1, rows);
    }
  }
  return rows;
}

// The batch size of an into_batches that feeds `plan`'s input through row-preserving streaming
// operators (project, filter, sample), or 0: a UDF there takes those batches as they are.
int64_t IntoBatchesBelow(const LogicalPlan& plan) {
  const LogicalPlan* node = plan.inputs().empty() ? nullptr : plan.inputs()[0].get();
  while (node) {
    switch (node->kind()) {
      case LogicalKind::kIntoBatches:
        return node->partitioning().batch_size;
      case LogicalKind::kProject:
      case LogicalKind::kFilter:
        node = node->inputs()[0].get();
        break;
      case LogicalKind::kSample:
        if (node->sample().size >= 0) return 0;  // blocking: the batches end there
        node = node->inputs()[0].get();
        break;
      default:
        return 0;
    }
  }
  return 0;
}

}  // namespace

arrow::Result<PhysicalPlanPtr> TranslateToPhysical(const LogicalPlanPtr& plan,
                                                   const ExecutionConfig& config) {
  auto node = std::make_shared<PhysicalNode>();
  node->logical = plan;
  for (const auto& input : plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto child, TranslateToPhysical(input, config));
    node->inputs.push_back(std::move(child));
  }
  switch (plan->kind()) {
    case LogicalKind::kInMemorySource:
      node->kind = PhysicalKind::kInMemoryScan;
      break;
    case LogicalKind::kScan:
      node->kind = PhysicalKind::kScan;
      break;
    case LogicalKind::kFilter:
      node->kind = PhysicalKind::kFilter;
      if (HasHeavyKernel(*plan->predicate())) node->max_morsel_rows = kHeavyKernelMorselRows;
      break;
    case LogicalKind::kLimit:
      node->kind = PhysicalKind::kLimit;
      // sort(...).limit(n): a top-N keeps n rows instead of sorting (and carrying) every row.
      if (node->inputs[0]->kind == PhysicalKind::kSort && plan->limit_end() <= kTopNMaxRows) {
        node->kind = PhysicalKind::kTopN;
        node->inputs = node->inputs[0]->inputs;
      }
      break;
    case LogicalKind::kWrite:
      node->kind = PhysicalKind::kWrite;
      break;
    case LogicalKind::kSort:
      node->kind = PhysicalKind::kSort;
      break;
    case LogicalKind::kWindow:
      node->kind = PhysicalKind::kWindow;
      break;
    case LogicalKind::kAggregate:
      node->kind = PhysicalKind::kAggregate;
      break;
    case LogicalKind::kJoin:
      if (plan->join().how == JoinType::kCross) {
        node->kind = PhysicalKind::kCrossJoin;
        node->build_left = EstimateRows(*plan->inputs()[0]) < EstimateRows(*plan->inputs()[1]);
        break;
      }
      node->kind = PhysicalKind::kHashJoin;
      node->build_left = plan->join().how == JoinType::kInner &&
                         EstimateRows(*plan->inputs()[1]) > 2 * EstimateRows(*plan->inputs()[0]);
      break;
    case LogicalKind::kExplode:
      node->kind = PhysicalKind::kExplode;
      break;
    case LogicalKind::kConcat:
      node->kind = PhysicalKind::kConcat;
      break;
    case LogicalKind::kSample:
      node->kind = PhysicalKind::kSample;
      break;
    case LogicalKind::kMonotonicId:
      node->kind = PhysicalKind::kMonotonicId;
      break;
    case LogicalKind::kRepartition:
      node->kind = PhysicalKind::kRepartition;
      node->num_partitions = NumPartitions(*plan).count;
      break;
    case LogicalKind::kIntoPartitions:
      node->kind = PhysicalKind::kIntoPartitions;
      node->num_partitions = plan->partitioning().num_partitions;
      break;
    case LogicalKind::kIntoBatches:
      node->kind = PhysicalKind::kIntoBatches;
      node->min_morsel_rows = node->max_morsel_rows = plan->partitioning().batch_size;
      break;
    case LogicalKind::kProject: {
      node->kind = PhysicalKind::kProject;
      std::vector<const Expr*> udfs;
      for (const auto& expr : plan->exprs()) {
        CollectUdfs(*expr, &udfs);
        if (HasHeavyKernel(*expr)) {
          node->max_morsel_rows = kHeavyKernelMorselRows;
          node->grows_bytes = true;
        }
        if (HasIoKernel(*expr)) node->io_bound = node->grows_bytes = true;
      }
      if (!udfs.empty()) {
        node->kind = PhysicalKind::kUdfProject;
        // A UDF returning variable-width values (bytes, strings, lists, images, Python objects) may
        // return far more than it reads; fixed-width results cannot grow a row by much.
        for (const Expr* udf : udfs) node->grows_bytes |= !arrow::is_fixed_width(udf->type()->id());
        int32_t concurrency = 0;
        int64_t batch_size = 0;
        for (const Expr* udf : udfs) {
          concurrency = std::max(concurrency, udf->udf_properties().concurrency);
          batch_size = std::max(batch_size, udf->udf_properties().batch_size);
        }
        node->concurrency = concurrency > 0 ? concurrency : 1;
        node->batch_size = batch_size;
        // Without a batch size of its own, a UDF above into_batches gets those batches whole.
        const int64_t into_batches = batch_size > 0 ? 0 : IntoBatchesBelow(*plan);
        node->max_morsel_rows = batch_size > 0     ? batch_size
                                : into_batches > 0 ? into_batches
                                                   : DefaultUdfMorselRows(*plan, udfs, node->concurrency);
        node->min_morsel_rows = batch_size;
        // Prefix bucketing groups rows within a morsel: the morsel is a window of many batches.
        const bool bucketing = std::any_of(udfs.begin(), udfs.end(), [](const Expr* udf) {
          return udf->udf_properties().bucket_key_args > 0;
        });
        if (bucketing && into_batches == 0) {
          node->max_morsel_rows = std::max<int64_t>(
              kBucketingWindowRows, std::max<int64_t>(batch_size, 1) * kBucketingWindowBatches);
        }
      }
      break;
    }
  }
  return node;
}

std::string PhysicalNode::Label() const {
  switch (kind) {
    case PhysicalKind::kInMemoryScan:
      return "InMemoryScan";
    case PhysicalKind::kScan:
      return "Scan" + FileFormatName(logical->scan().format);
    case PhysicalKind::kProject:
      return logical->Label();
    case PhysicalKind::kUdfProject:
      return "UDFProject: " + logical->Label().substr(std::string("Project: ").size());
    case PhysicalKind::kFilter:
      return logical->Label();
    case PhysicalKind::kLimit:
      return logical->Label();
    case PhysicalKind::kWrite:
      return "Write" + FileFormatName(logical->write().format);
    case PhysicalKind::kSort:
      return "SortSink (blocking): " + logical->Label().substr(std::string("Sort: ").size());
    case PhysicalKind::kTopN: {
      std::string label =
          "TopN (blocking): " + logical->inputs()[0]->Label().substr(std::string("Sort: ").size()) +
          ", Limit = " + std::to_string(logical->limit());
      if (logical->offset() > 0) label += ", Offset = " + std::to_string(logical->offset());
      return label;
    }
    case PhysicalKind::kWindow:
      return "Window (blocking): " + logical->Label().substr(std::string("Window: ").size());
    case PhysicalKind::kAggregate: {
      const std::string label = logical->Label();
      const std::string what = label.substr(label.find(": ") + 2);
      if (logical->aggregate().group_by.empty()) {
        // No group keys: Arrow's scalar kernels reduce each morsel, then the partial states.
        switch (logical->aggregate().phase) {
          case AggregatePhase::kPartial:
            return "GlobalAggregate (partial phase: reduction per morsel, merged, not finished): " + what;
          case AggregatePhase::kFinal:
            return "GlobalAggregate (final phase: reduction of partial states, finish): " + what;
          case AggregatePhase::kFull:
            break;
        }
        return "GlobalAggregate (reduction per morsel, final merge): " + what;
      }
      switch (logical->aggregate().phase) {
        case AggregatePhase::kPartial:
          return "HashAggregate (partial phase: partial states per morsel, merged, not finished): " + what;
        case AggregatePhase::kFinal:
          return "HashAggregate (final phase: merge of partial states, finish): " + what;
        case AggregatePhase::kFull:
          break;
      }
      return "HashAggregate (partial per morsel, final merge): " + what;
    }
    case PhysicalKind::kHashJoin:
      return std::string(build_left
                             ? "HashJoin (build: left input, estimated smaller; right input streams): "
                             : "HashJoin (build: right input; probe streams for inner/left/semi/anti): ") +
             logical->Label().substr(std::string("Join: ").size());
    case PhysicalKind::kCrossJoin:
      return build_left ? "CrossJoin (materialized: left input, estimated smaller; right input streams)"
                        : "CrossJoin (materialized: right input; left input streams)";
    case PhysicalKind::kSample:
      if (logical->sample().size >= 0) {
        return "SampleSize (blocking, reservoir): " + std::to_string(logical->sample().size) + " rows" +
               (logical->sample().with_replacement ? ", with replacement" : "");
      }
      return logical->Label();
    case PhysicalKind::kExplode:
    case PhysicalKind::kConcat:
      return logical->Label();
    case PhysicalKind::kRepartition: {
      std::string keys;
      for (const auto& key : logical->partitioning().by) keys += (keys.empty() ? "" : ", ") + key;
      return (keys.empty() ? std::string("Repartition (random)") : "Repartition (hash by [" + keys + "])") +
             ": Num partitions = " + std::to_string(num_partitions);
    }
    case PhysicalKind::kIntoPartitions:
      // Streaming when the input's partitions are known before it runs (IntoPartitionsCuts).
      return std::string(StreamingIntoPartitionsCuts(*logical->inputs()[0], num_partitions)
                             ? "IntoPartitions (streaming)"
                             : "IntoPartitions (blocking)") +
             ": Num partitions = " + std::to_string(num_partitions);
    case PhysicalKind::kIntoBatches:
      return logical->Label();
    case PhysicalKind::kMonotonicId:
      return "MonotonicId (streaming sink, rows numbered in stream order): Column = " + logical->id_column();
  }
  return "?";
}

std::vector<std::string> PhysicalNode::Details() const {
  std::vector<std::string> out = logical->Details();
  if (kind == PhysicalKind::kUdfProject) {
    // Daft's UDF node details: the UDF expressions, the columns passed through, properties and
    // the resource request.
    std::vector<const Expr*> udfs;
    std::string passthrough, udf_exprs;
    for (const auto& expr : logical->exprs()) {
      std::vector<const Expr*> found;
      CollectUdfs(*expr, &found);
      if (found.empty() && expr->kind() == ExprKind::kColumn) {
        passthrough +=
            (passthrough.empty() ? "" : ", ") + expr->ToString().substr(4, expr->ToString().size() - 5);
      } else if (!found.empty()) {
        udf_exprs += (udf_exprs.empty() ? "" : ", ") + expr->ToString();
        udfs.insert(udfs.end(), found.begin(), found.end());
      }
    }
    out.push_back("Expr = " + udf_exprs);
    out.push_back("Passthrough Columns = [" + passthrough + "]");
    std::map<std::string, std::string> display;
    for (const Expr* udf : udfs) {
      for (const auto& [key, value] : udf->udf_properties().display) display[key] = value;
    }
    auto get = [&](const std::string& key, const std::string& fallback) {
      auto it = display.find(key);
      return it == display.end() ? fallback : it->second;
    };
    out.push_back("Properties = { batch_size = " +
                  get("batch_size", batch_size > 0 ? std::to_string(batch_size) : std::string("morsel")) +
                  ", concurrency = " + std::to_string(concurrency) + ", async = " + get("async", "false") +
                  ", use_process = " + get("use_process", "false") + ", max_retries = " +
                  get("max_retries", "0") + ", on_error = " + get("on_error", "raise") + " }");
    for (const Expr* udf : udfs) {
      const auto bucket_by = udf->udf_properties().display.find("bucket_by");
      if (udf->udf_properties().bucket_key_args > 0 && bucket_by != udf->udf_properties().display.end()) {
        out.push_back("Prefix bucketing = " + udf->name() + ": " + bucket_by->second +
                      ", within each morsel");
      }
      if (udf->udf_properties().max_items_per_row >= 0) {
        out.push_back("Generator items per row <= " +
                      std::to_string(udf->udf_properties().max_items_per_row) + " (limit pushdown)");
      }
    }
    out.push_back("Resource request = { num_cpus = " + get("num_cpus", "None") + ", num_gpus = " +
                  get("num_gpus", "0") + ", memory_bytes = " + get("memory_bytes", "None") + " }");
  }
  if (io_bound && kind == PhysicalKind::kProject) out.push_back("Runs on = I/O pool");
  if (min_morsel_rows > 0 || max_morsel_rows > 0) {
    out.push_back("Morsel rows = [" + std::to_string(min_morsel_rows) + ", " +
                  (max_morsel_rows > 0 ? std::to_string(max_morsel_rows) : std::string("any")) + "]");
  }
  return out;
}

std::string PhysicalNode::ToString(bool with_stats) const {
  std::vector<std::string> rendered;
  for (const auto& input : inputs) rendered.push_back(input->ToString(with_stats));
  auto details = Details();
  if (with_stats) details.push_back(StatsLine(EstimateStats(*logical)));
  return RenderPlanNode(Label(), details, rendered);
}

}  // namespace ketch
