// Hash kernels with Daft 0.7.26's byte rules (daft-core src/kernels/hashing.rs and
// src/array/ops/hash.rs): numbers hash their little-endian bytes at their own width, booleans the
// ASCII digit "1" or "0", decimals their text with the scale's digits ("1.50"), temporal types
// their stored integer; lists hash the bytes of their elements' hashes, structs chain their fields
// (each field's hash seeds the next).

#include "ketch/functions/math/hash_kernels.h"

#define XXH_INLINE_ALL
// SHA1_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but stay in libcrypto 3.x
// and are 4x faster per short value (see Sha1First8).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <arrow/util/bitmap_ops.h>
#include <openssl/sha.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

namespace ketch::math {
namespace {

constexpr uint32_t kMurmurDefaultSeed = 42;  // daft-hash MurBuildHasher::default()

uint64_t Sha1First8(const uint8_t* data, size_t len, bool seeded, uint64_t seed) {
  // OpenSSL's low-level SHA1_* calls on a stack context: no provider dispatch per value. EVP's
  // per-call set-up cost more than the hash itself on short strings: one core hashed 2.5 M
  // 8-byte strings/s with EVP_DigestInit_ex (digest fetched once, context reused), 3.7-5 M/s
  // with EVP_DigestInit_ex2, 10.5 M/s with SHA1_Init.
  SHA_CTX context;
  SHA1_Init(&context);
  if (seeded) {
    std::array<uint8_t, 8> prefix;
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<uint8_t>(seed >> (8 * i));
    SHA1_Update(&context, prefix.data(), prefix.size());
  }
  SHA1_Update(&context, data, len);
  std::array<unsigned char, SHA_DIGEST_LENGTH> digest;
  SHA1_Final(digest.data(), &context);
  uint64_t out = 0;
  for (int i = 7; i >= 0; --i) out = (out << 8) | digest[i];
  return out;
}

uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Daft's hash of a null scalar (numbers, booleans, decimals, temporal values): the xxHash
// functions use one constant (the unseeded hash of no bytes) whatever the seed; murmurhash3 and
// sha1 hash no bytes with the row's seed.
uint64_t NullScalarHash(HashKind kind, bool seeded, uint64_t seed) {
  if (kind == HashKind::kMurmur3 || kind == HashKind::kSha1) return HashBytes(kind, nullptr, 0, seeded, seed);
  return HashBytes(kind, nullptr, 0, false, 0);
}

class Hasher {
 public:
  Hasher(HashKind kind, const uint64_t* seeds) : kind_(kind), seeds_(seeds) {}

  uint64_t Bytes(int64_t row, const uint8_t* data, size_t len) const {
    return HashBytes(kind_, data, len, seeds_ != nullptr, Seed(row));
  }
  uint64_t NullScalar(int64_t row) const { return NullScalarHash(kind_, seeds_ != nullptr, Seed(row)); }
  uint64_t Seed(int64_t row) const { return seeds_ ? seeds_[row] : 0; }
  bool seeded() const { return seeds_ != nullptr; }
  HashKind kind() const { return kind_; }

