// Expressions in plan bytes, writer and reader side by side: each expression kind as its FlatBuffers
// table (literals and types as Arrow IPC bytes, UDFs as the payload the caller's writer makes).

#include "ketch/distributed/serde/plan_serde_internal.h"

namespace ketch::serde::internal {

// --- Writing ---

// Embedded bytes: counted against the format's size limit before they are copied in.
arrow::Result<Offset<Vector<uint8_t>>> PlanWriter::Bytes(const arrow::Buffer& buffer) {
  embedded_bytes_ += buffer.size();
  if (embedded_bytes_ > kMaxPlanBytes) {
    return arrow::Status::CapacityError("plan serialization: the plan holds more than ", kMaxPlanBytes,
                                        " bytes of embedded data (in-memory sources, literals), over the "
                                        "format's 2 GiB limit; write the data to files and read those");
  }
  return fbb_.CreateVector(buffer.data(), static_cast<size_t>(buffer.size()));
}

arrow::Result<Offset<Vector<uint8_t>>> PlanWriter::Bytes(const std::string& bytes) {
  return Bytes(
      arrow::Buffer(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size())));
}

Offset<Vector<Offset<flatbuffers::String>>> PlanWriter::StringList(const std::vector<std::string>& v) {
  return fbb_.CreateVectorOfStrings(v);
}

arrow::Result<Offset<fb::Expr>> PlanWriter::WriteExpr(const ExprPtr& expr) {
  if (!expr) return arrow::Status::Invalid("plan serialization: missing expression");
  std::vector<Offset<fb::Expr>> children;
  for (const auto& child : expr->children()) {
    ARROW_ASSIGN_OR_RAISE(auto c, WriteExpr(child));
    children.push_back(c);
  }
  auto name = fbb_.CreateString(expr->name());
  auto kids = fbb_.CreateVector(children);
  Offset<Vector<uint8_t>> literal, type;
  Offset<Vector<Offset<fb::NamedScalar>>> options;
  Offset<fb::Udf> udf;
  fb::ExprKind kind = fb::ExprKind::Column;
  switch (expr->kind()) {
    case ExprKind::kColumn:
      kind = fb::ExprKind::Column;
      break;
    case ExprKind::kLiteral: {
      kind = fb::ExprKind::Literal;
      if (!expr->literal()) return arrow::Status::Invalid("plan serialization: literal without a value");
      ARROW_ASSIGN_OR_RAISE(auto bytes, ScalarBytes(expr->literal()));
      ARROW_ASSIGN_OR_RAISE(literal, Bytes(*bytes));
      break;
    }
    case ExprKind::kAlias:
      kind = fb::ExprKind::Alias;
      break;
    case ExprKind::kCast: {
      kind = fb::ExprKind::Cast;
      ARROW_ASSIGN_OR_RAISE(auto bytes, TypeBytes(expr->type()));
      ARROW_ASSIGN_OR_RAISE(type, Bytes(*bytes));
      break;
    }
    case ExprKind::kCall: {
      kind = fb::ExprKind::Call;
      std::vector<Offset<fb::NamedScalar>> entries;
      for (const auto& [key, value] : expr->options()) {
        auto k = fbb_.CreateString(key);
        Offset<Vector<uint8_t>> v;
        if (value) {
          ARROW_ASSIGN_OR_RAISE(auto bytes, ScalarBytes(value));
          ARROW_ASSIGN_OR_RAISE(v, Bytes(*bytes));
        }
        entries.push_back(fb::CreateNamedScalar(fbb_, k, v));
      }
      options = fbb_.CreateVector(entries);
      break;
    }
    case ExprKind::kUdf: {
      kind = fb::ExprKind::Udf;
      const std::string udf_name = expr->udf() ? expr->udf()->name() : expr->name();
      if (!write_udf_) {
        return arrow::Status::Invalid("plan serialization: the plan calls UDF '", udf_name,
                                      "' but no UDF payload writer was given");
      }
      auto payload = write_udf_(*expr);
      if (!payload.ok()) {
        return payload.status().WithMessage("cannot serialize UDF '", udf_name,
                                            "': ", payload.status().message());
      }
      ARROW_ASSIGN_OR_RAISE(auto payload_bytes, Bytes(*payload));
      ARROW_ASSIGN_OR_RAISE(auto type_bytes, TypeBytes(expr->type()));
      ARROW_ASSIGN_OR_RAISE(type, Bytes(*type_bytes));
      const auto& props = expr->udf_properties();
      std::vector<Offset<fb::StringPair>> display;
      for (const auto& [key, value] : props.display) {
        auto k = fbb_.CreateString(key);
        auto v = fbb_.CreateString(value);
        display.push_back(fb::CreateStringPair(fbb_, k, v));
      }
      auto display_offset = fbb_.CreateVector(display);
      auto name_offset = fbb_.CreateString(udf_name);
      udf = fb::CreateUdf(fbb_, name_offset, payload_bytes, props.batch_size, props.default_batch_rows,
                          props.concurrency, props.is_class, props.generator, props.max_items_per_row,
                          display_offset, props.bucket_key_args);
      break;
    }
  }
  fb::ExprBuilder b(fbb_);
  b.add_kind(kind);
  b.add_name(name);
  b.add_children(kids);
  if (!literal.IsNull()) b.add_literal(literal);
  if (!type.IsNull()) b.add_type(type);
  if (!options.IsNull()) b.add_options(options);
  if (!udf.IsNull()) b.add_udf(udf);
  return b.Finish();
}

