// partition_iceberg_bucket(; n) and partition_iceberg_truncate(; w): the Iceberg spec's bucket
// transform (appendix B: 32-bit hash requirements) and truncate transform
// (https://iceberg.apache.org/spec/#truncate-transform-details).

#include <arrow/api.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/decimal.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "ketch/expr/uuid_cast.h"
#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/math/hash_kernels.h"
#include "ketch/functions/partitioning/partition_common.h"
#include "ketch/functions/partitioning/partitioning_functions.h"

namespace ketch::partitioning {
namespace {

// Iceberg's hashLong: murmur3_32 of the 8 little-endian bytes.
uint32_t HashLong(int64_t v) {
  uint8_t bytes[8];
  for (int k = 0; k < 8; ++k) bytes[k] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * k));
  return math::Murmur3_32(bytes, 8, 0);
}

// The minimal big-endian two's complement bytes of a 128-bit value (Java BigInteger.toByteArray).
uint32_t HashDecimal128(const arrow::Decimal128& value) {
  uint8_t be[16];
  const uint64_t high = static_cast<uint64_t>(value.high_bits());
  const uint64_t low = value.low_bits();
  for (int k = 0; k < 8; ++k) {
    be[k] = static_cast<uint8_t>(high >> (8 * (7 - k)));
    be[8 + k] = static_cast<uint8_t>(low >> (8 * (7 - k)));
  }
  int start = 0;
  // Drop a leading byte while it is pure sign extension of the next byte's top bit.
  while (start < 15 && ((be[start] == 0x00 && (be[start + 1] & 0x80) == 0) ||
                        (be[start] == 0xFF && (be[start + 1] & 0x80) != 0))) {
    ++start;
  }
  return math::Murmur3_32(be + start, static_cast<size_t>(16 - start), 0);
}

bool IsIntegerOrTemporal(arrow::Type::type id) {
  return arrow::is_integer(id) || id == arrow::Type::DATE32 || id == arrow::Type::DATE64 ||
         id == arrow::Type::TIME32 || id == arrow::Type::TIME64 || id == arrow::Type::TIMESTAMP;
}

bool IsBucketable(const arrow::DataType& type) {
  const auto id = type.id();
  return IsIntegerOrTemporal(id) || id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING ||
         id == arrow::Type::BINARY || id == arrow::Type::LARGE_BINARY ||
         id == arrow::Type::FIXED_SIZE_BINARY || id == arrow::Type::DECIMAL128 || IsUuidType(type);
}

// The long Iceberg hashes for an integer or temporal value at `i` (dates as days, times and
// timestamps as microseconds).
arrow::Result<std::vector<int64_t>> AsIcebergLongs(const arrow::Array& input) {
  const auto& type = *input.type();
  // Integers: widen (unsigned 64-bit values above 2^63 wrap, as Daft's reinterpretation).
  std::vector<int64_t> out(static_cast<size_t>(input.length()));
  const auto read = [&](auto* raw) {
    for (int64_t i = 0; i < input.length(); ++i) out[i] = static_cast<int64_t>(raw[i]);
  };
  const auto& data = *input.data();
  switch (type.id()) {
    case arrow::Type::INT8:
      read(data.GetValues<int8_t>(1));
      break;
    case arrow::Type::INT16:
      read(data.GetValues<int16_t>(1));
      break;
    case arrow::Type::INT32:
    case arrow::Type::DATE32:
      read(data.GetValues<int32_t>(1));
      break;
    case arrow::Type::INT64:
      read(data.GetValues<int64_t>(1));
      break;
    case arrow::Type::UINT8:
      read(data.GetValues<uint8_t>(1));
      break;
    case arrow::Type::UINT16:
      read(data.GetValues<uint16_t>(1));
      break;
    case arrow::Type::UINT32:
      read(data.GetValues<uint32_t>(1));
      break;
    case arrow::Type::UINT64:
      read(data.GetValues<uint64_t>(1));
      break;
    case arrow::Type::DATE64:
      read(data.GetValues<int64_t>(1));
      for (auto& v : out) v = temporal::FloorDiv(v, 86400000);
      break;
    case arrow::Type::TIME32: {
      read(data.GetValues<int32_t>(1));
      const auto unit = static_cast<const arrow::Time32Type&>(type).unit();
      for (auto& v : out) v = ToMicros(v, unit);
      break;
    }
    case arrow::Type::TIME64: {
      read(data.GetValues<int64_t>(1));
      const auto unit = static_cast<const arrow::Time64Type&>(type).unit();
      for (auto& v : out) v = ToMicros(v, unit);
      break;
    }
    case arrow::Type::TIMESTAMP: {
      read(data.GetValues<int64_t>(1));
      const auto unit = static_cast<const arrow::TimestampType&>(type).unit();
      for (auto& v : out) v = ToMicros(v, unit);
      break;
    }
    default:
      return arrow::Status::TypeError("partition_iceberg_bucket: not an integer or temporal type: ",
                                      type.ToString());
  }
  return out;
}

