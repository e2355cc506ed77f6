#include "ketch/functions/temporal/strftime_fast.h"

#include <arrow/util/bitmap_ops.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ketch/functions/temporal/civil_date.h"
#include "ketch/functions/temporal/temporal_functions.h"

namespace ketch::temporal {
namespace {

enum class Field : uint8_t { kLiteral, kYear, kYear2, kMonth, kDay, kHour, kMinute, kSecond, kDayOfYear };

struct Piece {
  Field field;
  std::string literal;  // kLiteral only
};

int64_t Width(const Piece& piece) {
  switch (piece.field) {
    case Field::kLiteral:
      return static_cast<int64_t>(piece.literal.size());
    case Field::kYear:
      return 4;
    case Field::kDayOfYear:
      return 3;
    default:
      return 2;
  }
}

// The pieces of `chrono`, or nullopt when it uses a specifier the fast path does not cover.
std::optional<std::vector<Piece>> Parse(const std::string& chrono) {
  std::vector<Piece> pieces;
  auto literal = [&pieces](std::string_view text) {
    if (pieces.empty() || pieces.back().field != Field::kLiteral) pieces.push_back({Field::kLiteral, ""});
    pieces.back().literal += text;
  };
  auto field = [&pieces](Field f) { pieces.push_back({f, ""}); };
  for (size_t i = 0; i < chrono.size(); ++i) {
    if (chrono[i] != '%') {
      literal(std::string_view(&chrono[i], 1));
      continue;
    }
    if (++i >= chrono.size()) return std::nullopt;
    switch (chrono[i]) {
      case 'Y':
        field(Field::kYear);
        break;
      case 'y':
        field(Field::kYear2);
        break;
      case 'm':
        field(Field::kMonth);
        break;
      case 'd':
        field(Field::kDay);
        break;
      case 'H':
        field(Field::kHour);
        break;
      case 'M':
        field(Field::kMinute);
        break;
      case 'S':
        field(Field::kSecond);
        break;
      case 'j':
        field(Field::kDayOfYear);
        break;
      case 'F':
        field(Field::kYear), literal("-"), field(Field::kMonth), literal("-"), field(Field::kDay);
        break;
      case 'T':
        field(Field::kHour), literal(":"), field(Field::kMinute), literal(":"), field(Field::kSecond);
        break;
      case '%':
        literal("%");
        break;
      default:
        return std::nullopt;  // %.3f, %a, %b, %Z ...: Arrow's path
    }
  }
  return pieces;
}

char* Digits(char* out, unsigned value, int width) {
  for (int k = width - 1; k >= 0; --k) {
    out[k] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  return out + width;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Array>> FastStrftime(const arrow::Array& input,
                                                          const std::string& chrono) {
  int64_t per_second = 0;  // 0: date32 (days)
  if (input.type_id() == arrow::Type::TIMESTAMP) {
    const auto& type = static_cast<const arrow::TimestampType&>(*input.type());
    if (!type.timezone().empty()) return nullptr;  // local wall clock: Arrow's path
    per_second = NanosPerUnit(arrow::TimeUnit::SECOND) / NanosPerUnit(type.unit());
  } else if (input.type_id() != arrow::Type::DATE32) {
    return nullptr;
  }
  const auto pieces = Parse(chrono);
  if (!pieces) return nullptr;
  int64_t width = 0;
  for (const auto& piece : *pieces) width += Width(piece);

  const int64_t n = input.length();
  const auto& data = *input.data();
  ARROW_ASSIGN_OR_RAISE(auto offsets, arrow::AllocateBuffer((n + 1) * static_cast<int64_t>(sizeof(int64_t))));
  ARROW_ASSIGN_OR_RAISE(auto chars, arrow::AllocateBuffer((n - input.null_count()) * width));
  auto* offset = reinterpret_cast<int64_t*>(offsets->mutable_data());
  char* out = reinterpret_cast<char*>(chars->mutable_data());
  const int64_t* stamps = per_second ? data.GetValues<int64_t>(1) : nullptr;
  const int32_t* dates = per_second ? nullptr : data.GetValues<int32_t>(1);
  const bool may_have_nulls = input.null_count() != 0;
  offset[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (may_have_nulls && input.IsNull(i)) {
      offset[i + 1] = offset[i];
      continue;
    }
    int64_t days = 0;
    int64_t second_of_day = 0;
    if (per_second) {
      const int64_t seconds = per_second == 1 ? stamps[i] : FloorDiv(stamps[i], per_second);
      days = FloorDiv(seconds, 86'400);
      second_of_day = seconds - days * 86'400;
    } else {
      days = dates[i];
    }
    const CivilDate civil = CivilFromDays(days);
    if (civil.year < 0 || civil.year > 9999) return nullptr;  // chrono signs / widens such years
    const auto hms = static_cast<unsigned>(second_of_day);
    for (const auto& piece : *pieces) {
      switch (piece.field) {
        case Field::kLiteral:
          out = std::copy(piece.literal.begin(), piece.literal.end(), out);
          break;
        case Field::kYear:
          out = Digits(out, static_cast<unsigned>(civil.year), 4);
          break;
        case Field::kYear2:
          out = Digits(out, static_cast<unsigned>(civil.year % 100), 2);
          break;
        case Field::kMonth:
          out = Digits(out, static_cast<unsigned>(civil.month), 2);
          break;
        case Field::kDay:
          out = Digits(out, static_cast<unsigned>(civil.day), 2);
          break;
        case Field::kHour:
          out = Digits(out, hms / 3600, 2);
          break;
        case Field::kMinute:
          out = Digits(out, hms / 60 % 60, 2);
          break;
        case Field::kSecond:
          out = Digits(out, hms % 60, 2);
          break;
        case Field::kDayOfYear:
          out = Digits(out, static_cast<unsigned>(days - DaysFromCivil(civil.year, 1, 1) + 1), 3);
          break;
      }
    }
    offset[i + 1] = offset[i] + width;
  }
  std::shared_ptr<arrow::Buffer> validity;
  if (may_have_nulls) {
    ARROW_ASSIGN_OR_RAISE(validity, arrow::internal::CopyBitmap(arrow::default_memory_pool(),
                                                                data.buffers[0]->data(), data.offset, n));
  }
  return arrow::MakeArray(arrow::ArrayData::Make(arrow::large_utf8(), n,
                                                 {std::move(validity), std::move(offsets), std::move(chars)},
                                                 input.null_count()));
}

}  // namespace ketch::temporal
