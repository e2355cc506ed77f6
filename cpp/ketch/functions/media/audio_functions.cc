#include "ketch/functions/media/audio_functions.h"

#include "ketch/expr/function_registry.h"
#include "ketch/functions/media/audio_decoder.h"
#include "ketch/functions/media/media_input.h"
#include "ketch/functions/nested/nested_function_base.h"

namespace ketch::media {
namespace {

std::shared_ptr<arrow::DataType> TensorType(bool float64) {
  return arrow::struct_(
      {arrow::field("data", arrow::large_list(float64 ? arrow::float64() : arrow::float32())),
       arrow::field("shape", arrow::large_list(arrow::uint64()))});
}

std::shared_ptr<arrow::DataType> MetadataType() {
  return arrow::struct_({arrow::field("sample_rate", arrow::int64()),
                         arrow::field("channels", arrow::int64()), arrow::field("frames", arrow::float64()),
                         arrow::field("format", arrow::utf8()), arrow::field("subtype", arrow::utf8())});
}

arrow::Result<AudioDecodeOptions> DecodeOptions(const FunctionOptions& options) {
  AudioDecodeOptions out;
  if (HasOption(options, "sample_rate") && options.at("sample_rate")->is_valid) {
    ARROW_ASSIGN_OR_RAISE(auto rate, GetIntOption(options, "sample_rate", "audio.decode"));
    if (rate <= 0 || rate > 10'000'000) {
      return arrow::Status::Invalid("audio.decode: sample_rate must be a positive number of Hz, got ", rate);
    }
    out.sample_rate = static_cast<int>(rate);
  }
  ARROW_ASSIGN_OR_RAISE(out.mono, nested::GetBoolOption(options, "mono", false));
  if (HasOption(options, "dtype")) {
    ARROW_ASSIGN_OR_RAISE(auto dtype, GetStringOption(options, "dtype", "audio.decode"));
    if (dtype != "float32" && dtype != "float64") {
      return arrow::Status::Invalid("audio.decode: dtype must be 'float32' or 'float64', got '", dtype, "'");
    }
    out.float64 = dtype == "float64";
  }
  return out;
}

class AudioDecodeFunction : public ScalarFunction {
 public:
  std::string name() const override { return "audio_decode"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1) return arrow::Status::Invalid("audio.decode takes one argument");
    ARROW_RETURN_NOT_OK(MediaBytes::CheckType("audio.decode", types[0], exprs.empty() ? nullptr : exprs[0]));
    ARROW_RETURN_NOT_OK(NullOnError(options, "audio.decode").status());
    ARROW_ASSIGN_OR_RAISE(auto decode, DecodeOptions(options));
    return TensorType(decode.float64);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto decode, DecodeOptions(options));
    ARROW_ASSIGN_OR_RAISE(bool null_on_error, NullOnError(options, "audio.decode"));
    if (ctx.memory_budget_bytes > 0) decode.max_output_bytes = ctx.memory_budget_bytes;
    ARROW_ASSIGN_OR_RAISE(auto bytes, MediaBytes::Make(args[0], options, ctx));
    auto* pool = arrow::default_memory_pool();
    std::shared_ptr<arrow::ArrayBuilder> values;
    if (decode.float64) {
      values = std::make_shared<arrow::DoubleBuilder>(pool);
    } else {
      values = std::make_shared<arrow::FloatBuilder>(pool);
    }
    auto data = std::make_shared<arrow::LargeListBuilder>(pool, values);
    auto dims = std::make_shared<arrow::UInt64Builder>(pool);
    auto shape = std::make_shared<arrow::LargeListBuilder>(pool, dims);
    arrow::StructBuilder out(TensorType(decode.float64), pool, {data, shape});
    const int64_t n = bytes.length();
    for (int64_t i = 0; i < n; ++i) {
      if (bytes.IsNull(i)) {
        ARROW_RETURN_NOT_OK(out.AppendNull());
        continue;
      }
      auto decoded = DecodeAudio(bytes.Value(i), decode);
      if (!decoded.ok()) {
        if (null_on_error) {
          ARROW_RETURN_NOT_OK(out.AppendNull());
          continue;
        }
        return arrow::Status::Invalid("audio.decode failed at row ", ctx.SourceRow(i), bytes.Where(i), ": ",
                                      decoded.status().message());
      }
      ARROW_RETURN_NOT_OK(out.Append());
      ARROW_RETURN_NOT_OK(data->Append());
      const int64_t count = decoded->frames * decoded->channels;
      if (decode.float64) {
        ARROW_RETURN_NOT_OK(static_cast<arrow::DoubleBuilder&>(*values).AppendValues(
            reinterpret_cast<const double*>(decoded->samples.data()), count));
      } else {
        ARROW_RETURN_NOT_OK(static_cast<arrow::FloatBuilder&>(*values).AppendValues(
            reinterpret_cast<const float*>(decoded->samples.data()), count));
      }
      ARROW_RETURN_NOT_OK(shape->Append());
      ARROW_RETURN_NOT_OK(dims->Append(static_cast<uint64_t>(decoded->frames)));
      if (decoded->channels > 1) ARROW_RETURN_NOT_OK(dims->Append(static_cast<uint64_t>(decoded->channels)));
    }
    std::shared_ptr<arrow::Array> result;
    ARROW_RETURN_NOT_OK(out.Finish(&result));
    return result;
  }
};