arrow::Result<int64_t> PositiveOption(const FunctionOptions& options, const std::string& key,
                                      const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto value, GetIntOption(options, key, function));
  if (value <= 0 || value > INT32_MAX) {
    return arrow::Status::Invalid(function, ": ", key, " must be between 1 and 2147483647, got ", value);
  }
  return value;
}

class IcebergBucket : public ScalarFunction {
 public:
  std::string name() const override { return "partition_iceberg_bucket"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectOneArgument(name(), arg_types, arg_exprs));
    ARROW_RETURN_NOT_OK(PositiveOption(options, "n", name()).status());
    if (!IsBucketable(*arg_types[0])) {
      return CannotApply(name(), arg_types, arg_exprs,
                         "expected an integer, date, time, timestamp, string, binary, decimal128 or uuid");
    }
    return arrow::int32();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(const int64_t n, PositiveOption(options, "n", name()));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::EXTENSION) {
      input = static_cast<const arrow::ExtensionArray&>(*input).storage();
    }
    const int64_t len = input->length();
    std::vector<uint32_t> hashes(static_cast<size_t>(len));
    const auto id = input->type_id();
    if (IsIntegerOrTemporal(id)) {
      ARROW_ASSIGN_OR_RAISE(auto longs, AsIcebergLongs(*input));
      for (int64_t i = 0; i < len; ++i) hashes[i] = HashLong(longs[i]);
    } else if (id == arrow::Type::DECIMAL128) {
      const auto& decimals = static_cast<const arrow::Decimal128Array&>(*input);
      for (int64_t i = 0; i < len; ++i) {
        if (decimals.IsValid(i)) hashes[i] = HashDecimal128(arrow::Decimal128(decimals.GetValue(i)));
      }
    } else if (id == arrow::Type::FIXED_SIZE_BINARY) {
      const auto& bytes = static_cast<const arrow::FixedSizeBinaryArray&>(*input);
      for (int64_t i = 0; i < len; ++i) {
        if (bytes.IsValid(i)) hashes[i] = math::Murmur3_32(bytes.GetValue(i), bytes.byte_width(), 0);
      }
    } else {
      const auto hash_views = [&](const auto& array) {
        for (int64_t i = 0; i < len; ++i) {
          if (array.IsNull(i)) continue;
          const auto view = array.GetView(i);
          hashes[i] = math::Murmur3_32(reinterpret_cast<const uint8_t*>(view.data()), view.size(), 0);
        }
      };
      switch (id) {
        case arrow::Type::STRING:
        case arrow::Type::BINARY:
          hash_views(static_cast<const arrow::BinaryArray&>(*input));
          break;
        case arrow::Type::LARGE_STRING:
        case arrow::Type::LARGE_BINARY:
          hash_views(static_cast<const arrow::LargeBinaryArray&>(*input));
          break;
        default:
          return arrow::Status::TypeError(name(), ": cannot bucket ", input->type()->ToString());
      }
    }
    arrow::Int32Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(len));
    for (int64_t i = 0; i < len; ++i) {
      if (input->IsNull(i)) {
        out.UnsafeAppendNull();
      } else {
        out.UnsafeAppend(static_cast<int32_t>((hashes[i] & 0x7FFFFFFFu) % static_cast<uint32_t>(n)));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
    return arrow::Datum(result);
  }
};

// v - (((v % w) + w) % w) in 128 bits: the floor of v to a multiple of w.
__int128 TruncateTo(__int128 v, __int128 w) { return v - (((v % w) + w) % w); }

