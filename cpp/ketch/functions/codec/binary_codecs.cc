// Byte codecs for encode/decode: base64, hex and UTF-8 checks from arrow/util, compressions
// through arrow::util::Codec (the zlib, zstd, lz4, brotli and bz2 builds inside the pyarrow wheel).

#include "ketch/functions/codec/binary_codecs.h"

#include <arrow/util/base64.h>
#include <arrow/util/string.h>
#include <arrow/util/utf8.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace ketch::codec {
namespace {

struct CodecName {
  std::string_view name;
  BinaryCodec codec;
};

constexpr std::array<CodecName, 14> kCodecNames = {{{"utf-8", BinaryCodec::kUtf8},
                                                    {"utf8", BinaryCodec::kUtf8},
                                                    {"base64", BinaryCodec::kBase64},
                                                    {"hex", BinaryCodec::kHex},
                                                    {"deflate", BinaryCodec::kDeflate},
                                                    {"zlib", BinaryCodec::kZlib},
                                                    {"gzip", BinaryCodec::kGzip},
                                                    {"gz", BinaryCodec::kGzip},
                                                    {"zstd", BinaryCodec::kZstd},
                                                    {"lz4", BinaryCodec::kLz4},
                                                    {"brotli", BinaryCodec::kBrotli},
                                                    {"bz2", BinaryCodec::kBz2},
                                                    {"bzip2", BinaryCodec::kBz2},
                                                    {"zstandard", BinaryCodec::kZstd}}};

bool IsCompression(BinaryCodec codec) {
  return codec != BinaryCodec::kUtf8 && codec != BinaryCodec::kBase64 && codec != BinaryCodec::kHex;
}

arrow::Compression::type ArrowCompression(BinaryCodec codec) {
  switch (codec) {
    case BinaryCodec::kZstd:
      return arrow::Compression::ZSTD;
    case BinaryCodec::kLz4:
      return arrow::Compression::LZ4_FRAME;
    case BinaryCodec::kBrotli:
      return arrow::Compression::BROTLI;
    case BinaryCodec::kBz2:
      return arrow::Compression::BZ2;
    default:
      return arrow::Compression::GZIP;  // deflate, zlib and gzip: one zlib codec, three framings
  }
}

// Python's zlib/gzip and Daft's flate2 use zlib's default level 6; Arrow's gzip default is 9.
constexpr int kZlibDefaultLevel = 6;

arrow::Result<std::unique_ptr<arrow::util::Codec>> MakeArrowCodec(BinaryCodec codec) {
  const auto type = ArrowCompression(codec);
  if (type != arrow::Compression::GZIP) return arrow::util::Codec::Create(type);
  arrow::util::GZipCodecOptions options;
  options.compression_level = kZlibDefaultLevel;
  options.gzip_format = codec == BinaryCodec::kDeflate ? arrow::util::GZipFormat::DEFLATE
                        : codec == BinaryCodec::kZlib  ? arrow::util::GZipFormat::ZLIB
                                                       : arrow::util::GZipFormat::GZIP;
  return arrow::util::Codec::Create(type, options);
}

}  // namespace

arrow::Result<BinaryCodec> ParseBinaryCodec(std::string_view name, const std::string& function) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& entry : kCodecNames) {
    if (entry.name != lower) continue;
    if (IsCompression(entry.codec) && !arrow::util::Codec::IsAvailable(ArrowCompression(entry.codec))) {
      return arrow::Status::NotImplemented(function, ": codec '", name, "' is not in this build of Arrow");
    }
    return entry.codec;
  }
  return arrow::Status::Invalid(
      function, ": unsupported codec '", name,
      "'; supported: utf-8, base64, hex, deflate, zlib, gzip (gz), zstd, lz4, brotli, "
      "bz2 (case-insensitive)");
}

std::string_view BinaryCodecName(BinaryCodec codec) {
  for (const auto& entry : kCodecNames) {
    if (entry.codec == codec) return entry.name;
  }
  return "?";
}

arrow::Result<std::unique_ptr<BinaryTransform>> BinaryTransform::Make(BinaryCodec codec, bool encode) {
  std::unique_ptr<BinaryTransform> transform(new BinaryTransform(codec, encode));
  if (IsCompression(codec)) {
    ARROW_ASSIGN_OR_RAISE(transform->arrow_codec_, MakeArrowCodec(codec));
    if (!encode) {
      ARROW_ASSIGN_OR_RAISE(transform->decompressor_, transform->arrow_codec_->MakeDecompressor());
    }
  }
  if (codec == BinaryCodec::kUtf8) arrow::util::InitializeUTF8();
  return transform;
}

arrow::Status BinaryTransform::Apply(std::string_view input, std::string* output) {
  switch (codec_) {
    case BinaryCodec::kUtf8:
      if (!arrow::util::ValidateUTF8(input)) return arrow::Status::Invalid("invalid UTF-8");
      output->assign(input);
      return arrow::Status::OK();
    case BinaryCodec::kBase64:
      if (encode_) {
        *output = arrow::util::base64_encode(input);
        return arrow::Status::OK();
      } else {
        auto decoded = arrow::util::base64_decode(input);
        if (!decoded.ok()) return arrow::Status::Invalid("invalid base64: ", decoded.status().message());
        *output = std::move(*decoded);
        return arrow::Status::OK();
      }
    case BinaryCodec::kHex:
      if (encode_) {
        *output = arrow::HexEncode(input);
        std::transform(output->begin(), output->end(), output->begin(),
                       [](unsigned char c) { return std::tolower(c); });
        return arrow::Status::OK();
      } else {
        if (input.size() % 2 != 0) return arrow::Status::Invalid("invalid hex: odd length ", input.size());
        // Arrow's parser reads upper-case digits only; both cases are hex.
        std::string upper(input);
        std::transform(upper.begin(), upper.end(), upper.begin(),
                       [](unsigned char c) { return std::toupper(c); });
        output->resize(input.size() / 2);
        auto status = arrow::ParseHexValues(upper, reinterpret_cast<uint8_t*>(output->data()));
        if (!status.ok()) return arrow::Status::Invalid("invalid hex: ", status.message());
        return arrow::Status::OK();
      }
    default:
      return encode_ ? Compress(input, output) : Decompress(input, output);
  }
}

