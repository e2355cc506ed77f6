#include "ketch/expr/expr.h"

#include <arrow/compute/api.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <sstream>

#include "ketch/expr/float_int_cast.h"
#include "ketch/expr/float_text_cast.h"
#include "ketch/expr/function_registry.h"
#include "ketch/expr/lambda_call.h"
#include "ketch/expr/storage_cast.h"
#include "ketch/expr/temporal_text_cast.h"
#include "ketch/expr/tensor_cast.h"
#include "ketch/expr/text_parse_cast.h"
#include "ketch/expr/uuid_cast.h"
#include "ketch/io/redact.h"
#include "ketch/types/large_offsets.h"

namespace ketch {
namespace {

const std::map<std::string, std::string>& InfixOperators() {
  static const std::map<std::string, std::string> ops = {{"add", "+"},
                                                         {"add_checked", "+"},
                                                         {"subtract_checked", "-"},
                                                         {"multiply_checked", "*"},
                                                         {"subtract", "-"},
                                                         {"multiply", "*"},
                                                         {"divide", "/"},
                                                         {"equal", "=="},
                                                         {"not_equal", "!="},
                                                         {"less", "<"},
                                                         {"less_equal", "<="},
                                                         {"greater", ">"},
                                                         {"greater_equal", ">="},
                                                         {"and_kleene", "&"},
                                                         {"or_kleene", "|"}};
  return ops;
}

std::string LiteralToString(const arrow::Scalar& scalar) {
  if (!scalar.is_valid) return "lit(null)";
  if (scalar.type->id() == arrow::Type::STRING || scalar.type->id() == arrow::Type::LARGE_STRING) {
    return "lit(\"" + io::Redact(scalar.ToString()) + "\")";  // URLs may carry credentials
  }
  return "lit(" + scalar.ToString() + ")";
}

}  // namespace

ExprPtr Expr::Column(std::string name) {
  auto e = std::make_shared<Expr>();
  e->kind_ = ExprKind::kColumn;
  e->name_ = std::move(name);
  return e;
}

ExprPtr Expr::Literal(std::shared_ptr<arrow::Scalar> value) {
  auto e = std::make_shared<Expr>();
  e->kind_ = ExprKind::kLiteral;
  e->literal_ = std::move(value);
  return e;
}

ExprPtr Expr::Alias(ExprPtr input, std::string name) {
  auto e = std::make_shared<Expr>();
  e->kind_ = ExprKind::kAlias;
  e->name_ = std::move(name);
  e->SetChildren({std::move(input)});
  return e;
}

ExprPtr Expr::Cast(ExprPtr input, std::shared_ptr<arrow::DataType> type) {
  auto e = std::make_shared<Expr>();
  e->kind_ = ExprKind::kCast;
  e->type_ = std::move(type);
  e->SetChildren({std::move(input)});
  return e;
}

ExprPtr Expr::Call(std::string function, std::vector<ExprPtr> args, FunctionOptions options) {
  auto e = std::make_shared<Expr>();
  e->kind_ = ExprKind::kCall;
  e->name_ = std::move(function);
  e->SetChildren(std::move(args));
  e->options_ = std::move(options);
  return e;
}

ExprPtr Expr::Udf(std::shared_ptr<BatchUdf> udf, std::vector<ExprPtr> args,
                  std::shared_ptr<arrow::DataType> return_type, UdfProperties properties) {
  auto e = std::make_shared<Expr>();
  e->kind_ = ExprKind::kUdf;
  e->name_ = udf->name();
  e->udf_ = std::move(udf);
  e->SetChildren(std::move(args));
  e->type_ = std::move(return_type);
  e->udf_properties_ = properties;
  return e;
}

std::string Expr::ToString() const {
  switch (kind_) {
    case ExprKind::kColumn:
      return "col(" + name_ + ")";
    case ExprKind::kLiteral:
      return LiteralToString(*literal_);
    case ExprKind::kAlias:
      return children_[0]->ToString() + " as " + name_;
    case ExprKind::kCast:
      return "cast(" + children_[0]->ToString() + " as " + type_->ToString() + ")";
    case ExprKind::kCall: {
      auto op = InfixOperators().find(name_);
      if (op != InfixOperators().end() && children_.size() == 2) {
        return "(" + children_[0]->ToString() + " " + op->second + " " + children_[1]->ToString() + ")";
      }
      if (name_ == "invert" && children_.size() == 1) return "not(" + children_[0]->ToString() + ")";
      // per_row_option(s, p; function=utf8_contains, label=contains, ...) reads as contains(s, p).
      const bool per_row = name_ == "per_row_option" && options_.count("label") && options_.at("label") &&
                           options_.at("label")->is_valid;
      std::ostringstream out;
      out << (per_row ? options_.at("label")->ToString() : name_) << "(";
      for (size_t i = 0; i < children_.size(); ++i) out << (i ? ", " : "") << children_[i]->ToString();
      for (const auto& [key, value] : options_) {
        if (per_row && (key == "function" || key == "option" || key == "label" || key == "argument"))
          continue;
        // Credentials (s3_access_key=...) never reach explain output, repr or error messages.
        out << ", " << key << "="
            << (!value || !value->is_valid ? "None"
                : io::IsSecretName(key)    ? "***"
                                           : io::Redact(value->ToString()));
      }
      out << ")";
      return out.str();
    }
    case ExprKind::kUdf: {
      std::ostringstream out;
      out << name_ << "(";
      for (size_t i = 0; i < children_.size(); ++i) out << (i ? ", " : "") << children_[i]->ToString();
      out << ")";
      return out.str();
    }
  }
  return "?";
}

std::string Expr::OutputName() const {
  if (kind_ == ExprKind::kColumn || kind_ == ExprKind::kAlias) return name_;
  if (kind_ == ExprKind::kLiteral || children_.empty()) return "literal";
  // Daft's rule: an expression is named as its first input (`lit(1) + col("a")` is "literal"),
  // a conditional as its value when true (`if_else(c, then, else)`, `when(c, then)...`).
  if (kind_ == ExprKind::kCall && name_ == "if_else" && children_.size() == 3)
    return children_[1]->OutputName();
  return children_[0]->OutputName();
}

void Expr::CollectColumns(std::set<std::string>* out) const {
  if (kind_ == ExprKind::kColumn) out->insert(name_);
  if (IsLambdaCall(*this)) {
    children_[0]->CollectColumns(out);  // the bodies read element(), not the batch
    return;
  }
  for (const auto& child : children_) child->CollectColumns(out);
}

bool IsLambdaCall(const Expr& expr) {
  return expr.kind() == ExprKind::kCall && expr.children().size() >= 2 &&
         (expr.name() == "list_map" || expr.name() == "list_filter");
}

bool Expr::HasUdf() const {
  if (kind_ == ExprKind::kUdf) return true;
  for (const auto& child : children_) {
    if (child->HasUdf()) return true;
  }
  return false;
}

ExprPtr Expr::WithChildren(std::vector<ExprPtr> children) const {
  auto e = std::make_shared<Expr>(*this);
  e->SetChildren(std::move(children));
  return e;
}

void Expr::SetChildren(std::vector<ExprPtr> children) {
  children_ = std::move(children);
  depth_ = 1;
  for (const auto& child : children_) depth_ = std::max(depth_, child->depth() + 1);
}

arrow::Result<std::shared_ptr<arrow::Field>> ResolveField(const Expr& expr, const arrow::Schema& schema) {
  switch (expr.kind()) {
    case ExprKind::kColumn: {
      auto field = schema.GetFieldByName(expr.name());
      if (!field) {
        std::ostringstream names;
        for (int i = 0; i < schema.num_fields(); ++i) names << (i ? ", " : "") << schema.field(i)->name();
        return arrow::Status::KeyError("column '", expr.name(), "' not found; available columns: [",
                                       names.str(), "]");
      }
      return field;
    }
    case ExprKind::kLiteral:
      return arrow::field("literal", expr.literal()->type);
    case ExprKind::kAlias: {
      ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*expr.children()[0], schema));
      return field->WithName(expr.name());
    }
    case ExprKind::kCast: {
      ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*expr.children()[0], schema));
      // Extension types (images, tensors, files) only re-label a storage they share; Arrow's
      // kernels would also reinterpret a FixedShapeImage as a tensor of another shape.
      const bool extension =
          field->type()->id() == arrow::Type::EXTENSION || expr.type()->id() == arrow::Type::EXTENSION;
      if (!field->type()->Equals(*expr.type()) && !CanRewrapStorage(*field->type(), *expr.type()) &&
          !IsUuidCast(*field->type(), *expr.type()) && !IsTensorLayoutCast(*field->type(), *expr.type()) &&
          (extension || !arrow::compute::CanCast(*field->type(), *expr.type()))) {
        return arrow::Status::TypeError("cannot cast ", expr.children()[0]->ToString(), " of type ",
                                        TypeText(*field->type()), " to ", TypeText(*expr.type()));
      }
      return arrow::field(expr.OutputName(), expr.type());
    }
    case ExprKind::kCall: {
      std::vector<std::shared_ptr<arrow::DataType>> types;
      const bool lambda = IsLambdaCall(expr);
      for (const auto& child : expr.children()) {
        if (lambda && !types.empty()) {
          types.push_back(nullptr);  // a body over element(): the function resolves it
          continue;
        }
        ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*child, schema));
        types.push_back(field->type());
      }
      ARROW_ASSIGN_OR_RAISE(auto function, FunctionRegistry::Global()->Get(expr.name()));
      ARROW_ASSIGN_OR_RAISE(auto type, function->ResolveType(types, expr.children(), expr.options()));
      return arrow::field(expr.OutputName(), type);
    }
    case ExprKind::kUdf: {
      for (const auto& child : expr.children()) {
        ARROW_RETURN_NOT_OK(ResolveField(*child, schema).status());
      }
      return arrow::field(expr.OutputName(), expr.type());
    }
  }
  return arrow::Status::NotImplemented("unknown expression kind");
}

