#include "ketch/functions/media/media_input.h"

#include <arrow/compute/api.h>

#include "ketch/io/redact.h"
#include "ketch/types/file_type.h"

namespace ketch::media {

arrow::Status MediaBytes::CheckType(const std::string& function, const std::shared_ptr<arrow::DataType>& type,
                                    const ExprPtr& expr) {
  const auto id = type->id();
  if (id == arrow::Type::BINARY || id == arrow::Type::LARGE_BINARY || id == arrow::Type::BINARY_VIEW ||
      IsFileType(*type) || IsReadWithPath(*type)) {
    return arrow::Status::OK();
  }
  return arrow::Status::TypeError(function, " expects encoded bytes (binary) or a File column, but ",
                                  expr ? expr->ToString() : "?", " has type ", type->ToString());
}

arrow::Result<MediaBytes> MediaBytes::Make(const arrow::Datum& arg, const FunctionOptions& options,
                                           const EvalContext& ctx) {
  ARROW_ASSIGN_OR_RAISE(auto input, ToArray(arg, ctx.num_rows));
  if (IsFileType(*input->type())) {
    ARROW_ASSIGN_OR_RAISE(auto file_read, FunctionRegistry::Global()->Get("file_read"));
    FunctionOptions read_options = options;
    read_options["with_path"] = std::make_shared<arrow::BooleanScalar>(true);
    ARROW_ASSIGN_OR_RAISE(auto read, file_read->Execute({arrow::Datum(input)}, read_options, ctx));
    input = read.make_array();
  }
  std::shared_ptr<arrow::LargeStringArray> paths;
  if (IsReadWithPath(*input->type())) {
    // Flatten applies the struct's validity and offset to its children.
    ARROW_ASSIGN_OR_RAISE(auto fields, static_cast<const arrow::StructArray&>(*input).Flatten());
    paths = std::static_pointer_cast<arrow::LargeStringArray>(fields[0]);
    input = fields[1];
  }
  ARROW_ASSIGN_OR_RAISE(auto binary, arrow::compute::Cast(*input, arrow::large_binary()));
  return MediaBytes(std::static_pointer_cast<arrow::LargeBinaryArray>(binary), std::move(paths));
}

std::string MediaBytes::Where(int64_t i) const {
  if (paths_ == nullptr || paths_->IsNull(i)) return "";
  return " ('" + io::Redact(paths_->GetView(i)) + "')";
}

bool IsReadWithPath(const arrow::DataType& type) {
  return type.id() == arrow::Type::STRUCT && type.num_fields() == 2 && type.field(0)->name() == "path" &&
         type.field(0)->type()->id() == arrow::Type::LARGE_STRING && type.field(1)->name() == "bytes" &&
         type.field(1)->type()->id() == arrow::Type::LARGE_BINARY;
}

std::shared_ptr<arrow::Buffer> MediaBytes::Value(int64_t i) const {
  const int64_t start = bytes_->value_offset(i);
  return arrow::SliceBuffer(bytes_->value_data(), start, bytes_->value_length(i));
}

arrow::Result<bool> NullOnError(const FunctionOptions& options, const std::string& function) {
  if (!HasOption(options, "on_error")) return false;
  ARROW_ASSIGN_OR_RAISE(auto on_error, GetStringOption(options, "on_error", function));
  if (on_error != "raise" && on_error != "null") {
    return arrow::Status::Invalid(function, ": on_error must be 'raise' or 'null', got '", on_error, "'");
  }
  return on_error == "null";
}

}  // namespace ketch::media
