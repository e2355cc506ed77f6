// hash(x, seed): XXH64 (the 64-bit xxHash, spec at github.com/Cyan4973/xxHash/doc) of each
// value's bytes, written here because Arrow's headers expose no seeded hash.

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <cstring>
#include <string_view>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/math/hash_kernels.h"
#include "ketch/functions/math/math_functions.h"

namespace ketch::math {
namespace {

constexpr uint64_t kP1 = 11400714785074694791ULL;
constexpr uint64_t kP2 = 14029467366897019727ULL;
constexpr uint64_t kP3 = 1609587929392839161ULL;
constexpr uint64_t kP4 = 9650029242287828579ULL;
constexpr uint64_t kP5 = 2870177450012600261ULL;

uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
uint64_t Read64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian hosts only (x86-64, aarch64)
}
uint32_t Read32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t Round(uint64_t acc, uint64_t input) { return Rotl(acc + input * kP2, 31) * kP1; }
uint64_t Merge(uint64_t acc, uint64_t v) { return (acc ^ Round(0, v)) * kP1 + kP4; }

}  // namespace

uint64_t Xxh64(const uint8_t* p, size_t len, uint64_t seed) {
  const uint8_t* end = p + len;
  uint64_t h;
  if (len >= 32) {
    uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    for (; p + 32 <= end; p += 32) {
      v1 = Round(v1, Read64(p));
      v2 = Round(v2, Read64(p + 8));
      v3 = Round(v3, Read64(p + 16));
      v4 = Round(v4, Read64(p + 24));
    }
    h = Rotl(v1, 1) + Rotl(v2, 7) + Rotl(v3, 12) + Rotl(v4, 18);
    h = Merge(Merge(Merge(Merge(h, v1), v2), v3), v4);
  } else {
    h = seed + kP5;
  }
  h += len;
  for (; p + 8 <= end; p += 8) h = Rotl(h ^ Round(0, Read64(p)), 27) * kP1 + kP4;
  if (p + 4 <= end) {
    h = Rotl(h ^ (static_cast<uint64_t>(Read32(p)) * kP1), 23) * kP2 + kP3;
    p += 4;
  }
  for (; p < end; ++p) h = Rotl(h ^ (*p * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

static uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t Murmur3_32(const uint8_t* data, size_t len, uint32_t seed) {
  constexpr uint32_t kC1 = 0xcc9e2d51, kC2 = 0x1b873593;
  uint32_t h = seed;
  const size_t blocks = len / 4;
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k;
    std::memcpy(&k, data + 4 * i, 4);
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

namespace {

class HashFunction : public ScalarFunction {
 public:
  std::string name() const override { return "hash"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    const auto id = arg_types[0]->id();
    if (!(arrow::is_base_binary_like(id) || arrow::is_primitive(id) || id == arrow::Type::NA)) {
      return arrow::Status::TypeError("hash expects a string, binary, number or boolean, got ",
                                      arg_exprs[0]->ToString(), " of type ", arg_types[0]->ToString());
    }
    ARROW_RETURN_NOT_OK(IntOption(options, "seed", 0, name()).status());
    return arrow::uint64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto seed_value, IntOption(options, "seed", 0, name()));
    const auto seed = static_cast<uint64_t>(seed_value);
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    arrow::UInt64Builder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(input->length()));
    const auto id = input->type_id();
    if (arrow::is_base_binary_like(id)) {
      if (id == arrow::Type::STRING || id == arrow::Type::BINARY) {
        const auto& a = static_cast<const arrow::BinaryArray&>(*input);
        for (int64_t i = 0; i < a.length(); ++i) {
          if (a.IsNull(i)) {
            builder.UnsafeAppendNull();
          } else {
            auto v = a.GetView(i);
            builder.UnsafeAppend(Xxh64(reinterpret_cast<const uint8_t*>(v.data()), v.size(), seed));
          }
        }
      } else {
        const auto& a = static_cast<const arrow::LargeBinaryArray&>(*input);
        for (int64_t i = 0; i < a.length(); ++i) {
          if (a.IsNull(i)) {
            builder.UnsafeAppendNull();
          } else {
            auto v = a.GetView(i);
            builder.UnsafeAppend(Xxh64(reinterpret_cast<const uint8_t*>(v.data()), v.size(), seed));
          }
        }
      }
    } else if (id == arrow::Type::BOOL) {
      const auto& a = static_cast<const arrow::BooleanArray&>(*input);
      for (int64_t i = 0; i < a.length(); ++i) {
        if (a.IsNull(i)) {
          builder.UnsafeAppendNull();
        } else {
          const uint8_t byte = a.Value(i) ? 1 : 0;
          builder.UnsafeAppend(Xxh64(&byte, 1, seed));
        }
      }
    } else if (id == arrow::Type::NA) {
      return arrow::MakeArrayOfNull(arrow::uint64(), input->length());
    } else {
      const int width = input->type()->byte_width();
      const uint8_t* base = input->data()->buffers[1]->data() + input->offset() * width;
      for (int64_t i = 0; i < input->length(); ++i) {
        if (input->IsNull(i)) {
          builder.UnsafeAppendNull();
        } else {
          builder.UnsafeAppend(Xxh64(base + i * width, width, seed));
        }
      }
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterHashFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<HashFunction>());
}

}  // namespace ketch::math
