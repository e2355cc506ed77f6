// encode / decode / try_encode / try_decode: one byte codec per call (Daft's compress and
// decompress are these functions with a compression codec).

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <new>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/codec/binary_codecs.h"
#include "ketch/functions/codec/codec_functions.h"

namespace ketch::codec {
namespace {

bool IsBytesLike(const arrow::DataType& type) {
  const auto id = type.id();
  return arrow::is_base_binary_like(id) || id == arrow::Type::FIXED_SIZE_BINARY ||
         id == arrow::Type::BINARY_VIEW || id == arrow::Type::STRING_VIEW;
}

class BinaryCodecFunction : public ScalarFunction {
 public:
  BinaryCodecFunction(std::string name, bool encode, bool null_on_error)
      : name_(std::move(name)), encode_(encode), null_on_error_(null_on_error) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (arg_types.size() != 1) return arrow::Status::Invalid(name_, " takes one argument");
    ARROW_ASSIGN_OR_RAISE(auto codec, Codec(options));
    const auto& type = *arg_types[0];
    if (type.id() != arrow::Type::NA && !IsBytesLike(type)) {
      return arrow::Status::TypeError(name_, " expects a string or binary, got ", arg_exprs[0]->ToString(),
                                      " of type ", type.ToString());
    }
    return ResultType(codec);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto codec, Codec(options));
    const auto result_type = ResultType(codec);
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::NA) return arrow::MakeArrayOfNull(result_type, input->length());
    // A string's bytes are UTF-8 already: utf-8 encoding is a cast.
    if (encode_ && codec == BinaryCodec::kUtf8 && arrow::is_string(input->type_id())) {
      return arrow::compute::Cast(arrow::Datum(input), arrow::large_binary());
    }
    ARROW_ASSIGN_OR_RAISE(auto bytes_array, arrow::compute::Cast(*input, arrow::large_binary()));
    const auto& bytes = static_cast<const arrow::LargeBinaryArray&>(*bytes_array);
    ARROW_ASSIGN_OR_RAISE(auto transform, BinaryTransform::Make(codec, encode_));
    // One value may take at most half the query's budget (at least 16 MiB; 4 GiB without one).
    if (ctx.memory_budget_bytes > 0) {
      const size_t half = static_cast<size_t>(ctx.memory_budget_bytes) / 2;
      transform->set_max_output_bytes(std::min(size_t{4} << 30, std::max<size_t>(half, size_t{16} << 20)));
    }
    std::unique_ptr<arrow::ArrayBuilder> builder;
    ARROW_ASSIGN_OR_RAISE(builder, arrow::MakeBuilder(result_type));
    // Both builders append through the same binary interface (LargeStringBuilder derives from it).
    auto* out = static_cast<arrow::LargeBinaryBuilder*>(builder.get());
    ARROW_RETURN_NOT_OK(out->Reserve(bytes.length()));
    std::string value;
    for (int64_t i = 0; i < bytes.length(); ++i) {
      if (bytes.IsNull(i)) {
        ARROW_RETURN_NOT_OK(out->AppendNull());
        continue;
      }
      arrow::Status status;
      try {
        status = transform->Apply(bytes.GetView(i), &value);
      } catch (const std::bad_alloc&) {
        status = arrow::Status::OutOfMemory("out of memory");
      }
      if (!status.ok()) {
        if (null_on_error_) {
          ARROW_RETURN_NOT_OK(out->AppendNull());
          continue;
        }
        return status.WithMessage(name_, " failed at source row ", ctx.SourceRow(i), " (codec '",
                                  BinaryCodecName(codec), "'): ", status.message());
      }
      ARROW_RETURN_NOT_OK(out->Append(value));
    }
    std::shared_ptr<arrow::Array> result;
    ARROW_RETURN_NOT_OK(builder->Finish(&result));
    return result;
  }

 private:
  arrow::Result<BinaryCodec> Codec(const FunctionOptions& options) const {
    ARROW_ASSIGN_OR_RAISE(auto name, GetStringOption(options, "codec", name_));
    return ParseBinaryCodec(name, name_);
  }

  std::shared_ptr<arrow::DataType> ResultType(BinaryCodec codec) const {
    return !encode_ && codec == BinaryCodec::kUtf8 ? arrow::large_utf8() : arrow::large_binary();
  }

  std::string name_;
  bool encode_;
  bool null_on_error_;
};

}  // namespace

arrow::Status RegisterBinaryCodecFunctions() {
  // Daft spells compress/decompress as encode/decode with a compression codec; Ketch registers
  // both names (the same kernel) so errors and explain() say what the user wrote.
  struct Spec {
    const char* name;
    bool encode;
    bool null_on_error;
  };
  constexpr Spec kSpecs[] = {{"encode", true, false},      {"try_encode", true, true},
                             {"decode", false, false},     {"try_decode", false, true},
                             {"compress", true, false},    {"try_compress", true, true},
                             {"decompress", false, false}, {"try_decompress", false, true}};
  auto* registry = FunctionRegistry::Global();
  for (const auto& spec : kSpecs) {
    ARROW_RETURN_NOT_OK(registry->Register(
        std::make_shared<BinaryCodecFunction>(spec.name, spec.encode, spec.null_on_error)));
  }
  return arrow::Status::OK();
}

arrow::Status RegisterCodecFunctions() {
  ARROW_RETURN_NOT_OK(RegisterBinaryCodecFunctions());
  ARROW_RETURN_NOT_OK(RegisterParseUrlFunction());
  ARROW_RETURN_NOT_OK(RegisterJqFunction());
  return RegisterJsonSerdeFunctions();
}

}  // namespace ketch::codec