arrow::Result<std::shared_ptr<arrow::Array>> GetColumn(const arrow::RecordBatch& batch,
                                                       const std::string& name) {
  auto column = batch.GetColumnByName(name);
  if (!column) {
    return arrow::Status::KeyError("column '", name, "' not found in ", batch.schema()->ToString());
  }
  return column;
}

namespace {

arrow::Result<arrow::Datum> EvaluateDatum(const Expr& expr, const arrow::RecordBatch& batch,
                                          const EvalContext& ctx);

// The bytes the arrays' buffers span, in GiB ("2.25").
std::string Gib(const arrow::ArrayVector& arrays) {
  int64_t bytes = 0;
  for (const auto& array : arrays) bytes += arrow::util::TotalBufferSize(*array->data());
  std::ostringstream out;
  out.precision(2);
  out << std::fixed << static_cast<double>(bytes) / (1LL << 30);
  return out.str();
}

// A result in 64-bit offsets (large_binary...) that its 32-bit-offset return type cannot hold.
arrow::Status TooLargeForOffsets(const Expr& expr, const arrow::Array& out, int64_t rows,
                                 const arrow::Status& cause) {
  return arrow::Status::Invalid(
      "UDF '", expr.name(), "' returned ", Gib({arrow::MakeArray(out.data())}), " GiB in one call of ", rows,
      " rows, more than its return_dtype ", expr.type()->ToString(),
      " holds in one array (32-bit offsets: 2 GiB); declare the 64-bit-offset type (",
      WithLargeOffsets(expr.type())->ToString(),
      ", e.g. DataType.binary() / DataType.string() / DataType.list(...)) or a smaller "
      "batch_size: ",
      cause.message());
}

// Prefix bucketing: a stable permutation (uint64 row positions) grouping the rows by the first
// `key_args` arguments, equal keys adjacent and in their original order (Arrow's SortIndices is
// stable; nulls last).
arrow::Result<std::shared_ptr<arrow::Array>> BucketOrder(const arrow::ArrayVector& args, int32_t key_args) {
  const int64_t n = args.empty() ? 0 : args[0]->length();
  arrow::FieldVector fields;
  arrow::ArrayVector keys;
  std::vector<arrow::compute::SortKey> sort_keys;
  for (int32_t i = 0; i < key_args && i < static_cast<int32_t>(args.size()); ++i) {
    fields.push_back(arrow::field("k" + std::to_string(i), args[i]->type()));
    keys.push_back(args[i]);
    sort_keys.emplace_back(arrow::FieldRef(fields.back()->name()));
  }
  auto table = arrow::RecordBatch::Make(arrow::schema(fields), n, keys);
  ARROW_ASSIGN_OR_RAISE(
      auto order, arrow::compute::SortIndices(arrow::Datum(table), arrow::compute::SortOptions(sort_keys)));
  return order;
}

// The calls' outputs (in bucketed order) back in the morsel's order: output row order[i] is the
// bucketed row i.
arrow::Result<std::shared_ptr<arrow::Array>> RestoreOrder(const arrow::ArrayVector& outputs,
                                                          const arrow::Array& order) {
  std::shared_ptr<arrow::Array> bucketed = outputs[0];
  if (outputs.size() > 1) {
    ARROW_ASSIGN_OR_RAISE(bucketed, arrow::Concatenate(outputs));
  }
  ARROW_ASSIGN_OR_RAISE(auto inverse, arrow::compute::SortIndices(order));
  ARROW_ASSIGN_OR_RAISE(auto restored, arrow::compute::Take(bucketed, inverse));
  return restored.make_array();
}

arrow::Result<std::shared_ptr<arrow::Array>> CallUdf(const Expr& expr, const arrow::RecordBatch& batch,
                                                     const EvalContext& ctx) {
  std::vector<std::shared_ptr<arrow::Array>> args;
  for (const auto& child : expr.children()) {
    ARROW_ASSIGN_OR_RAISE(auto datum, EvaluateDatum(*child, batch, ctx));
    ARROW_ASSIGN_OR_RAISE(auto array, ToArray(datum, batch.num_rows()));
    args.push_back(std::move(array));
  }
  const int64_t n = batch.num_rows();
  if (n == 0) return arrow::MakeEmptyArray(expr.type());
  const int64_t step = expr.udf_properties().batch_size > 0 ? expr.udf_properties().batch_size : n;
  // Prefix bucketing: the calls see the rows grouped by their key arguments (`order`, a stable
  // permutation); the outputs are put back in the morsel's order at the end.
  std::shared_ptr<arrow::Array> order;
  if (expr.udf_properties().bucket_key_args > 0 && n > 1) {
    // Keys Arrow cannot order (structs, lists, tensors) leave the rows as they came.
    auto bucket_order = BucketOrder(args, expr.udf_properties().bucket_key_args);
    if (bucket_order.ok()) order = *std::move(bucket_order);
    if (order) {
      for (auto& arg : args) {
        ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(arg, order));
        arg = taken.make_array();
      }
    }
  }
  const auto* positions = order ? order->data()->GetValues<uint64_t>(1) : nullptr;
  arrow::ArrayVector outputs;
  for (int64_t start = 0; start < n; start += step) {
    const int64_t len = std::min(step, n - start);
    std::vector<std::shared_ptr<arrow::Array>> slice;
    for (const auto& arg : args) slice.push_back(arg->Slice(start, len));
    auto called =
        expr.udf()->Call(slice, len, UdfCall{ctx.cancelled, expr.udf_properties().max_items_per_row});
    if (!called.ok()) {
      // Name the source rows of the failing call (after filters and re-chunking they are not the
      // morsel's position; after bucketing, the span of the call's rows).
      int64_t first = ctx.SourceRow(start), last = ctx.SourceRow(start + len - 1);
      if (positions != nullptr) {
        first = last = ctx.SourceRow(static_cast<int64_t>(positions[start]));
        for (int64_t i = start; i < start + len; ++i) {
          const int64_t row = ctx.SourceRow(static_cast<int64_t>(positions[i]));
          first = std::min(first, row);
          last = std::max(last, row);
        }
      }
      return called.status().WithMessage(called.status().message(), " (call on source rows ", first,
                                         first == last ? "" : "..", first == last ? "" : std::to_string(last),
                                         ")");
    }
    auto out = *std::move(called);
    if (out->length() != len) {
      return arrow::Status::Invalid("UDF '", expr.name(), "' returned ", out->length(),
                                    " values for a batch of ", len, " rows");
    }
    if (!out->type()->Equals(*expr.type())) {
      auto cast = arrow::compute::Cast(*out, expr.type());
      if (!cast.ok() && HasSmallOffsets(expr.type()) && !HasSmallOffsets(out->type())) {
        return TooLargeForOffsets(expr, *out, len, cast.status());
      }
      if (!cast.ok()) {
        return arrow::Status::TypeError("UDF '", expr.name(), "' returned ", out->type()->ToString(),
                                        " which cannot be cast to its return_dtype ", expr.type()->ToString(),
                                        ": ", cast.status().message());
      }
      out = *cast;
    }
    outputs.push_back(std::move(out));
  }
  if (order) return RestoreOrder(outputs, *order);
  if (outputs.size() == 1) return outputs[0];
  auto combined = arrow::Concatenate(outputs);
  if (!combined.ok() && HasSmallOffsets(expr.type())) {
    // Each call fit the 32-bit-offset return type; the morsel's calls together do not.
    return arrow::Status::Invalid(
        "UDF '", expr.name(), "' returned ", Gib(outputs), " GiB for a morsel of ", n,
        " rows, more than its return_dtype ", expr.type()->ToString(),
        " holds in one array (32-bit offsets: 2 GiB); declare the 64-bit-offset type (",
        WithLargeOffsets(expr.type())->ToString(),
        ", e.g. DataType.binary() / DataType.string() / DataType.list(...)): ", combined.status().message());
  }
  return combined;
}

