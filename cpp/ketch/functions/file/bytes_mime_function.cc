// bytes_guess_mime_type(binary): Daft 0.7.26's `functions.guess_mime_type` over raw bytes: the
// MIME type told by the value's first bytes, or null when it is none of Daft's list (PNG, JPEG,
// GIF, WEBP, PDF, ZIP, MP3, WAV, OGG, MP4, MPEG, HDF5, HTML). Daft's exact signatures, probed
// value by value against Daft: JPEG is FF D8; GIF "GIF8"; MP3 "ID3" or an FF FB frame; MP4 any
// "ftyp" box at byte 4; MPEG a pack header 00 00 01 BA; HDF5 its 8-byte signature (IANA's
// registration); HTML "<html", "<HTML", "<!DOCTYPE html" or "<!DOCTYPE HTML" at the start. Unlike
// `file.guess_mime_type` (SniffMimeType: every type it knows, text/plain, octet-stream), an
// unknown value is null here, as in Daft.

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <cstring>
#include <optional>
#include <string_view>

#include "ketch/expr/function_registry.h"

namespace ketch::file {
namespace {

bool At(std::string_view v, size_t at, std::string_view magic) {
  return v.size() >= at + magic.size() && v.compare(at, magic.size(), magic) == 0;
}

std::optional<std::string_view> DaftMimeOfBytes(std::string_view v) {
  using namespace std::string_view_literals;
  if (At(v, 0, "\x89PNG\r\n\x1a\n"sv)) return "image/png";
  if (At(v, 0, "\xFF\xD8"sv)) return "image/jpeg";
  if (At(v, 0, "GIF8"sv)) return "image/gif";
  if (At(v, 0, "RIFF"sv) && At(v, 8, "WEBP"sv)) return "image/webp";
  if (At(v, 0, "RIFF"sv) && At(v, 8, "WAVE"sv)) return "audio/wav";
  if (At(v, 0, "%PDF"sv)) return "application/pdf";
  if (At(v, 0, "PK\x03\x04"sv)) return "application/zip";
  if (At(v, 0, "ID3"sv) || At(v, 0, "\xFF\xFB"sv)) return "audio/mpeg";
  if (At(v, 0, "OggS"sv)) return "audio/ogg";
  if (At(v, 4, "ftyp"sv)) return "video/mp4";
  if (At(v, 0, "\x00\x00\x01\xBA"sv)) return "video/mpeg";
  if (At(v, 0, "\x89HDF\r\n\x1a\n"sv)) return "application/vnd.hdfgroup.hdf5";
  for (auto html : {"<html"sv, "<HTML"sv, "<!DOCTYPE html"sv, "<!DOCTYPE HTML"sv}) {
    if (At(v, 0, html)) return "text/html";
  }
  return std::nullopt;
}

class BytesGuessMimeType : public ScalarFunction {
 public:
  std::string name() const override { return "bytes_guess_mime_type"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions&) const override {
    if (types.size() != 1) {
      return arrow::Status::Invalid("guess_mime_type takes 1 argument, got ", types.size());
    }
    const auto id = types[0]->id();
    if (id != arrow::Type::BINARY && id != arrow::Type::LARGE_BINARY &&
        id != arrow::Type::FIXED_SIZE_BINARY && id != arrow::Type::NA) {
      return arrow::Status::TypeError("guess_mime_type expects binary data, but ", exprs[0]->ToString(),
                                      " has type ", types[0]->ToString());
    }
    return arrow::large_utf8();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto array, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(array, arrow::large_binary()));
    const auto holder = cast.make_array();
    const auto& bytes = static_cast<const arrow::LargeBinaryArray&>(*holder);
    arrow::LargeStringBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(ctx.num_rows));
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      auto mime = bytes.IsNull(i) ? std::nullopt : DaftMimeOfBytes(bytes.GetView(i));
      ARROW_RETURN_NOT_OK(mime ? builder.Append(*mime) : builder.AppendNull());
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterBytesMimeFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<BytesGuessMimeType>());
}

}  // namespace ketch::file