class IcebergTruncate : public ScalarFunction {
 public:
  std::string name() const override { return "partition_iceberg_truncate"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectOneArgument(name(), arg_types, arg_exprs));
    ARROW_RETURN_NOT_OK(PositiveOption(options, "w", name()).status());
    const auto id = arg_types[0]->id();
    if (!(arrow::is_integer(id) || id == arrow::Type::DECIMAL128 || id == arrow::Type::STRING ||
          id == arrow::Type::LARGE_STRING || id == arrow::Type::BINARY || id == arrow::Type::LARGE_BINARY)) {
      return CannotApply(name(), arg_types, arg_exprs, "expected an integer, decimal128, string or binary");
    }
    return arg_types[0];
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(const int64_t w, PositiveOption(options, "w", name()));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    const auto& type = input->type();
    const int64_t len = input->length();
    const auto id = type->id();
    if (arrow::is_integer(id)) return TruncateIntegers(*input, w, ctx);
    std::unique_ptr<arrow::ArrayBuilder> builder;
    ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), type, &builder));
    ARROW_RETURN_NOT_OK(builder->Reserve(len));
    if (id == arrow::Type::DECIMAL128) {
      const auto& decimals = static_cast<const arrow::Decimal128Array&>(*input);
      auto& out = static_cast<arrow::Decimal128Builder&>(*builder);
      for (int64_t i = 0; i < len; ++i) {
        if (decimals.IsNull(i)) {
          out.UnsafeAppendNull();
          continue;
        }
        const arrow::Decimal128 value(decimals.GetValue(i));
        const __int128 v = (static_cast<__int128>(value.high_bits()) << 64) | value.low_bits();
        const __int128 t = TruncateTo(v, w);
        const arrow::Decimal128 truncated(static_cast<int64_t>(t >> 64), static_cast<uint64_t>(t));
        const auto& dt = static_cast<const arrow::Decimal128Type&>(*type);
        if (!truncated.FitsInPrecision(dt.precision())) {
          return arrow::Status::Invalid(name(), ": truncating the value at source row ", ctx.SourceRow(i),
                                        " to width ", w, " overflows ", type->ToString());
        }
        out.UnsafeAppend(truncated);
      }
    } else {
      const bool is_string = id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING;
      const auto cut = [&](const auto& array, auto& out) -> arrow::Status {
        for (int64_t i = 0; i < len; ++i) {
          if (array.IsNull(i)) {
            ARROW_RETURN_NOT_OK(out.AppendNull());
            continue;
          }
          const auto view = array.GetView(i);
          size_t end = std::min<size_t>(view.size(), static_cast<size_t>(w));
          if (is_string) {
            // The byte length of the first w code points (continuation bytes are 10xxxxxx).
            int64_t points = 0;
            end = 0;
            while (end < view.size()) {
              if ((static_cast<uint8_t>(view[end]) & 0xC0) != 0x80) {
                if (points == w) break;
                ++points;
              }
              ++end;
            }
          }
          ARROW_RETURN_NOT_OK(out.Append(view.substr(0, end)));
        }
        return arrow::Status::OK();
      };
      if (id == arrow::Type::STRING || id == arrow::Type::BINARY) {
        ARROW_RETURN_NOT_OK(cut(static_cast<const arrow::BinaryArray&>(*input),
                                static_cast<arrow::BinaryBuilder&>(*builder)));
      } else {
        ARROW_RETURN_NOT_OK(cut(static_cast<const arrow::LargeBinaryArray&>(*input),
                                static_cast<arrow::LargeBinaryBuilder&>(*builder)));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto result, builder->Finish());
    return arrow::Datum(result);
  }

 private:
  arrow::Result<arrow::Datum> TruncateIntegers(const arrow::Array& input, int64_t w,
                                               const EvalContext& ctx) const {
    const auto run = [&](auto tag) -> arrow::Result<arrow::Datum> {
      using CType = decltype(tag);
      const auto* raw = input.data()->GetValues<CType>(1);
      const int64_t len = input.length();
      std::vector<CType> out(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) {
        if (input.IsNull(i)) continue;
        const __int128 t = TruncateTo(static_cast<__int128>(raw[i]), w);
        if (t < static_cast<__int128>(std::numeric_limits<CType>::min())) {
          return arrow::Status::Invalid(name(), ": truncating ", static_cast<int64_t>(raw[i]),
                                        " (source row ", ctx.SourceRow(i), ") to width ", w, " overflows ",
                                        input.type()->ToString());
        }
        out[i] = static_cast<CType>(t);
      }
      auto validity = input.null_count() > 0 ? input.data()->buffers[0] : nullptr;
      if (validity && input.offset() != 0) {
        ARROW_ASSIGN_OR_RAISE(validity, arrow::internal::CopyBitmap(arrow::default_memory_pool(),
                                                                    validity->data(), input.offset(), len));
      }
      return arrow::Datum(arrow::MakeArray(arrow::ArrayData::Make(
          input.type(), len, {validity, arrow::Buffer::FromVector(std::move(out))}, input.null_count())));
    };
    switch (input.type_id()) {
      case arrow::Type::INT8:
        return run(int8_t{});
      case arrow::Type::INT16:
        return run(int16_t{});
      case arrow::Type::INT32:
        return run(int32_t{});
      case arrow::Type::INT64:
        return run(int64_t{});
      case arrow::Type::UINT8:
        return run(uint8_t{});
      case arrow::Type::UINT16:
        return run(uint16_t{});
      case arrow::Type::UINT32:
        return run(uint32_t{});
      case arrow::Type::UINT64:
        return run(uint64_t{});
      default:
        return arrow::Status::TypeError(name(), ": not an integer: ", input.type()->ToString());
    }
  }
};

}  // namespace

arrow::Status RegisterIcebergTransforms() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<IcebergBucket>()));
  return registry->Register(std::make_shared<IcebergTruncate>());
}

}  // namespace ketch::partitioning
