#include "ketch/types/image_array.h"

#include <cstring>

namespace ketch {

arrow::Result<ImageArrayReader> ImageArrayReader::Make(const std::shared_ptr<arrow::Array>& array) {
  if (!IsImageType(*array->type())) {
    return arrow::Status::TypeError("expected an Image column, got ", array->type()->ToString());
  }
  const auto& ext_type = static_cast<const arrow::ExtensionType&>(*array->type());
  ImageArrayReader reader;
  reader.length_ = array->length();
  reader.storage_ = static_cast<const arrow::ExtensionArray&>(*array).storage();
  if (ext_type.extension_name() == "ketch.image") {
    const auto& st = static_cast<const arrow::StructArray&>(*reader.storage_);
    reader.data_ = std::static_pointer_cast<arrow::LargeBinaryArray>(st.field(0));
    reader.channel_ = std::static_pointer_cast<arrow::UInt16Array>(st.field(1));
    reader.height_ = std::static_pointer_cast<arrow::UInt32Array>(st.field(2));
    reader.width_ = std::static_pointer_cast<arrow::UInt32Array>(st.field(3));
    reader.mode_ = std::static_pointer_cast<arrow::UInt8Array>(st.field(4));
  } else {
    reader.fixed_type_ = std::static_pointer_cast<const FixedShapeImageType>(array->type());
    const auto& list = static_cast<const arrow::FixedSizeListArray&>(*reader.storage_);
    const auto& values = static_cast<const arrow::UInt8Array&>(*list.values());
    // Row i starts at (list offset + i) * list_size in the child; fold the list's offset in once.
    reader.fixed_values_ = values.raw_values() + list.offset() * list.value_length();
  }
  return reader;
}

arrow::Result<ImageView> ImageArrayReader::View(int64_t i) const {
  ImageView view;
  if (fixed_type_) {
    view.mode = fixed_type_->mode();
    view.height = fixed_type_->height();
    view.width = fixed_type_->width();
    view.data = fixed_values_ + i * view.num_bytes();
    return view;
  }
  ARROW_ASSIGN_OR_RAISE(view.mode, ModeForChannels(channel_->Value(i)));
  view.height = static_cast<int32_t>(height_->Value(i));
  view.width = static_cast<int32_t>(width_->Value(i));
  auto bytes = data_->GetView(i);
  if (static_cast<int64_t>(bytes.size()) != view.num_bytes()) {
    return arrow::Status::Invalid("image row ", i, " holds ", bytes.size(), " bytes but its shape ",
                                  view.height, "x", view.width, "x", view.channels(), " needs ",
                                  view.num_bytes());
  }
  view.data = reinterpret_cast<const uint8_t*>(bytes.data());
  return view;
}

ImageArrayBuilder::ImageArrayBuilder(std::optional<ImageMode> mode) : mode_(mode) {}

arrow::Status ImageArrayBuilder::Reserve(int64_t rows, int64_t bytes) {
  ARROW_RETURN_NOT_OK(offsets_.Reserve(rows + 1));
  ARROW_RETURN_NOT_OK(values_.Reserve(bytes));
  ARROW_RETURN_NOT_OK(channel_.Reserve(rows));
  ARROW_RETURN_NOT_OK(height_.Reserve(rows));
  ARROW_RETURN_NOT_OK(width_.Reserve(rows));
  ARROW_RETURN_NOT_OK(mode_builder_.Reserve(rows));
  return validity_.Reserve(rows);
}

arrow::Result<uint8_t*> ImageArrayBuilder::PrepareRow(int64_t bytes) {
  ARROW_RETURN_NOT_OK(values_.Reserve(bytes));
  return values_.mutable_data() + values_.length();
}

arrow::Status ImageArrayBuilder::CommitRow(int32_t height, int32_t width, ImageMode mode) {
  if (mode_ && *mode_ != mode) {
    return arrow::Status::Invalid("image of mode ", ModeName(mode), " in a column of mode ",
                                  ModeName(*mode_));
  }
  const int64_t bytes = int64_t{height} * width * ModeChannels(mode);
  if (values_.capacity() - values_.length() < bytes)
    return arrow::Status::Invalid("CommitRow without PrepareRow");
  if (offsets_.length() == 0) ARROW_RETURN_NOT_OK(offsets_.Append(0));
  values_.UnsafeAdvance(bytes);
  ARROW_RETURN_NOT_OK(offsets_.Append(values_.length()));
  ARROW_RETURN_NOT_OK(channel_.Append(static_cast<uint16_t>(ModeChannels(mode))));
  ARROW_RETURN_NOT_OK(height_.Append(static_cast<uint32_t>(height)));
  ARROW_RETURN_NOT_OK(width_.Append(static_cast<uint32_t>(width)));
  ARROW_RETURN_NOT_OK(mode_builder_.Append(static_cast<uint8_t>(mode)));
  return validity_.Append(true);
}

arrow::Status ImageArrayBuilder::Append(const ImageView& image) {
  ARROW_ASSIGN_OR_RAISE(uint8_t * out, PrepareRow(image.num_bytes()));
  std::memcpy(out, image.data, image.num_bytes());
  return CommitRow(image.height, image.width, image.mode);
}

arrow::Status ImageArrayBuilder::AppendNull() {
  if (offsets_.length() == 0) ARROW_RETURN_NOT_OK(offsets_.Append(0));
  ARROW_RETURN_NOT_OK(offsets_.Append(values_.length()));
  ARROW_RETURN_NOT_OK(channel_.Append(0));
  ARROW_RETURN_NOT_OK(height_.Append(0));
  ARROW_RETURN_NOT_OK(width_.Append(0));
  ARROW_RETURN_NOT_OK(mode_builder_.Append(0));
  ++null_count_;
  return validity_.Append(false);
}

arrow::Result<std::shared_ptr<arrow::Array>> ImageArrayBuilder::Finish() {
  const int64_t length = validity_.length();
  arrow::ArrayVector children(5);
  if (offsets_.length() == 0) ARROW_RETURN_NOT_OK(offsets_.Append(0));
  std::shared_ptr<arrow::Buffer> offsets, values;
  ARROW_RETURN_NOT_OK(offsets_.Finish(&offsets));
  ARROW_RETURN_NOT_OK(values_.Finish(&values));
  children[0] = std::make_shared<arrow::LargeBinaryArray>(length, std::move(offsets), std::move(values));
  ARROW_RETURN_NOT_OK(channel_.Finish(&children[1]));
  ARROW_RETURN_NOT_OK(height_.Finish(&children[2]));
  ARROW_RETURN_NOT_OK(width_.Finish(&children[3]));
  ARROW_RETURN_NOT_OK(mode_builder_.Finish(&children[4]));
  std::shared_ptr<arrow::Buffer> validity;
  ARROW_RETURN_NOT_OK(validity_.Finish(&validity));
  auto storage = std::make_shared<arrow::StructArray>(ImageType::StorageType(), length, children,
                                                      null_count_ ? validity : nullptr, null_count_);
  return arrow::ExtensionType::WrapArray(image_type(mode_), storage);
}

}  // namespace ketch