 private:
  HashKind kind_;
  const uint64_t* seeds_;  // non-owning; null when unseeded
};

template <typename ArrayType>
void HashBinaryLike(const ArrayType& a, const Hasher& h, uint64_t* out) {
  for (int64_t i = 0; i < a.length(); ++i) {
    if (a.IsNull(i)) {
      out[i] = h.Bytes(i, nullptr, 0);
    } else {
      const std::string_view v = a.GetView(i);
      out[i] = h.Bytes(i, reinterpret_cast<const uint8_t*>(v.data()), v.size());
    }
  }
}

void HashFixedWidth(const arrow::Array& a, const Hasher& h, uint64_t* out) {
  const int width = a.type()->byte_width();
  const uint8_t* base = a.data()->buffers[1]->data() + a.offset() * width;
  for (int64_t i = 0; i < a.length(); ++i) {
    out[i] = a.IsNull(i) ? h.NullScalar(i) : h.Bytes(i, base + i * width, width);
  }
}

arrow::Result<std::shared_ptr<arrow::UInt64Array>> HashList(const arrow::Array& list,
                                                            const arrow::Array& child,
                                                            const std::vector<int64_t>& offsets,
                                                            const Hasher& h);

arrow::Status HashInto(const arrow::Array& values, const Hasher& h, uint64_t* out,
                       std::shared_ptr<arrow::Buffer>* validity) {
  const auto id = values.type_id();
  switch (id) {
    case arrow::Type::NA:
      for (int64_t i = 0; i < values.length(); ++i) out[i] = h.Bytes(i, nullptr, 0);
      return arrow::Status::OK();
    case arrow::Type::BOOL: {
      const auto& a = static_cast<const arrow::BooleanArray&>(values);
      for (int64_t i = 0; i < a.length(); ++i) {
        const uint8_t digit = a.Value(i) ? '1' : '0';
        out[i] = a.IsNull(i) ? h.NullScalar(i) : h.Bytes(i, &digit, 1);
      }
      return arrow::Status::OK();
    }
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      HashBinaryLike(static_cast<const arrow::BinaryArray&>(values), h, out);
      return arrow::Status::OK();
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      HashBinaryLike(static_cast<const arrow::LargeBinaryArray&>(values), h, out);
      return arrow::Status::OK();
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY_VIEW:
      HashBinaryLike(static_cast<const arrow::BinaryViewArray&>(values), h, out);
      return arrow::Status::OK();
    case arrow::Type::FIXED_SIZE_BINARY: {
      const auto& a = static_cast<const arrow::FixedSizeBinaryArray&>(values);
      const std::vector<uint8_t> zeros(a.byte_width(), 0);
      for (int64_t i = 0; i < a.length(); ++i) {
        out[i] = h.Bytes(i, a.IsNull(i) ? zeros.data() : a.GetValue(i), a.byte_width());
      }
      return arrow::Status::OK();
    }
    case arrow::Type::DECIMAL128: {
      const auto& a = static_cast<const arrow::Decimal128Array&>(values);
      const int32_t scale = static_cast<const arrow::Decimal128Type&>(*a.type()).scale();
      if (scale < 0) {
        return arrow::Status::TypeError("hash: decimals with a negative scale are not supported, got ",
                                        a.type()->ToString());
      }
      for (int64_t i = 0; i < a.length(); ++i) {
        if (a.IsNull(i)) {
          out[i] = h.NullScalar(i);
        } else {
          const std::string text = arrow::Decimal128(a.GetValue(i)).ToString(scale);
          out[i] = h.Bytes(i, reinterpret_cast<const uint8_t*>(text.data()), text.size());
        }
      }
      return arrow::Status::OK();
    }
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST: {
      std::vector<int64_t> offsets(values.length() + 1);
      std::shared_ptr<arrow::Array> child;
      if (id == arrow::Type::LIST) {
        const auto& a = static_cast<const arrow::ListArray&>(values);
        for (int64_t i = 0; i <= a.length(); ++i) offsets[i] = a.raw_value_offsets()[i];
        child = a.values();
      } else if (id == arrow::Type::LARGE_LIST) {
        const auto& a = static_cast<const arrow::LargeListArray&>(values);
        for (int64_t i = 0; i <= a.length(); ++i) offsets[i] = a.raw_value_offsets()[i];
        child = a.values();
      } else {
        const auto& a = static_cast<const arrow::FixedSizeListArray&>(values);
        for (int64_t i = 0; i <= a.length(); ++i) offsets[i] = (a.offset() + i) * a.list_type()->list_size();
        child = a.values();
      }
      ARROW_ASSIGN_OR_RAISE(auto hashed, HashList(values, *child, offsets, h));
      std::memcpy(out, hashed->raw_values(), values.length() * sizeof(uint64_t));
      *validity = hashed->null_bitmap();
      return arrow::Status::OK();
    }
    case arrow::Type::STRUCT: {
      const auto& a = static_cast<const arrow::StructArray&>(values);
      if (a.num_fields() == 0) return arrow::Status::Invalid("hash: cannot hash a struct with no fields");
      // Each field's hashes (null rows included, as Daft keeps their values) seed the next field.
      std::vector<uint64_t> seeds(h.seeded() ? values.length() : 0);
      for (int64_t i = 0; i < static_cast<int64_t>(seeds.size()); ++i) seeds[i] = h.Seed(i);
      for (int f = 0; f < a.num_fields(); ++f) {
        ARROW_ASSIGN_OR_RAISE(
            auto hashed, HashArray(*a.field(f), (f == 0 && !h.seeded()) ? nullptr : seeds.data(), h.kind()));
        seeds.assign(hashed->raw_values(), hashed->raw_values() + values.length());
      }
      std::memcpy(out, seeds.data(), values.length() * sizeof(uint64_t));
      if (a.null_count() > 0) {
        ARROW_ASSIGN_OR_RAISE(*validity, arrow::AllocateBitmap(values.length()));
        arrow::internal::CopyBitmap(a.null_bitmap_data(), a.offset(), a.length(), (*validity)->mutable_data(),
                                    0);
      }
      return arrow::Status::OK();
    }
    case arrow::Type::EXTENSION:
      return HashInto(*static_cast<const arrow::ExtensionArray&>(values).storage(), h, out, validity);
    case arrow::Type::DECIMAL256:
    case arrow::Type::MAP:
    case arrow::Type::SPARSE_UNION:
    case arrow::Type::DENSE_UNION:
    case arrow::Type::DICTIONARY:
      break;
    default:
      if (arrow::is_fixed_width(id) && values.type()->byte_width() > 0) {
        HashFixedWidth(values, h, out);
        return arrow::Status::OK();
      }
  }
  return arrow::Status::TypeError("hash: cannot hash values of type ", values.type()->ToString());
}

// Daft's hash_list: unseeded, the elements are hashed without a seed and each row hashes the bytes
// of its elements' hashes; seeded, a row's elements and then the row take the row's seed (except
// SHA-1, which hashes the row unseeded).
arrow::Result<std::shared_ptr<arrow::UInt64Array>> HashList(const arrow::Array& list,
                                                            const arrow::Array& child,
                                                            const std::vector<int64_t>& offsets,
                                                            const Hasher& h) {
  const int64_t n = list.length();
  ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(n * sizeof(uint64_t)));
  auto* out = reinterpret_cast<uint64_t*>(buffer->mutable_data());
  if (!h.seeded()) {
    const int64_t first = offsets[0];
    ARROW_ASSIGN_OR_RAISE(auto hashed, HashArray(*child.Slice(first, offsets[n] - first), nullptr, h.kind()));
    const auto* bytes = reinterpret_cast<const uint8_t*>(hashed->raw_values());
    for (int64_t i = 0; i < n; ++i) {
      out[i] = h.Bytes(i, bytes + (offsets[i] - first) * 8, (offsets[i + 1] - offsets[i]) * 8);
    }
  } else {
    std::vector<uint64_t> seeds;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t count = offsets[i + 1] - offsets[i];
      seeds.assign(count, h.Seed(i));
      ARROW_ASSIGN_OR_RAISE(auto hashed, HashArray(*child.Slice(offsets[i], count), seeds.data(), h.kind()));
      // Daft's hash_list hashes a row's bytes with SHA-1 unseeded (the elements did take the seed).
      out[i] = HashBytes(h.kind(), reinterpret_cast<const uint8_t*>(hashed->raw_values()), count * 8,
                         h.kind() != HashKind::kSha1, h.Seed(i));
    }
  }
  std::shared_ptr<arrow::Buffer> validity;
  if (list.null_count() > 0) {
    ARROW_ASSIGN_OR_RAISE(validity, arrow::AllocateBitmap(n));
    arrow::internal::CopyBitmap(list.null_bitmap_data(), list.offset(), n, validity->mutable_data(), 0);
  }
  return std::make_shared<arrow::UInt64Array>(n, std::move(buffer), std::move(validity));
}

}  // namespace