arrow::Result<arrow::Datum> EvaluateDatum(const Expr& expr, const arrow::RecordBatch& batch,
                                          const EvalContext& ctx) {
  switch (expr.kind()) {
    case ExprKind::kColumn: {
      ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(batch, expr.name()));
      return arrow::Datum(column);
    }
    case ExprKind::kLiteral:
      return arrow::Datum(expr.literal());
    case ExprKind::kAlias:
      return EvaluateDatum(*expr.children()[0], batch, ctx);
    case ExprKind::kCast: {
      ARROW_ASSIGN_OR_RAISE(auto input, EvaluateDatum(*expr.children()[0], batch, ctx));
      if (input.type()->Equals(*expr.type())) return input;
      if (IsUuidCast(*input.type(), *expr.type())) {
        auto cast = CastUuid(input, expr.type(), batch.num_rows());
        if (!cast.ok()) {
          return cast.status().WithMessage("cast of ", expr.children()[0]->ToString(), " from ",
                                           input.type()->ToString(), " to ", expr.type()->ToString(),
                                           " failed in the morsel starting at source row ", ctx.SourceRow(0),
                                           ": ", cast.status().message());
        }
        return cast;
      }
      if (IsFloatTextCast(*input.type(), *expr.type())) return CastFloatToText(input, expr.type());
      if (IsTemporalTextCast(*input.type(), *expr.type())) return CastTemporalToText(input, expr.type());
      if (IsTensorLayoutCast(*input.type(), *expr.type())) {
        auto cast =
            CastTensorLayout(input, expr.type(), ctx.num_rows, [&](int64_t i) { return ctx.SourceRow(i); });
        if (!cast.ok()) {
          return cast.status().WithMessage("cast of ", expr.children()[0]->ToString(),
                                           " failed: ", cast.status().message());
        }
        return cast;
      }
      if (CanRewrapStorage(*input.type(), *expr.type()))
        return RewrapStorage(input, expr.type(), ctx.num_rows);
      auto options = arrow::compute::CastOptions::Safe(expr.type());
      // Integers beyond 2**53 become the nearest float, as in pandas and Daft.
      if (arrow::is_integer(input.type()->id()) && arrow::is_floating(expr.type()->id())) {
        options.allow_float_truncate = true;
      }
      // Daft's casts truncate: float -> int drops the fraction (1.9 -> 1, -1.9 -> -1), and a
      // timestamp cast to a coarser unit drops the sub-unit part. Overflow still fails.
      // NaN, infinities and integer parts out of the target's range become null first (Daft).
      if (IsFloatToIntegerCast(*input.type(), *expr.type())) {
        options.allow_float_truncate = true;
        ARROW_ASSIGN_OR_RAISE(input, NullUnrepresentableFloats(input, *expr.type()));
      }
      if (input.type()->id() == arrow::Type::TIMESTAMP) options.allow_time_truncate = true;
      auto cast = arrow::compute::Cast(input, options);
      if (!cast.ok() && input.is_array() && input.array()->offset > 0 && HasSmallOffsets(expr.type())) {
        // A narrowing cast (large_binary → binary) checks absolute offsets: a slice of an array
        // over 2 GiB (a re-chunked UDF result) fails even when its own values fit. Copy it to the
        // start of new buffers and cast again.
        ARROW_ASSIGN_OR_RAISE(auto compact, Compact(input.make_array()));
        cast = arrow::compute::Cast(compact, options);
      }
      // Text that does not parse becomes null, as in Daft (numbers and dates trimmed first).
      if (!cast.ok() && IsTextParseCast(*input.type(), *expr.type())) {
        cast = CastTextLeniently(input, expr.type(), options);
      }
      if (!cast.ok()) {
        return cast.status().WithMessage("cast of ", expr.children()[0]->ToString(), " from ",
                                         input.type()->ToString(), " to ", expr.type()->ToString(),
                                         " failed in the morsel starting at source row ", ctx.SourceRow(0),
                                         ": ", cast.status().message());
      }
      return cast;
    }
    case ExprKind::kCall: {
      std::vector<arrow::Datum> args;
      const bool lambda = IsLambdaCall(expr);
      for (const auto& child : expr.children()) {
        if (lambda && !args.empty()) break;  // bodies are evaluated by the function
        ARROW_ASSIGN_OR_RAISE(auto arg, EvaluateDatum(*child, batch, ctx));
        args.push_back(std::move(arg));
      }
      ARROW_ASSIGN_OR_RAISE(auto function, FunctionRegistry::Global()->Get(expr.name()));
      EvalContext call_ctx = ctx;
      call_ctx.num_rows = batch.num_rows();
      arrow::Result<arrow::Datum> result;
      if (lambda) {
        const auto* lambda_function = dynamic_cast<const LambdaFunction*>(function.get());
        if (!lambda_function) return arrow::Status::Invalid(expr.name(), " is not a lambda function");
        result = lambda_function->ExecuteLambda(args, expr.children(), expr.options(), call_ctx);
      } else {
        result = function->Execute(args, expr.options(), call_ctx);
      }
      // Name the failing call itself ("... overflow (in col(a) + lit(1))"); a child's failure
      // returned above and already names its own call. The multimodal kernels (url_*, image_*,
      // file_*) name their function, row and file or URL themselves, and their options hold
      // locations: their messages stay as they are, ending with the cause.
      const std::string& fn = expr.name();
      const bool names_itself =
          fn.rfind("url_", 0) == 0 || fn.rfind("image_", 0) == 0 || fn.rfind("file_", 0) == 0;
      if (!result.ok() && !names_itself) {
        return result.status().WithMessage(result.status().message(), " (in ", expr.ToString(), ")");
      }
      return result;
    }
    case ExprKind::kUdf: {
      ARROW_ASSIGN_OR_RAISE(auto out, CallUdf(expr, batch, ctx));
      return arrow::Datum(out);
    }
  }
  return arrow::Status::NotImplemented("unknown expression kind");
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Array>> Evaluate(const Expr& expr, const arrow::RecordBatch& batch,
                                                      const EvalContext& ctx) {
  ARROW_ASSIGN_OR_RAISE(auto datum, EvaluateDatum(expr, batch, ctx));
  return ToArray(datum, batch.num_rows());
}

}  // namespace ketch