arrow::Result<Offset<Vector<Offset<fb::Expr>>>> PlanWriter::WriteExprs(const std::vector<ExprPtr>& exprs) {
  std::vector<Offset<fb::Expr>> out;
  for (const auto& e : exprs) {
    ARROW_ASSIGN_OR_RAISE(auto o, WriteExpr(e));
    out.push_back(o);
  }
  return fbb_.CreateVector(out);
}

// --- Reading ---

arrow::Result<ExprPtr> PlanReader::ReadExpr(const fb::Expr* e) {
  if (e == nullptr) return Corrupt("an expression is missing");
  std::vector<ExprPtr> children;
  if (e->children()) {
    for (const auto* c : *e->children()) {
      ARROW_ASSIGN_OR_RAISE(auto child, ReadExpr(c));
      children.push_back(std::move(child));
    }
  }
  const std::string name = Str(e->name());
  auto arity = [&](size_t n) -> arrow::Status {
    if (children.size() != n) {
      return Corrupt("expression '" + name + "' has " + std::to_string(children.size()) +
                     " inputs, expected " + std::to_string(n));
    }
    return arrow::Status::OK();
  };
  switch (e->kind()) {
    case fb::ExprKind::Column:
      ARROW_RETURN_NOT_OK(arity(0));
      return Expr::Column(name);
    case fb::ExprKind::Literal: {
      ARROW_RETURN_NOT_OK(arity(0));
      ARROW_ASSIGN_OR_RAISE(auto value, ReadScalar(e->literal()));
      return Expr::Literal(std::move(value));
    }
    case fb::ExprKind::Alias:
      ARROW_RETURN_NOT_OK(arity(1));
      return Expr::Alias(children[0], name);
    case fb::ExprKind::Cast: {
      ARROW_RETURN_NOT_OK(arity(1));
      ARROW_ASSIGN_OR_RAISE(auto type, ReadType(e->type()));
      return Expr::Cast(children[0], std::move(type));
    }
    case fb::ExprKind::Call: {
      FunctionOptions options;
      if (e->options()) {
        for (const auto* entry : *e->options()) {
          std::shared_ptr<arrow::Scalar> value;
          if (entry->value()) {
            ARROW_ASSIGN_OR_RAISE(value, ReadScalar(entry->value()));
          }
          options[Str(entry->key())] = std::move(value);
        }
      }
      return Expr::Call(name, std::move(children), std::move(options));
    }
    case fb::ExprKind::Udf: {
      const auto* udf = e->udf();
      if (udf == nullptr) return Corrupt("a UDF expression without its UDF");
      ARROW_ASSIGN_OR_RAISE(auto type, ReadType(e->type()));
      UdfProperties props;
      props.batch_size = udf->batch_size();
      props.default_batch_rows = udf->default_batch_rows();
      props.concurrency = udf->concurrency();
      props.is_class = udf->is_class();
      props.generator = udf->generator();
      props.max_items_per_row = udf->max_items_per_row();
      props.bucket_key_args = udf->bucket_key_args();
      if (udf->display()) {
        for (const auto* pair : *udf->display()) props.display[Str(pair->key())] = Str(pair->value());
      }
      const std::string udf_name = Str(udf->name());
      if (!read_udf_) {
        return arrow::Status::Invalid("plan deserialization: the plan calls UDF '", udf_name,
                                      "' but no UDF payload reader was given");
      }
      std::string payload;
      if (udf->payload())
        payload.assign(reinterpret_cast<const char*>(udf->payload()->data()), udf->payload()->size());
      auto runner = read_udf_(udf_name, payload, props);
      if (!runner.ok()) {
        return runner.status().WithMessage("cannot deserialize UDF '", udf_name,
                                           "': ", runner.status().message());
      }
      if (!*runner)
        return arrow::Status::Invalid("cannot deserialize UDF '", udf_name, "': no implementation");
      return Expr::Udf(*runner, std::move(children), std::move(type), std::move(props));
    }
  }
  return Corrupt("unknown expression kind " + std::to_string(static_cast<int>(e->kind())));
}

arrow::Result<std::vector<ExprPtr>> PlanReader::ReadExprs(const Vector<Offset<fb::Expr>>* v) {
  std::vector<ExprPtr> out;
  if (v) {
    for (const auto* e : *v) {
      ARROW_ASSIGN_OR_RAISE(auto expr, ReadExpr(e));
      out.push_back(std::move(expr));
    }
  }
  return out;
}

}  // namespace ketch::serde::internal
