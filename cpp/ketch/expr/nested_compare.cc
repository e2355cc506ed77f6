#include "ketch/expr/nested_compare.h"

#include <algorithm>
#include <optional>
#include <string_view>

namespace ketch {
namespace {

bool IsListType(const arrow::DataType& type) {
  return type.id() == arrow::Type::LIST || type.id() == arrow::Type::LARGE_LIST ||
         type.id() == arrow::Type::FIXED_SIZE_LIST;
}

// Same shape: lists of comparable values (any list width), structs with the same field names.
bool Comparable(const arrow::DataType& a, const arrow::DataType& b) {
  if (IsListType(a) && IsListType(b)) return Comparable(*a.field(0)->type(), *b.field(0)->type());
  if (a.id() == arrow::Type::STRUCT && b.id() == arrow::Type::STRUCT) {
    if (a.num_fields() != b.num_fields()) return false;
    for (int i = 0; i < a.num_fields(); ++i) {
      if (a.field(i)->name() != b.field(i)->name() || !Comparable(*a.field(i)->type(), *b.field(i)->type())) {
        return false;
      }
    }
    return true;
  }
  if (IsListType(a) || IsListType(b) || a.id() == arrow::Type::STRUCT || b.id() == arrow::Type::STRUCT)
    return false;
  return a.Equals(b);
}

template <typename T>
int Order(T x, T y) {
  return x < y ? -1 : (y < x ? 1 : 0);
}

// The list value range [begin, end) of row i.
std::pair<int64_t, int64_t> ListRange(const arrow::Array& list, int64_t i) {
  switch (list.type_id()) {
    case arrow::Type::LIST: {
      const auto& l = static_cast<const arrow::ListArray&>(list);
      return {l.value_offset(i), l.value_offset(i + 1)};
    }
    case arrow::Type::LARGE_LIST: {
      const auto& l = static_cast<const arrow::LargeListArray&>(list);
      return {l.value_offset(i), l.value_offset(i + 1)};
    }
    default: {
      const auto& l = static_cast<const arrow::FixedSizeListArray&>(list);
      return {l.value_offset(i), l.value_offset(i) + l.value_length(i)};
    }
  }
}

const std::shared_ptr<arrow::Array>& ListValues(const arrow::Array& list) {
  if (list.type_id() == arrow::Type::LIST) return static_cast<const arrow::ListArray&>(list).values();
  if (list.type_id() == arrow::Type::LARGE_LIST)
    return static_cast<const arrow::LargeListArray&>(list).values();
  return static_cast<const arrow::FixedSizeListArray&>(list).values();
}

using Order3 = std::optional<int>;  // <0, 0, >0; nullopt: a null decides (the row is null)

// Three-way order of a[i] and b[j] (same shape), or nullopt when a null element is met before the
// values differ (Daft's rule).
arrow::Result<Order3> Compare(const arrow::Array& a, int64_t i, const arrow::Array& b, int64_t j) {
  if (a.IsNull(i) || b.IsNull(j)) return Order3();
  if (IsListType(*a.type())) {
    const auto [ab, ae] = ListRange(a, i);
    const auto [bb, be] = ListRange(b, j);
    const auto& av = *ListValues(a);
    const auto& bv = *ListValues(b);
    for (int64_t k = 0; k < std::min(ae - ab, be - bb); ++k) {
      ARROW_ASSIGN_OR_RAISE(Order3 c, Compare(av, ab + k, bv, bb + k));
      if (!c || *c != 0) return c;
    }
    return Order3(Order(ae - ab, be - bb));
  }
  switch (a.type_id()) {
    case arrow::Type::STRUCT: {
      const auto& as = static_cast<const arrow::StructArray&>(a);
      const auto& bs = static_cast<const arrow::StructArray&>(b);
      for (int f = 0; f < as.num_fields(); ++f) {
        ARROW_ASSIGN_OR_RAISE(Order3 c, Compare(*as.field(f), i, *bs.field(f), j));
        if (!c || *c != 0) return c;
      }
      return Order3(0);
    }
    case arrow::Type::BOOL:
      return Order(static_cast<const arrow::BooleanArray&>(a).Value(i),
                   static_cast<const arrow::BooleanArray&>(b).Value(j));
#define KETCH_ORDER_CASE(ID, ARRAY) \
  case arrow::Type::ID:             \
    return Order(static_cast<const arrow::ARRAY&>(a).Value(i), static_cast<const arrow::ARRAY&>(b).Value(j));
      KETCH_ORDER_CASE(INT8, Int8Array)
      KETCH_ORDER_CASE(INT16, Int16Array)
      KETCH_ORDER_CASE(INT32, Int32Array)
      KETCH_ORDER_CASE(INT64, Int64Array)
      KETCH_ORDER_CASE(UINT8, UInt8Array)
      KETCH_ORDER_CASE(UINT16, UInt16Array)
      KETCH_ORDER_CASE(UINT32, UInt32Array)
      KETCH_ORDER_CASE(UINT64, UInt64Array)
      KETCH_ORDER_CASE(FLOAT, FloatArray)
      KETCH_ORDER_CASE(DOUBLE, DoubleArray)
      KETCH_ORDER_CASE(DATE32, Date32Array)
      KETCH_ORDER_CASE(DATE64, Date64Array)
      KETCH_ORDER_CASE(TIMESTAMP, TimestampArray)
      KETCH_ORDER_CASE(DURATION, DurationArray)
      KETCH_ORDER_CASE(TIME32, Time32Array)
      KETCH_ORDER_CASE(TIME64, Time64Array)
#undef KETCH_ORDER_CASE
    case arrow::Type::STRING:
      return Order(static_cast<const arrow::StringArray&>(a).GetView(i),
                   static_cast<const arrow::StringArray&>(b).GetView(j));
    case arrow::Type::LARGE_STRING:
      return Order(static_cast<const arrow::LargeStringArray&>(a).GetView(i),
                   static_cast<const arrow::LargeStringArray&>(b).GetView(j));
    case arrow::Type::BINARY:
      return Order(static_cast<const arrow::BinaryArray&>(a).GetView(i),
                   static_cast<const arrow::BinaryArray&>(b).GetView(j));
    case arrow::Type::LARGE_BINARY:
      return Order(static_cast<const arrow::LargeBinaryArray&>(a).GetView(i),
                   static_cast<const arrow::LargeBinaryArray&>(b).GetView(j));
    default:
      return arrow::Status::TypeError("cannot compare values of type ", a.type()->ToString());
  }
}

}  // namespace

bool IsNestedComparison(const arrow::DataType& a, const arrow::DataType& b) {
  const bool nested = IsListType(a) || a.id() == arrow::Type::STRUCT;
  return nested && Comparable(a, b);
}

arrow::Result<arrow::Datum> CompareNested(const std::string& name, const arrow::Datum& a,
                                          const arrow::Datum& b, int64_t num_rows) {
  auto as_array = [&](const arrow::Datum& d) -> arrow::Result<std::shared_ptr<arrow::Array>> {
    if (d.is_scalar()) return arrow::MakeArrayFromScalar(*d.scalar(), num_rows);
    return d.make_array();
  };
  ARROW_ASSIGN_OR_RAISE(auto left, as_array(a));
  ARROW_ASSIGN_OR_RAISE(auto right, as_array(b));
  arrow::BooleanBuilder out;
  ARROW_RETURN_NOT_OK(out.Reserve(left->length()));
  for (int64_t i = 0; i < left->length(); ++i) {
    if (left->IsNull(i) || right->IsNull(i)) {
      out.UnsafeAppendNull();
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(Order3 order, Compare(*left, i, *right, i));
    if (!order) {
      out.UnsafeAppendNull();
      continue;
    }
    const int c = *order;
    bool value = false;
    if (name == "equal") {
      value = c == 0;
    } else if (name == "not_equal") {
      value = c != 0;
    } else if (name == "less") {
      value = c < 0;
    } else if (name == "less_equal") {
      value = c <= 0;
    } else if (name == "greater") {
      value = c > 0;
    } else if (name == "greater_equal") {
      value = c >= 0;
    } else {
      return arrow::Status::Invalid("not a comparison: ", name);
    }
    out.UnsafeAppend(value);
  }
  ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
  return arrow::Datum(result);
}

}  // namespace ketch
