#include "ketch/functions/media/video_functions.h"

#include <arrow/compute/api.h>

#include <utility>
#include <vector>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/image/image_functions.h"
#include "ketch/functions/media/media_input.h"
#include "ketch/functions/media/video_decoder.h"
#include "ketch/functions/media/video_frame_fields.h"
#include "ketch/functions/nested/nested_function_base.h"
#include "ketch/types/image_array.h"
#include "ketch/types/image_type.h"

namespace ketch::media {

std::shared_ptr<arrow::DataType> VideoMetadataType() {
  return arrow::struct_({arrow::field("width", arrow::int64()), arrow::field("height", arrow::int64()),
                         arrow::field("fps", arrow::float64()), arrow::field("duration", arrow::float64()),
                         arrow::field("frame_count", arrow::int64()),
                         arrow::field("time_base", arrow::float64())});
}

std::shared_ptr<arrow::DataType> VideoFrameType(std::shared_ptr<arrow::DataType> data) {
  if (data == nullptr) data = image_type(ImageMode::kRGB);
  return arrow::struct_(
      {arrow::field("frame_index", arrow::int64()), arrow::field("frame_time", arrow::float64()),
       arrow::field("frame_time_base", arrow::utf8()), arrow::field("frame_pts", arrow::int64()),
       arrow::field("frame_dts", arrow::int64()), arrow::field("frame_duration", arrow::int64()),
       arrow::field("is_key_frame", arrow::boolean()), arrow::field("data", std::move(data))});
}

namespace {

arrow::Result<std::optional<double>> OptionalDouble(const FunctionOptions& options, const std::string& key,
                                                    const std::string& function) {
  if (!HasOption(options, key)) return std::nullopt;
  auto cast = options.at(key)->CastTo(arrow::float64());
  if (!cast.ok()) return arrow::Status::TypeError(function, ": ", key, " must be a number of seconds");
  return static_cast<const arrow::DoubleScalar&>(**cast).value;
}

arrow::Result<std::optional<int>> OptionalSize(const FunctionOptions& options, const std::string& key,
                                               const std::string& function) {
  if (!HasOption(options, key)) return std::nullopt;
  ARROW_ASSIGN_OR_RAISE(int64_t value, GetIntOption(options, key, function));
  if (value <= 0 || value > 1 << 20) {
    return arrow::Status::Invalid(function, ": ", key, " must be a positive number of pixels, got ", value);
  }
  return static_cast<int>(value);
}

// The selection options of video_frames / video_keyframes, checked at plan time and run time.
arrow::Result<VideoFrameOptions> FrameOptions(const FunctionOptions& options, const std::string& function,
                                              bool keyframes) {
  VideoFrameOptions out;
  out.max_pixels = image::kMaxImagePixels;
  out.limits.max_video_pixels = image::kMaxImagePixels;
  ARROW_ASSIGN_OR_RAISE(auto start, OptionalDouble(options, "start_time", function));
  if (start) {
    if (!(*start >= 0))
      return arrow::Status::Invalid(function, ": start_time must be >= 0 seconds, got ", *start);
    out.start_time = *start;
  }
  ARROW_ASSIGN_OR_RAISE(out.end_time, OptionalDouble(options, "end_time", function));
  if (out.end_time && *out.end_time < out.start_time) {
    return arrow::Status::Invalid(function, ": end_time (", *out.end_time, ") is before start_time (",
                                  out.start_time, ")");
  }
  if (keyframes) {
    out.is_key_frame = true;
    return out;
  }
  ARROW_ASSIGN_OR_RAISE(out.width, OptionalSize(options, "width", function));
  ARROW_ASSIGN_OR_RAISE(out.height, OptionalSize(options, "height", function));
  if (out.width.has_value() != out.height.has_value()) {
    return arrow::Status::Invalid(function, ": width and height must be given together for resizing");
  }
  if (HasOption(options, "is_key_frame")) {
    ARROW_ASSIGN_OR_RAISE(auto cast, options.at("is_key_frame")->CastTo(arrow::boolean()));
    out.is_key_frame = static_cast<const arrow::BooleanScalar&>(*cast).value;
  }
  ARROW_ASSIGN_OR_RAISE(out.sample_interval_seconds,
                        OptionalDouble(options, "sample_interval_seconds", function));
  if (out.sample_interval_seconds && !(*out.sample_interval_seconds > 0)) {
    return arrow::Status::Invalid(function, ": sample_interval_seconds must be positive, got ",
                                  *out.sample_interval_seconds);
  }
  ARROW_ASSIGN_OR_RAISE(bool fixed_shape, nested::GetBoolOption(options, "fixed_shape", false));
  if (fixed_shape && !out.width) {
    return arrow::Status::Invalid(function, ": fixed_shape needs width and height");
  }
  if (HasOption(options, "frame_index")) {
    ARROW_ASSIGN_OR_RAISE(auto rule, GetStringOption(options, "frame_index", function));
    if (rule != "pts" && rule != "counter") {
      return arrow::Status::Invalid(function, ": frame_index must be 'pts' or 'counter', got '", rule, "'");
    }
    out.counter_index = rule == "counter";
  }
  return out;
}

// Frames of one column: per-frame fields and pixels go straight into the child builders; a row
// that fails halfway leaves its frames behind as a range filtered out at Finish.
class FrameListBuilder : public VideoFrameSink {
 public:
  /// `fields`: Daft's per-frame struct, else just the images; `fixed`: FixedShapeImage[RGB; h x w]
  /// pixels (every frame that size), else Image[RGB].
  FrameListBuilder(bool fields, std::shared_ptr<arrow::DataType> fixed)
      : fields_(fields), fixed_(std::move(fixed)), images_(ImageMode::kRGB) {
    offsets_.push_back(0);
  }

