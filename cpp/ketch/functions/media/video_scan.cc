#include "ketch/functions/media/video_scan.h"

#include <algorithm>
#include <cmath>

#include "ketch/functions/image/image_functions.h"
#include "ketch/types/image_type.h"

namespace ketch::media {
namespace {

// Daft's estimate of a frame's non-pixel fields (_VideoFramesBuffer._size_of_metadata).
constexpr int64_t kMetadataBytes = 64;

}  // namespace

std::shared_ptr<arrow::Schema> VideoFramesSchema(int32_t height, int32_t width) {
  return arrow::schema(
      {arrow::field("path", arrow::large_utf8()), arrow::field("frame_index", arrow::int64()),
       arrow::field("frame_time", arrow::float64()), arrow::field("frame_time_base", arrow::utf8()),
       arrow::field("frame_pts", arrow::int64()), arrow::field("frame_dts", arrow::int64()),
       arrow::field("frame_duration", arrow::int64()), arrow::field("is_key_frame", arrow::boolean()),
       arrow::field("data", fixed_shape_image_type(ImageMode::kRGB, height, width))});
}

arrow::Result<VideoFrameOptions> VideoScanFrameOptions(const VideoScanOptions& options) {
  if (options.image_height <= 0 || options.image_width <= 0 ||
      int64_t{options.image_height} * options.image_width > image::kMaxImagePixels) {
    return arrow::Status::Invalid("image_height and image_width must be positive and at most ",
                                  image::kMaxImagePixels, " pixels together, got ", options.image_height,
                                  " x ", options.image_width);
  }
  if (!(options.start_time >= 0)) {
    return arrow::Status::Invalid("start_time must be >= 0 seconds, got ", options.start_time);
  }
  if (options.end_time && !(*options.end_time >= options.start_time)) {
    return arrow::Status::Invalid("end_time (", *options.end_time, ") is before start_time (",
                                  options.start_time, ")");
  }
  if (options.sample_interval_seconds && !(*options.sample_interval_seconds > 0)) {
    return arrow::Status::Invalid("sample_interval_seconds must be positive, got ",
                                  *options.sample_interval_seconds);
  }
  VideoFrameOptions out;
  out.max_pixels = image::kMaxImagePixels;
  out.limits.max_video_pixels = image::kMaxImagePixels;
  out.width = options.image_width;
  out.height = options.image_height;
  out.is_key_frame = options.is_key_frame;
  out.start_time = options.start_time;
  out.end_time = options.end_time;
  out.sample_interval_seconds = options.sample_interval_seconds;
  out.counter_index = true;  // Daft's read_video_frames counts decoded frames
  return out;
}

arrow::Result<std::unique_ptr<VideoFrameStream>> VideoFrameStream::Open(
    std::string path, std::shared_ptr<arrow::Buffer> bytes, const VideoScanOptions& options,
    const std::vector<std::string>& columns, const std::atomic<bool>* cancelled, int decoder_threads,
    int32_t range_index, int32_t range_count) {
  ARROW_ASSIGN_OR_RAISE(auto frame_options, VideoScanFrameOptions(options));
  const auto all = VideoFramesSchema(options.image_height, options.image_width);
  std::unique_ptr<VideoFrameStream> self(new VideoFrameStream());
  arrow::FieldVector fields;
  for (const auto& name : columns) {
    auto field = all->GetFieldByName(name);
    if (field == nullptr) return arrow::Status::KeyError("read_video_frames has no column '", name, "'");
    fields.push_back(field);
    if (name == "data") {
      self->data_ = true;
      self->image_type_ = field->type();
    }
  }
  frame_options.convert_pixels = self->data_;
  frame_options.cancelled = cancelled;
  frame_options.decoder_threads = decoder_threads;
  frame_options.range_index = range_index;
  frame_options.range_count = range_count;
  self->schema_ = arrow::schema(std::move(fields));
  self->row_bytes_ =
      kMetadataBytes + (self->data_ ? int64_t{options.image_height} * options.image_width * 3 : 0);
  self->path_ = std::move(path);
  ARROW_ASSIGN_OR_RAISE(self->decoder_, VideoFrameDecoder::Open(std::move(bytes), std::move(frame_options)));
  return self;
}

arrow::Result<uint8_t*> VideoFrameStream::Prepare(int64_t bytes) {
  ARROW_RETURN_NOT_OK(pixels_.Reserve(bytes));
  return pixels_.mutable_data() + pixels_.length();
}

arrow::Status VideoFrameStream::Commit(const VideoFrameInfo& info) {
  if (data_) pixels_.UnsafeAdvance(int64_t{info.height} * info.width * 3);
  ++rows_;
  return frame_fields_.Append(info);
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> VideoFrameStream::Next(int64_t max_frames) {
  max_frames = std::max<int64_t>(1, max_frames);
  if (data_) ARROW_RETURN_NOT_OK(pixels_.Reserve(max_frames * (row_bytes_ - kMetadataBytes)));
  while (rows_ < max_frames) {
    ARROW_ASSIGN_OR_RAISE(bool more, decoder_->Next(this));
    if (!more) break;
  }
  if (rows_ == 0) return nullptr;
  return Finish();
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> VideoFrameStream::Finish() {
  const int64_t rows = rows_;
  rows_ = 0;
  // Every field column is finished (the builders start empty again), the schema picks its own.
  ARROW_ASSIGN_OR_RAISE(auto fields, frame_fields_.Finish());
  arrow::ArrayVector columns;
  for (const auto& field : schema_->fields()) {
    const std::string& name = field->name();
    std::shared_ptr<arrow::Array> column;
    const auto* known = std::find(FrameFieldBuilders::kNames.begin(), FrameFieldBuilders::kNames.end(), name);
    if (name == "path") {
      ARROW_ASSIGN_OR_RAISE(column, arrow::MakeArrayFromScalar(arrow::LargeStringScalar(path_), rows));
    } else if (known != FrameFieldBuilders::kNames.end()) {
      column = fields[known - FrameFieldBuilders::kNames.begin()];
    } else {  // data
      const auto& storage_type = static_cast<const arrow::ExtensionType&>(*image_type_).storage_type();
      ARROW_ASSIGN_OR_RAISE(auto pixels, pixels_.Finish());
      auto values = std::make_shared<arrow::UInt8Array>(pixels->size(), pixels);
      auto storage = std::make_shared<arrow::FixedSizeListArray>(storage_type, rows, values);
      column = arrow::ExtensionType::WrapArray(image_type_, storage);
    }
    columns.push_back(std::move(column));
  }
  pixels_.Reset();  // when no data column was produced
  return arrow::RecordBatch::Make(schema_, rows, std::move(columns));
}

}  // namespace ketch::media
