// uuid() (version 4), uuidv7() and extract_{minute,hour,day,month}_uuid7: RFC 9562 UUIDs as
// Arrow's canonical arrow.uuid extension type (fixed_size_binary(16) storage).

#include <arrow/api.h>
#include <arrow/extension/uuid.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#if defined(__linux__)
#include <sys/random.h>
#else
#include <stdlib.h>  // arc4random_buf
#endif

#include "ketch/expr/uuid_cast.h"
#include "ketch/functions/partitioning/partition_common.h"
#include "ketch/functions/partitioning/partitioning_functions.h"

namespace ketch::partitioning {
namespace {

// Fills `out` with bytes from the OS's CSPRNG.
arrow::Status FillRandom(uint8_t* out, size_t len) {
#if defined(__linux__)
  while (len > 0) {
    const ssize_t got = getrandom(out, len, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return arrow::Status::IOError("uuid: getrandom failed: ", std::strerror(errno));
    }
    out += got;
    len -= static_cast<size_t>(got);
  }
#else
  arc4random_buf(out, len);
#endif
  return arrow::Status::OK();
}

arrow::Status CheckNoArguments(const std::string& name,
                               const std::vector<std::shared_ptr<arrow::DataType>>& arg_types,
                               const std::vector<ExprPtr>& arg_exprs) {
  if (!arg_types.empty()) return CannotApply(name, arg_types, arg_exprs, name + " takes no arguments");
  return arrow::Status::OK();
}

arrow::Result<arrow::Datum> WrapUuids(std::shared_ptr<arrow::Buffer> bytes, int64_t rows) {
  auto storage =
      std::make_shared<arrow::FixedSizeBinaryArray>(arrow::fixed_size_binary(16), rows, std::move(bytes));
  return arrow::Datum(arrow::ExtensionType::WrapArray(arrow::extension::uuid(), storage));
}

class UuidV4 : public ScalarFunction {
 public:
  std::string name() const override { return "uuid"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckNoArguments(name(), arg_types, arg_exprs));
    return arrow::extension::uuid();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>&, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(ctx.num_rows * 16));
    uint8_t* bytes = buffer->mutable_data();
    ARROW_RETURN_NOT_OK(FillRandom(bytes, static_cast<size_t>(ctx.num_rows) * 16));
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      uint8_t* u = bytes + i * 16;
      u[6] = static_cast<uint8_t>((u[6] & 0x0F) | 0x40);  // version 4
      u[8] = static_cast<uint8_t>((u[8] & 0x3F) | 0x80);  // variant 10
    }
    return WrapUuids(std::move(buffer), ctx.num_rows);
  }
};

class UuidV7 : public ScalarFunction {
 public:
  std::string name() const override { return "uuidv7"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckNoArguments(name(), arg_types, arg_exprs));
    return arrow::extension::uuid();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>&, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    const int64_t rows = ctx.num_rows;
    uint64_t ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count());
    // One random 32-bit step per row, then the 74-bit start (12 bits rand_a, 62 bits rand_b).
    std::vector<uint32_t> steps(static_cast<size_t>(rows));
    ARROW_RETURN_NOT_OK(FillRandom(reinterpret_cast<uint8_t*>(steps.data()), steps.size() * 4));
    uint64_t start[2];
    ARROW_RETURN_NOT_OK(FillRandom(reinterpret_cast<uint8_t*>(start), sizeof(start)));
    // The top bit of rand_a starts clear: 2^73 of headroom for the steps (at most 2^32 each).
    uint64_t rand_a = start[0] & 0x7FF;
    uint64_t rand_b = start[1] & ((uint64_t{1} << 62) - 1);
    ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(rows * 16));
    uint8_t* bytes = buffer->mutable_data();
    for (int64_t i = 0; i < rows; ++i) {
      rand_b += uint64_t{steps[i]} + 1;
      if (rand_b >> 62) {  // carry into rand_a, and into the time if that overflows too
        rand_b &= (uint64_t{1} << 62) - 1;
        if (++rand_a >> 12) {
          rand_a = 0;
          ++ms;
        }
      }
      uint8_t* u = bytes + i * 16;
      for (int k = 0; k < 6; ++k) u[k] = static_cast<uint8_t>(ms >> (8 * (5 - k)));
      u[6] = static_cast<uint8_t>(0x70 | (rand_a >> 8));
      u[7] = static_cast<uint8_t>(rand_a);
      u[8] = static_cast<uint8_t>(0x80 | (rand_b >> 56));
      for (int k = 9; k < 16; ++k) u[k] = static_cast<uint8_t>(rand_b >> (8 * (15 - k)));
    }
    return WrapUuids(std::move(buffer), rows);
  }
};

enum class Uuid7Field { kMinute, kHour, kDay, kMonth };

class ExtractUuid7 : public ScalarFunction {
 public:
  ExtractUuid7(std::string name, Uuid7Field field) : name_(std::move(name)), field_(field) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectOneArgument(name_, arg_types, arg_exprs));
    const auto& type = *arg_types[0];
    const bool ok =
        IsUuidType(type) || (type.id() == arrow::Type::FIXED_SIZE_BINARY &&
                             static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width() == 16);
    if (!ok) return CannotApply(name_, arg_types, arg_exprs, "expected a uuid or fixed_size_binary(16)");
    return arrow::int64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::EXTENSION) {
      input = static_cast<const arrow::ExtensionArray&>(*input).storage();
    }
    const auto& uuids = static_cast<const arrow::FixedSizeBinaryArray&>(*input);
    arrow::Int64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(uuids.length()));
    for (int64_t i = 0; i < uuids.length(); ++i) {
      if (uuids.IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      const uint8_t* u = uuids.GetValue(i);
      int64_t ms = 0;
      for (int k = 0; k < 6; ++k) ms = (ms << 8) | u[k];
      int64_t value = 0;
      switch (field_) {
        case Uuid7Field::kMinute:
          value = ms / 60000;
          break;
        case Uuid7Field::kHour:
          value = ms / 3600000;
          break;
        case Uuid7Field::kDay:
          value = ms / 86400000;
          break;
        case Uuid7Field::kMonth: {
          const auto civil = temporal::CivilFromDays(ms / 86400000);
          value = (civil.year - 1970) * 12 + civil.month - 1;
          break;
        }
      }
      out.UnsafeAppend(value);
    }
    ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
    return arrow::Datum(result);
  }

 private:
  std::string name_;
  Uuid7Field field_;
};

}  // namespace

arrow::Status RegisterTemporalTransforms();
arrow::Status RegisterIcebergTransforms();

arrow::Status RegisterPartitioningFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(RegisterTemporalTransforms());
  ARROW_RETURN_NOT_OK(RegisterIcebergTransforms());
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<UuidV4>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<UuidV7>()));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<ExtractUuid7>("extract_minute_uuid7", Uuid7Field::kMinute)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<ExtractUuid7>("extract_hour_uuid7", Uuid7Field::kHour)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<ExtractUuid7>("extract_day_uuid7", Uuid7Field::kDay)));
  return registry->Register(std::make_shared<ExtractUuid7>("extract_month_uuid7", Uuid7Field::kMonth));
}

}  // namespace ketch::partitioning