  arrow::Result<uint8_t*> Prepare(int64_t bytes) override {
    if (fixed_ == nullptr) return images_.PrepareRow(bytes);
    ARROW_RETURN_NOT_OK(pixels_.Reserve(bytes));
    return pixels_.mutable_data() + pixels_.length();
  }

  arrow::Status Commit(const VideoFrameInfo& info) override {
    if (fixed_ == nullptr) {
      ARROW_RETURN_NOT_OK(images_.CommitRow(info.height, info.width, ImageMode::kRGB));
    } else {
      pixels_.UnsafeAdvance(int64_t{info.height} * info.width * 3);
    }
    ++children_;
    if (!fields_) return arrow::Status::OK();
    return frame_fields_.Append(info);
  }

  /// Ends the current row: valid with the frames committed since the last row, or null (its
  /// frames, if any, are dropped).
  void EndRow(bool valid) {
    const int64_t kept = children_ - dropped_total_;
    if (!valid && children_ > row_start_) {
      dropped_.emplace_back(row_start_, children_);
      dropped_total_ += children_ - row_start_;
    }
    validity_.push_back(valid);
    offsets_.push_back(valid ? kept : offsets_.back());
    row_start_ = children_;
  }

  arrow::Result<std::shared_ptr<arrow::Array>> Finish() {
    std::shared_ptr<arrow::Array> images;
    if (fixed_ == nullptr) {
      ARROW_ASSIGN_OR_RAISE(images, images_.Finish());
    } else {
      const auto& storage_type = static_cast<const arrow::ExtensionType&>(*fixed_).storage_type();
      ARROW_ASSIGN_OR_RAISE(auto pixels, pixels_.Finish());
      auto values = std::make_shared<arrow::UInt8Array>(pixels->size(), pixels);
      auto storage = std::make_shared<arrow::FixedSizeListArray>(storage_type, children_, values);
      images = arrow::ExtensionType::WrapArray(fixed_, storage);
    }
    std::shared_ptr<arrow::Array> values = images;
    std::shared_ptr<arrow::DataType> list_type;
    if (fields_) {
      ARROW_ASSIGN_OR_RAISE(auto children, frame_fields_.Finish());
      children.push_back(images);
      ARROW_ASSIGN_OR_RAISE(values,
                            arrow::StructArray::Make(children, VideoFrameType(images->type())->fields()));
    }
    if (!dropped_.empty()) {
      arrow::BooleanBuilder keep;
      ARROW_RETURN_NOT_OK(keep.Reserve(children_));
      int64_t at = 0;
      for (const auto& [begin, end] : dropped_) {
        ARROW_RETURN_NOT_OK(keep.AppendValues(begin - at, true));
        ARROW_RETURN_NOT_OK(keep.AppendValues(end - begin, false));
        at = end;
      }
      ARROW_RETURN_NOT_OK(keep.AppendValues(children_ - at, true));
      std::shared_ptr<arrow::Array> mask;
      ARROW_RETURN_NOT_OK(keep.Finish(&mask));
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(values, mask));
      values = filtered.make_array();
    }
    arrow::TypedBufferBuilder<int64_t> offsets;
    ARROW_RETURN_NOT_OK(offsets.Append(offsets_.data(), static_cast<int64_t>(offsets_.size())));
    arrow::TypedBufferBuilder<bool> validity;
    int64_t nulls = 0;
    for (bool valid : validity_) {
      ARROW_RETURN_NOT_OK(validity.Append(valid));
      nulls += valid ? 0 : 1;
    }
    ARROW_ASSIGN_OR_RAISE(auto offset_buffer, offsets.Finish());
    ARROW_ASSIGN_OR_RAISE(auto validity_buffer, validity.Finish());
    auto type = arrow::large_list(arrow::field("item", values->type()));
    return std::make_shared<arrow::LargeListArray>(type, static_cast<int64_t>(validity_.size()),
                                                   offset_buffer, values,
                                                   nulls > 0 ? validity_buffer : nullptr, nulls);
  }

