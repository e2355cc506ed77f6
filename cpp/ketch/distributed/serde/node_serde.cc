// Plan nodes in plan bytes, writer and reader side by side: the fragment (header, version, the
// nodes in post-order, inputs by index) and each node kind's fields.

#include "ketch/distributed/serde/plan_serde_internal.h"

namespace ketch::serde::internal {

// --- Writing ---

arrow::Result<std::shared_ptr<arrow::Buffer>> PlanWriter::Write(const LogicalPlanPtr& plan) {
  if (!plan) return arrow::Status::Invalid("SerializePlan: no plan");
  ARROW_ASSIGN_OR_RAISE(uint32_t root, WriteNode(plan));
  auto nodes = fbb_.CreateVector(nodes_);
  fbb_.Finish(fb::CreatePlanFragment(fbb_, nodes, root));
  const size_t size = fbb_.GetSize();
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out, arrow::AllocateBuffer(kHeaderSize + size));
  uint8_t* data = out->mutable_data();
  std::memcpy(data, kMagic, 4);
  const uint32_t version = kPlanFormatVersion;
  for (int i = 0; i < 4; ++i) data[4 + i] = static_cast<uint8_t>(version >> (8 * i));
  std::memcpy(data + kHeaderSize, fbb_.GetBufferPointer(), size);
  return out;
}