arrow::Status BinaryTransform::Compress(std::string_view input, std::string* output) {
  // Arrow's bz2 codec compresses only as a stream.
  if (codec_ == BinaryCodec::kBz2) return CompressStreaming(input, output);
  const auto* data = reinterpret_cast<const uint8_t*>(input.data());
  const int64_t bound = arrow_codec_->MaxCompressedLen(static_cast<int64_t>(input.size()), data);
  output->resize(static_cast<size_t>(bound));
  ARROW_ASSIGN_OR_RAISE(auto written, arrow_codec_->Compress(static_cast<int64_t>(input.size()), data, bound,
                                                             reinterpret_cast<uint8_t*>(output->data())));
  output->resize(static_cast<size_t>(written));
  return arrow::Status::OK();
}

arrow::Status BinaryTransform::CompressStreaming(std::string_view input, std::string* output) {
  ARROW_ASSIGN_OR_RAISE(auto compressor, arrow_codec_->MakeCompressor());
  const auto* in = reinterpret_cast<const uint8_t*>(input.data());
  int64_t in_left = static_cast<int64_t>(input.size());
  size_t written = 0;
  output->resize(std::max<size_t>(64, input.size() / 2 + 64));
  auto room = [&] { return static_cast<int64_t>(output->size() - written); };
  auto out = [&] { return reinterpret_cast<uint8_t*>(output->data()) + written; };
  while (in_left > 0) {
    if (room() == 0) output->resize(output->size() * 2);
    ARROW_ASSIGN_OR_RAISE(auto result, compressor->Compress(in_left, in, room(), out()));
    in += result.bytes_read;
    in_left -= result.bytes_read;
    written += static_cast<size_t>(result.bytes_written);
    if (result.bytes_read == 0) output->resize(output->size() * 2);
  }
  while (true) {
    if (room() == 0) output->resize(output->size() * 2);
    ARROW_ASSIGN_OR_RAISE(auto end, compressor->End(room(), out()));
    written += static_cast<size_t>(end.bytes_written);
    if (!end.should_retry) break;
    output->resize(output->size() * 2);
  }
  output->resize(written);
  return arrow::Status::OK();
}

arrow::Status BinaryTransform::Decompress(std::string_view input, std::string* output) {
  // A value that inflates past this is refused rather than exhausting memory (a "zip bomb").
  const size_t kMaxDecompressedBytes = max_output_bytes_;
  ARROW_RETURN_NOT_OK(decompressor_->Reset());
  const auto* in = reinterpret_cast<const uint8_t*>(input.data());
  int64_t in_left = static_cast<int64_t>(input.size());
  size_t written = 0;
  int stalls = 0;
  output->resize(std::min(kMaxDecompressedBytes,
                          std::max<size_t>(256, std::min<size_t>(input.size() * 4, size_t{64} << 20))));
  auto grow = [&]() -> arrow::Status {
    if (output->size() >= kMaxDecompressedBytes) {
      output->clear();
      output->shrink_to_fit();
      return arrow::Status::Invalid(
          "the decompressed value is larger than ", kMaxDecompressedBytes,
          " bytes, the most one value may have under this query's memory budget (a decompression bomb?)");
    }
    output->resize(std::min(output->size() * 2, kMaxDecompressedBytes));
    return arrow::Status::OK();
  };
  while (true) {
    if (written == output->size()) ARROW_RETURN_NOT_OK(grow());
    const int64_t room = static_cast<int64_t>(output->size() - written);
    auto result =
        decompressor_->Decompress(in_left, in, room, reinterpret_cast<uint8_t*>(output->data()) + written);
    if (!result.ok()) return arrow::Status::Invalid("corrupt input: ", result.status().message());
    in += result->bytes_read;
    in_left -= result->bytes_read;
    written += static_cast<size_t>(result->bytes_written);
    if (decompressor_->IsFinished()) {
      if (in_left == 0) break;
      // Concatenated gzip members or zstd/lz4 frames: decode the next one.
      ARROW_RETURN_NOT_OK(decompressor_->Reset());
      continue;
    }
    if (result->bytes_written == room) {  // output full: more may come
      ARROW_RETURN_NOT_OK(grow());
      continue;
    }
    // All input taken, room left over, and the stream has not ended: it was cut short.
    if (in_left == 0) return arrow::Status::Invalid("truncated input: the compressed stream does not end");
    const bool progress = result->bytes_read > 0 || result->bytes_written > 0;
    stalls = progress ? 0 : stalls + 1;
    if (stalls > 2) return arrow::Status::Invalid("corrupt input: the decompressor makes no progress");
    if (result->need_more_output) ARROW_RETURN_NOT_OK(grow());
  }
  output->resize(written);
  return arrow::Status::OK();
}

}  // namespace ketch::codec