 private:
  bool fields_;
  std::shared_ptr<arrow::DataType> fixed_;
  ImageArrayBuilder images_;
  arrow::BufferBuilder pixels_;
  FrameFieldBuilders frame_fields_;
  std::vector<int64_t> offsets_;
  std::vector<bool> validity_;
  std::vector<std::pair<int64_t, int64_t>> dropped_;
  int64_t children_ = 0, row_start_ = 0, dropped_total_ = 0;
};

// One image per row (get_video_frame_by_idx).
class SingleFrameSink : public VideoFrameSink {
 public:
  explicit SingleFrameSink(ImageArrayBuilder* images) : images_(images) {}
  arrow::Result<uint8_t*> Prepare(int64_t bytes) override { return images_->PrepareRow(bytes); }
  arrow::Status Commit(const VideoFrameInfo& info) override {
    return images_->CommitRow(info.height, info.width, ImageMode::kRGB);
  }

 private:
  ImageArrayBuilder* images_;
};

arrow::Status RowError(const std::string& function, int64_t row, const std::string& where,
                       const arrow::Status& cause) {
  if (cause.IsCancelled()) return cause;
  return cause.WithMessage(function, " failed at row ", row, where, ": ", cause.message());
}

arrow::Status CheckArgs(const std::string& function, size_t expected,
                        const std::vector<std::shared_ptr<arrow::DataType>>& types,
                        const std::vector<ExprPtr>& exprs, const FunctionOptions& options) {
  if (types.size() != expected) {
    return arrow::Status::Invalid(function, " takes ", expected, expected == 1 ? " argument" : " arguments");
  }
  ARROW_RETURN_NOT_OK(MediaBytes::CheckType(function, types[0], exprs.empty() ? nullptr : exprs[0]));
  return NullOnError(options, function).status();
}

class VideoMetadataFunction : public ScalarFunction {
 public:
  std::string name() const override { return "video_metadata"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(CheckArgs(name(), 1, types, exprs, options));
    return VideoMetadataType();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(bool null_on_error, NullOnError(options, name()));
    ARROW_ASSIGN_OR_RAISE(auto bytes, MediaBytes::Make(args[0], options, ctx));
    auto* pool = arrow::default_memory_pool();
    auto width = std::make_shared<arrow::Int64Builder>(pool);
    auto height = std::make_shared<arrow::Int64Builder>(pool);
    auto fps = std::make_shared<arrow::DoubleBuilder>(pool);
    auto duration = std::make_shared<arrow::DoubleBuilder>(pool);
    auto frame_count = std::make_shared<arrow::Int64Builder>(pool);
    auto time_base = std::make_shared<arrow::DoubleBuilder>(pool);
    arrow::StructBuilder out(VideoMetadataType(), pool,
                             {width, height, fps, duration, frame_count, time_base});
    AvLimits limits;
    limits.max_video_pixels = image::kMaxImagePixels;
    for (int64_t i = 0; i < bytes.length(); ++i) {
      if (bytes.IsNull(i)) {
        ARROW_RETURN_NOT_OK(out.AppendNull());
        continue;
      }
      auto meta = ReadVideoMetadata(bytes.Value(i), limits);
      if (!meta.ok()) {
        if (null_on_error && !meta.status().IsCancelled()) {
          ARROW_RETURN_NOT_OK(out.AppendNull());
          continue;
        }
        return RowError(name(), ctx.SourceRow(i), bytes.Where(i), meta.status());
      }
      ARROW_RETURN_NOT_OK(out.Append());
      auto put_int = [](arrow::Int64Builder& b, std::optional<int64_t> v) {
        return v ? b.Append(*v) : b.AppendNull();
      };
      auto put_double = [](arrow::DoubleBuilder& b, std::optional<double> v) {
        return v ? b.Append(*v) : b.AppendNull();
      };
      ARROW_RETURN_NOT_OK(put_int(*width, meta->width));
      ARROW_RETURN_NOT_OK(put_int(*height, meta->height));
      ARROW_RETURN_NOT_OK(put_double(*fps, meta->fps));
      ARROW_RETURN_NOT_OK(put_double(*duration, meta->duration));
      ARROW_RETURN_NOT_OK(put_int(*frame_count, meta->frame_count));
      ARROW_RETURN_NOT_OK(put_double(*time_base, meta->time_base));
    }
    std::shared_ptr<arrow::Array> result;
    ARROW_RETURN_NOT_OK(out.Finish(&result));
    return result;
  }
};

// video_frames and video_keyframes: one list of frames per row.
class VideoFramesFunction : public ScalarFunction {
 public:
  explicit VideoFramesFunction(bool keyframes) : keyframes_(keyframes) {}
  std::string name() const override { return keyframes_ ? "video_keyframes" : "video_frames"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(CheckArgs(name(), 1, types, exprs, options));
    ARROW_ASSIGN_OR_RAISE(auto frame_options, FrameOptions(options, name(), keyframes_));
    auto image = FixedShape(options, frame_options);
    if (image == nullptr) image = image_type(ImageMode::kRGB);
    return arrow::large_list(arrow::field("item", keyframes_ ? image : VideoFrameType(image)));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(bool null_on_error, NullOnError(options, name()));
    ARROW_ASSIGN_OR_RAISE(auto frame_options, FrameOptions(options, name(), keyframes_));
    frame_options.max_output_bytes = ctx.memory_budget_bytes;
    frame_options.cancelled = ctx.cancelled;
    ARROW_ASSIGN_OR_RAISE(auto bytes, MediaBytes::Make(args[0], options, ctx));
    FrameListBuilder out(/*fields=*/!keyframes_, FixedShape(options, frame_options));
    for (int64_t i = 0; i < bytes.length(); ++i) {
      if (bytes.IsNull(i)) {
        out.EndRow(false);
        continue;
      }
      arrow::Status status = DecodeRow(bytes.Value(i), frame_options, &out);
      if (!status.ok()) {
        if (!null_on_error || status.IsCancelled())
          return RowError(name(), ctx.SourceRow(i), bytes.Where(i), status);
        out.EndRow(false);
        continue;
      }
      out.EndRow(true);
    }
    return out.Finish();
  }