class AudioMetadataFunction : public ScalarFunction {
 public:
  std::string name() const override { return "audio_metadata"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1) return arrow::Status::Invalid("audio_metadata takes one argument");
    ARROW_RETURN_NOT_OK(
        MediaBytes::CheckType("audio_metadata", types[0], exprs.empty() ? nullptr : exprs[0]));
    ARROW_RETURN_NOT_OK(NullOnError(options, "audio_metadata").status());
    return MetadataType();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(bool null_on_error, NullOnError(options, "audio_metadata"));
    ARROW_ASSIGN_OR_RAISE(auto bytes, MediaBytes::Make(args[0], options, ctx));
    auto* pool = arrow::default_memory_pool();
    auto rate = std::make_shared<arrow::Int64Builder>(pool);
    auto channels = std::make_shared<arrow::Int64Builder>(pool);
    auto frames = std::make_shared<arrow::DoubleBuilder>(pool);
    auto format = std::make_shared<arrow::StringBuilder>(pool);
    auto subtype = std::make_shared<arrow::StringBuilder>(pool);
    arrow::StructBuilder out(MetadataType(), pool, {rate, channels, frames, format, subtype});
    for (int64_t i = 0; i < bytes.length(); ++i) {
      if (bytes.IsNull(i)) {
        ARROW_RETURN_NOT_OK(out.AppendNull());
        continue;
      }
      auto meta = ReadAudioMetadata(bytes.Value(i), AudioLimits());
      if (!meta.ok()) {
        if (null_on_error) {
          ARROW_RETURN_NOT_OK(out.AppendNull());
          continue;
        }
        return arrow::Status::Invalid("audio_metadata failed at row ", ctx.SourceRow(i), bytes.Where(i), ": ",
                                      meta.status().message());
      }
      ARROW_RETURN_NOT_OK(out.Append());
      ARROW_RETURN_NOT_OK(rate->Append(meta->sample_rate));
      ARROW_RETURN_NOT_OK(channels->Append(meta->channels));
      ARROW_RETURN_NOT_OK(frames->Append(meta->frames));
      ARROW_RETURN_NOT_OK(format->Append(meta->format));
      ARROW_RETURN_NOT_OK(subtype->Append(meta->subtype));
    }
    std::shared_ptr<arrow::Array> result;
    ARROW_RETURN_NOT_OK(out.Finish(&result));
    return result;
  }
};

}  // namespace

arrow::Status RegisterAudioFunctions() {
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<AudioDecodeFunction>()));
  return FunctionRegistry::Global()->Register(std::make_shared<AudioMetadataFunction>());
}

}  // namespace ketch::media
