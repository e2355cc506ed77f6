#pragma once

#include <arrow/result.h>
#include <arrow/util/compression.h>

#include <memory>
#include <string>
#include <string_view>

namespace ketch::codec {

/// The byte codecs of encode/decode (Daft's set plus Arrow's other compressions).
enum class BinaryCodec { kUtf8, kBase64, kHex, kDeflate, kZlib, kGzip, kZstd, kLz4, kBrotli, kBz2 };

/// Parses a codec name (case-insensitive; "utf-8"/"utf8", "gzip"/"gz", "bz2"/"bzip2", ...).
/// Errors (Invalid) name `function`, the codec and the supported names; a compression this
/// build of Arrow lacks is NotImplemented.
arrow::Result<BinaryCodec> ParseBinaryCodec(std::string_view name, const std::string& function);

/// The canonical name ("gzip", "utf-8", ...).
std::string_view BinaryCodecName(BinaryCodec codec);

/// Encodes or decodes single values with one codec. Holds the Arrow codec and streaming
/// decompressor it reuses between values, so an instance serves one thread (make one per morsel).
class BinaryTransform {
 public:
  static arrow::Result<std::unique_ptr<BinaryTransform>> Make(BinaryCodec codec, bool encode);

  /// Replaces `*output` with the encoded (or decoded) `input`. Errors are Invalid and describe
  /// the value's problem (never its bytes).
  arrow::Status Apply(std::string_view input, std::string* output);
  /// The most bytes one decompressed value may have (default 4 GiB): past it Decompress stops
  /// (having held at most this much) and returns Invalid naming the limit. Decompression
  /// bombs (330 KB of zstd inflating to 1.3 GB) are refused this way.
  void set_max_output_bytes(size_t bytes) { max_output_bytes_ = bytes; }

 private:
  BinaryTransform(BinaryCodec codec, bool encode) : codec_(codec), encode_(encode) {}
  arrow::Status Compress(std::string_view input, std::string* output);
  arrow::Status CompressStreaming(std::string_view input, std::string* output);
  arrow::Status Decompress(std::string_view input, std::string* output);

  BinaryCodec codec_;
  bool encode_;
  std::unique_ptr<arrow::util::Codec> arrow_codec_;
  std::shared_ptr<arrow::util::Decompressor> decompressor_;
  size_t max_output_bytes_ = size_t{4} << 30;
};

}  // namespace ketch::codec