 private:
  // FixedShapeImage[RGB; height x width] when the option fixed_shape asks for it, else nullptr.
  static std::shared_ptr<arrow::DataType> FixedShape(const FunctionOptions& options,
                                                     const VideoFrameOptions& frame_options) {
    if (!frame_options.width || !nested::GetBoolOption(options, "fixed_shape", false).ValueOr(false))
      return nullptr;
    return fixed_shape_image_type(ImageMode::kRGB, *frame_options.height, *frame_options.width);
  }

  static arrow::Status DecodeRow(std::shared_ptr<arrow::Buffer> bytes, const VideoFrameOptions& options,
                                 FrameListBuilder* out) {
    ARROW_ASSIGN_OR_RAISE(auto decoder, VideoFrameDecoder::Open(std::move(bytes), options));
    while (true) {
      ARROW_ASSIGN_OR_RAISE(bool more, decoder->Next(out));
      if (!more) break;
    }
    return arrow::Status::OK();
  }

  bool keyframes_;
};

class VideoFrameByIndexFunction : public ScalarFunction {
 public:
  std::string name() const override { return "get_video_frame_by_idx"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(CheckArgs(name(), 2, types, exprs, options));
    if (!arrow::is_integer(types[1]->id()) && types[1]->id() != arrow::Type::NA) {
      return arrow::Status::TypeError(name(), ": idx must be an integer, got ", types[1]->ToString());
    }
    return image_type(ImageMode::kRGB);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(bool null_on_error, NullOnError(options, name()));
    ARROW_ASSIGN_OR_RAISE(auto bytes, MediaBytes::Make(args[0], options, ctx));
    ARROW_ASSIGN_OR_RAISE(auto idx_array, ToArray(args[1], bytes.length()));
    ARROW_ASSIGN_OR_RAISE(auto idx_cast, arrow::compute::Cast(*idx_array, arrow::int64()));
    const auto& idx = static_cast<const arrow::Int64Array&>(*idx_cast);
    ImageArrayBuilder images(ImageMode::kRGB);
    SingleFrameSink sink(&images);
    for (int64_t i = 0; i < bytes.length(); ++i) {
      if (bytes.IsNull(i) || idx.IsNull(i)) {
        ARROW_RETURN_NOT_OK(images.AppendNull());
        continue;
      }
      VideoFrameOptions frame_options;
      frame_options.max_pixels = image::kMaxImagePixels;
      frame_options.max_output_bytes = ctx.memory_budget_bytes;
      frame_options.cancelled = ctx.cancelled;
      frame_options.only_index = idx.Value(i);
      arrow::Status status = DecodeOne(bytes.Value(i), frame_options, &sink);
      if (!status.ok()) {
        if (!null_on_error || status.IsCancelled())
          return RowError(name(), ctx.SourceRow(i), bytes.Where(i), status);
        ARROW_RETURN_NOT_OK(images.AppendNull());
      }
    }
    return images.Finish();
  }

 private:
  static arrow::Status DecodeOne(std::shared_ptr<arrow::Buffer> bytes, const VideoFrameOptions& options,
                                 SingleFrameSink* sink) {
    ARROW_ASSIGN_OR_RAISE(auto decoder, VideoFrameDecoder::Open(std::move(bytes), options));
    ARROW_ASSIGN_OR_RAISE(bool found, decoder->Next(sink));
    if (!found) {
      return arrow::Status::IndexError("frame index ", *options.only_index, " is past the end of the video");
    }
    return arrow::Status::OK();
  }
};

}  // namespace

arrow::Status RegisterVideoFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<VideoMetadataFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<VideoFramesFunction>(/*keyframes=*/false)));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<VideoFramesFunction>(/*keyframes=*/true)));
  return registry->Register(std::make_shared<VideoFrameByIndexFunction>());
}

}  // namespace ketch::media