arrow::Result<uint32_t> PlanWriter::WriteNode(const LogicalPlanPtr& plan) {
  auto seen = index_.find(plan.get());
  if (seen != index_.end()) return seen->second;
  std::vector<uint32_t> inputs;
  for (const auto& input : plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto i, WriteNode(input));
    inputs.push_back(i);
  }
  auto inputs_offset = fbb_.CreateVector(inputs);
  Offset<Vector<uint8_t>> schema, batches, aggregate_source_schema;
  fb::AggregatePhase aggregate_phase = fb::AggregatePhase::Full;
  Offset<Vector<int64_t>> batch_partitions;
  Offset<fb::Scan> scan;
  Offset<Vector<Offset<fb::Expr>>> exprs;
  Offset<fb::Expr> predicate;
  Offset<flatbuffers::String> root_dir, compression, prefix, suffix, strategy, id_column;
  Offset<Vector<uint8_t>> descending, nulls_first;
  Offset<Vector<Offset<flatbuffers::String>>> group_by, left_on, right_on, explode_columns, partition_by,
      write_partition_cols;
  Offset<fb::S3Config> write_s3;
  fb::JoinType how = fb::JoinType::Inner;
  fb::PlanKind kind = fb::PlanKind::InMemorySource;
  switch (plan->kind()) {
    case LogicalKind::kInMemorySource: {
      kind = fb::PlanKind::InMemorySource;
      ARROW_ASSIGN_OR_RAISE(auto schema_bytes, SchemaBytes(*plan->schema()));
      ARROW_ASSIGN_OR_RAISE(schema, Bytes(*schema_bytes));
      ARROW_ASSIGN_OR_RAISE(auto stream, StreamBytes(plan->schema(), plan->batches()));
      ARROW_ASSIGN_OR_RAISE(batches, Bytes(*stream));
      batch_partitions = fbb_.CreateVector(plan->batch_partitions());
      break;
    }
    case LogicalKind::kScan: {
      kind = fb::PlanKind::Scan;
      ARROW_ASSIGN_OR_RAISE(scan, WriteScan(plan->scan()));
      break;
    }
    case LogicalKind::kProject: {
      kind = fb::PlanKind::Project;
      ARROW_ASSIGN_OR_RAISE(exprs, WriteExprs(plan->exprs()));
      break;
    }
    case LogicalKind::kFilter: {
      kind = fb::PlanKind::Filter;
      ARROW_ASSIGN_OR_RAISE(predicate, WriteExpr(plan->predicate()));
      break;
    }
    case LogicalKind::kLimit:
      kind = fb::PlanKind::Limit;
      break;
    case LogicalKind::kWrite:
      kind = fb::PlanKind::WriteParquet;
      root_dir = fbb_.CreateString(plan->write().root_dir);
      compression = fbb_.CreateString(plan->write().compression);
      write_partition_cols = StringList(plan->write().partition_cols);
      write_s3 = WriteS3(plan->write().s3);
      break;
    case LogicalKind::kSort: {
      kind = fb::PlanKind::Sort;
      const auto& sort = plan->sort();
      ARROW_ASSIGN_OR_RAISE(exprs, WriteExprs(sort.keys));
      std::vector<uint8_t> desc(sort.descending.begin(), sort.descending.end());
      std::vector<uint8_t> nf(sort.nulls_first.begin(), sort.nulls_first.end());
      descending = fbb_.CreateVector(desc);
      nulls_first = fbb_.CreateVector(nf);
      break;
    }
    case LogicalKind::kAggregate: {
      kind = fb::PlanKind::Aggregate;
      ARROW_ASSIGN_OR_RAISE(exprs, WriteExprs(plan->aggregate().aggregations));
      group_by = StringList(plan->aggregate().group_by);
      switch (plan->aggregate().phase) {
        case AggregatePhase::kFull:
          aggregate_phase = fb::AggregatePhase::Full;
          break;
        case AggregatePhase::kPartial:
          aggregate_phase = fb::AggregatePhase::Partial;
          break;
        case AggregatePhase::kFinal:
          aggregate_phase = fb::AggregatePhase::Final;
          break;
      }
      if (plan->aggregate().source_schema) {
        ARROW_ASSIGN_OR_RAISE(auto source_bytes, SchemaBytes(*plan->aggregate().source_schema));
        ARROW_ASSIGN_OR_RAISE(aggregate_source_schema, Bytes(*source_bytes));
      }
      break;
    }
    case LogicalKind::kJoin: {
      kind = fb::PlanKind::Join;
      const auto& join = plan->join();
      left_on = StringList(join.left_on);
      right_on = StringList(join.right_on);
      prefix = fbb_.CreateString(join.prefix);
      suffix = fbb_.CreateString(join.suffix);
      if (!join.strategy.empty()) strategy = fbb_.CreateString(join.strategy);
      switch (join.how) {
        case JoinType::kInner:
          how = fb::JoinType::Inner;
          break;
        case JoinType::kLeft:
          how = fb::JoinType::Left;
          break;
        case JoinType::kRight:
          how = fb::JoinType::Right;
          break;
        case JoinType::kOuter:
          how = fb::JoinType::Outer;
          break;
        case JoinType::kSemi:
          how = fb::JoinType::Semi;
          break;
        case JoinType::kAnti:
          how = fb::JoinType::Anti;
          break;
        case JoinType::kCross:
          how = fb::JoinType::Cross;
          break;
      }
      break;
    }
    case LogicalKind::kExplode:
      kind = fb::PlanKind::Explode;
      explode_columns = StringList(plan->explode_columns());
      break;
    case LogicalKind::kConcat:
      kind = fb::PlanKind::Concat;
      break;
    case LogicalKind::kSample:
      kind = fb::PlanKind::Sample;
      break;
    case LogicalKind::kRepartition:
      kind = fb::PlanKind::Repartition;
      partition_by = StringList(plan->partitioning().by);
      break;
    case LogicalKind::kIntoPartitions:
      kind = fb::PlanKind::IntoPartitions;
      break;
    case LogicalKind::kIntoBatches:
      kind = fb::PlanKind::IntoBatches;
      break;
    case LogicalKind::kMonotonicId:
      kind = fb::PlanKind::MonotonicId;
      id_column = fbb_.CreateString(plan->id_column());
      break;
    case LogicalKind::kWindow:
      // The window calls carry their window (keys, frame) in their options.
      kind = fb::PlanKind::Window;
      ARROW_ASSIGN_OR_RAISE(exprs, WriteExprs(plan->exprs()));
      break;
  }
  fb::PlanNodeBuilder b(fbb_);
  b.add_kind(kind);
  b.add_inputs(inputs_offset);
  if (!schema.IsNull()) b.add_schema(schema);
  if (!batches.IsNull()) b.add_batches(batches);
  if (!batch_partitions.IsNull()) b.add_batch_partitions(batch_partitions);
  if (plan->kind() == LogicalKind::kInMemorySource) b.add_first_row(plan->first_row());
  if (!scan.IsNull()) b.add_scan(scan);
  if (!exprs.IsNull()) b.add_exprs(exprs);
  if (!predicate.IsNull()) b.add_predicate(predicate);
  b.add_limit(plan->limit());
  b.add_limit_offset(plan->offset());
  if (!root_dir.IsNull()) b.add_write_root_dir(root_dir);
  if (!compression.IsNull()) b.add_write_compression(compression);
  if (!descending.IsNull()) b.add_sort_descending(descending);
  if (!nulls_first.IsNull()) b.add_sort_nulls_first(nulls_first);
  if (!group_by.IsNull()) b.add_group_by(group_by);
  if (!left_on.IsNull()) b.add_join_left_on(left_on);
  if (!right_on.IsNull()) b.add_join_right_on(right_on);
  b.add_join_how(how);
  if (!prefix.IsNull()) b.add_join_prefix(prefix);
  if (!suffix.IsNull()) b.add_join_suffix(suffix);
  if (!strategy.IsNull()) b.add_join_strategy(strategy);
  if (!explode_columns.IsNull()) b.add_explode_columns(explode_columns);
  if (!id_column.IsNull()) b.add_id_column(id_column);
  b.add_sample_fraction(plan->sample().fraction);
  b.add_sample_with_replacement(plan->sample().with_replacement);
  b.add_sample_seed(plan->sample().seed);
  b.add_sample_size(plan->sample().size);
  b.add_num_partitions(plan->partitioning().num_partitions);
  if (!partition_by.IsNull()) b.add_partition_by(partition_by);
  b.add_batch_size(plan->partitioning().batch_size);
  b.add_aggregate_phase(aggregate_phase);
  if (!aggregate_source_schema.IsNull()) b.add_aggregate_source_schema(aggregate_source_schema);
  if (plan->kind() == LogicalKind::kWrite) b.add_write_format(ToFb(plan->write().format));
  if (!write_partition_cols.IsNull()) b.add_write_partition_cols(write_partition_cols);
  if (!write_s3.IsNull()) b.add_write_s3(write_s3);
  nodes_.push_back(b.Finish());
  const auto index = static_cast<uint32_t>(nodes_.size() - 1);
  index_[plan.get()] = index;
  return index;
}