arrow::Result<HashKind> ParseHashKind(std::string_view name, std::string_view function) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "xxhash" || lower == "xxhash3_64") return HashKind::kXxh3_64;
  if (lower == "xxhash64") return HashKind::kXxh64;
  if (lower == "xxhash32") return HashKind::kXxh32;
  if (lower == "murmurhash3") return HashKind::kMurmur3;
  if (lower == "sha1") return HashKind::kSha1;
  return arrow::Status::Invalid(
      function, ": invalid hash function '", name,
      "'; use 'xxhash', 'xxhash32', 'xxhash64', 'xxhash3_64', 'murmurhash3' or 'sha1'");
}

uint64_t HashBytes(HashKind kind, const uint8_t* data, size_t len, bool seeded, uint64_t seed) {
  static const uint8_t kEmpty = 0;
  if (data == nullptr) data = &kEmpty;  // the libraries want a valid pointer even for no bytes
  switch (kind) {
    case HashKind::kXxh3_64:
      return XXH3_64bits_withSeed(data, len, seeded ? seed : 0);
    case HashKind::kXxh64:
      return XXH64(data, len, seeded ? seed : 0);
    case HashKind::kXxh32:
      return XXH32(data, len, seeded ? static_cast<uint32_t>(seed) : 0);
    case HashKind::kMurmur3:
      return Murmur3_32(data, len, seeded ? static_cast<uint32_t>(seed) : kMurmurDefaultSeed);
    case HashKind::kSha1:
      return Sha1First8(data, len, seeded, seed);
  }
  return 0;
}

uint32_t Murmur3_32(const uint8_t* data, size_t len, uint32_t seed) {
  constexpr uint32_t kC1 = 0xcc9e2d51, kC2 = 0x1b873593;
  uint32_t h = seed;
  const size_t blocks = len / 4;
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k;
    std::memcpy(&k, data + 4 * i, 4);  // little-endian hosts only (x86-64, aarch64)
    h ^= Rotl32(k * kC1, 15) * kC2;
    h = Rotl32(h, 13) * 5 + 0xe6546b64;
  }
  const uint8_t* tail = data + 4 * blocks;
  uint32_t k = 0;
  switch (len & 3) {
    case 3:
      k ^= static_cast<uint32_t>(tail[2]) << 16;
      [[fallthrough]];
    case 2:
      k ^= static_cast<uint32_t>(tail[1]) << 8;
      [[fallthrough]];
    case 1:
      k ^= tail[0];
      h ^= Rotl32(k * kC1, 15) * kC2;
  }
  h ^= static_cast<uint32_t>(len);
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return h;
}

arrow::Result<std::shared_ptr<arrow::UInt64Array>> HashArray(const arrow::Array& values,
                                                             const uint64_t* seeds, HashKind kind) {
  ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(values.length() * sizeof(uint64_t)));
  std::shared_ptr<arrow::Buffer> validity;
  ARROW_RETURN_NOT_OK(
      HashInto(values, Hasher(kind, seeds), reinterpret_cast<uint64_t*>(buffer->mutable_data()), &validity));
  return std::make_shared<arrow::UInt64Array>(values.length(), std::move(buffer), std::move(validity));
}

}  // namespace ketch::math