// --- Reading ---

arrow::Result<LogicalPlanPtr> PlanReader::Read(const fb::PlanFragment& fragment) {
  const auto* nodes = fragment.nodes();
  if (nodes == nullptr || nodes->size() == 0) return Corrupt("no plan nodes");
  if (fragment.root() >= nodes->size()) return Corrupt("the root node index is out of range");
  for (flatbuffers::uoffset_t i = 0; i < nodes->size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto node, ReadNode(*nodes->Get(i), i));
    plans_.push_back(std::move(node));
  }
  return plans_[fragment.root()];
}

arrow::Result<LogicalPlanPtr> PlanReader::ReadNode(const fb::PlanNode& n, flatbuffers::uoffset_t self) {
  std::vector<LogicalPlanPtr> inputs;
  if (n.inputs()) {
    for (uint32_t i : *n.inputs()) {
      if (i >= self) return Corrupt("a plan node's input is not an earlier node");
      inputs.push_back(plans_[i]);
    }
  }
  auto expect_inputs = [&](size_t count) -> arrow::Status {
    if (inputs.size() != count) {
      return Corrupt("a " + std::string(fb::EnumNamePlanKind(n.kind())) + " node has " +
                     std::to_string(inputs.size()) + " inputs, expected " + std::to_string(count));
    }
    return arrow::Status::OK();
  };
  switch (n.kind()) {
    case fb::PlanKind::InMemorySource: {
      ARROW_RETURN_NOT_OK(expect_inputs(0));
      ARROW_ASSIGN_OR_RAISE(auto schema, ReadSchemaBytes(n.schema(), "an in-memory source's schema"));
      ARROW_ASSIGN_OR_RAISE(auto stream, ReadStreamBytes(n.batches(), "an in-memory source's data"));
      if (!stream.schema->Equals(*schema, /*check_metadata=*/false)) {
        return Corrupt("an in-memory source's data does not match its schema");
      }
      std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
      for (auto& batch : stream.batches) {
        batches.push_back(arrow::RecordBatch::Make(schema, batch->num_rows(), batch->columns()));
      }
      return LogicalPlan::InMemory(schema, std::move(batches), Scalars(n.batch_partitions()), n.first_row());
    }
    case fb::PlanKind::Scan: {
      ARROW_RETURN_NOT_OK(expect_inputs(0));
      ARROW_ASSIGN_OR_RAISE(auto info, ReadScan(n.scan()));
      return LogicalPlan::Scan(std::move(info));
    }
    case fb::PlanKind::Project: {
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      ARROW_ASSIGN_OR_RAISE(auto exprs, ReadExprs(n.exprs()));
      return LogicalPlan::Project(inputs[0], std::move(exprs));
    }
    case fb::PlanKind::Filter: {
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      ARROW_ASSIGN_OR_RAISE(auto predicate, ReadExpr(n.predicate()));
      return LogicalPlan::Filter(inputs[0], std::move(predicate));
    }
    case fb::PlanKind::Limit:
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      return LogicalPlan::Limit(inputs[0], n.limit(), n.limit_offset());
    case fb::PlanKind::WriteParquet:
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      {
        WriteInfo info;
        info.root_dir = Str(n.write_root_dir());
        info.compression = Str(n.write_compression());
        ARROW_ASSIGN_OR_RAISE(info.format, ReadFormat(n.write_format()));
        if (const auto* cols = n.write_partition_cols()) {
          for (const auto* c : *cols) info.partition_cols.push_back(c->str());
        }
        info.s3 = ReadS3(n.write_s3());
        return LogicalPlan::Write(inputs[0], std::move(info));
      }
    case fb::PlanKind::Sort: {
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      SortSpec spec;
      ARROW_ASSIGN_OR_RAISE(spec.keys, ReadExprs(n.exprs()));
      for (uint8_t d : Scalars(n.sort_descending())) spec.descending.push_back(d != 0);
      for (uint8_t f : Scalars(n.sort_nulls_first())) spec.nulls_first.push_back(f != 0);
      return LogicalPlan::Sort(inputs[0], std::move(spec));
    }
    case fb::PlanKind::Aggregate: {
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      AggregateSpec spec;
      spec.group_by = Strings(n.group_by());
      ARROW_ASSIGN_OR_RAISE(spec.aggregations, ReadExprs(n.exprs()));
      switch (n.aggregate_phase()) {
        case fb::AggregatePhase::Full:
          spec.phase = AggregatePhase::kFull;
          break;
        case fb::AggregatePhase::Partial:
          spec.phase = AggregatePhase::kPartial;
          break;
        case fb::AggregatePhase::Final:
          spec.phase = AggregatePhase::kFinal;
          break;
        default:
          return arrow::Status::Invalid("plan bytes: unknown aggregate phase ",
                                        static_cast<int>(n.aggregate_phase()));
      }
      if (n.aggregate_source_schema()) {
        ARROW_ASSIGN_OR_RAISE(spec.source_schema, ReadSchemaBytes(n.aggregate_source_schema(),
                                                                  "a final aggregate's source schema"));
      }
      return LogicalPlan::Aggregate(inputs[0], std::move(spec));
    }
    case fb::PlanKind::Join: {
      ARROW_RETURN_NOT_OK(expect_inputs(2));
      JoinSpec spec;
      spec.left_on = Strings(n.join_left_on());
      spec.right_on = Strings(n.join_right_on());
      switch (n.join_how()) {
        case fb::JoinType::Inner:
          spec.how = JoinType::kInner;
          break;
        case fb::JoinType::Left:
          spec.how = JoinType::kLeft;
          break;
        case fb::JoinType::Right:
          spec.how = JoinType::kRight;
          break;
        case fb::JoinType::Outer:
          spec.how = JoinType::kOuter;
          break;
        case fb::JoinType::Semi:
          spec.how = JoinType::kSemi;
          break;
        case fb::JoinType::Anti:
          spec.how = JoinType::kAnti;
          break;
        case fb::JoinType::Cross:
          spec.how = JoinType::kCross;
          break;
        default:
          return Corrupt("unknown join type " + std::to_string(static_cast<int>(n.join_how())));
      }
      spec.prefix = Str(n.join_prefix());
      spec.suffix = Str(n.join_suffix());
      spec.strategy = Str(n.join_strategy());
      return LogicalPlan::Join(inputs[0], inputs[1], std::move(spec));
    }
    case fb::PlanKind::Explode:
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      return LogicalPlan::Explode(inputs[0], Strings(n.explode_columns()));
    case fb::PlanKind::Concat:
      ARROW_RETURN_NOT_OK(expect_inputs(2));
      return LogicalPlan::Concat(inputs[0], inputs[1]);
    case fb::PlanKind::Sample:
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      return LogicalPlan::Sample(inputs[0], SampleSpec{n.sample_fraction(), n.sample_with_replacement(),
                                                       n.sample_seed(), n.sample_size()});
    case fb::PlanKind::Repartition:
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      return LogicalPlan::Repartition(
          inputs[0], PartitionSpec{n.num_partitions(), Strings(n.partition_by()), n.batch_size()});
    case fb::PlanKind::IntoPartitions:
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      return LogicalPlan::IntoPartitions(inputs[0], n.num_partitions());
    case fb::PlanKind::IntoBatches:
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      return LogicalPlan::IntoBatches(inputs[0], n.batch_size());
    case fb::PlanKind::MonotonicId:
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      if (n.id_column() == nullptr) return Corrupt("MonotonicId node without its column");
      return LogicalPlan::MonotonicId(inputs[0], n.id_column()->str());
    case fb::PlanKind::Window: {
      ARROW_RETURN_NOT_OK(expect_inputs(1));
      ARROW_ASSIGN_OR_RAISE(auto window_exprs, ReadExprs(n.exprs()));
      return LogicalPlan::Window(inputs[0], std::move(window_exprs));
    }
  }
  return Corrupt("unknown plan node kind " + std::to_string(static_cast<int>(n.kind())));
}

}  // namespace ketch::serde::internal
