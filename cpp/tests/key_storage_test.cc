#include "ketch/expr/key_storage.h"

#include <arrow/extension/fixed_shape_tensor.h>
#include <arrow/extension/uuid.h>

#include <optional>
#include <string>

#include "ketch/exec/range_partition.h"
#include "ketch/expr/row_hash.h"
#include "ketch/types/file_type.h"
#include "test_util.h"

namespace ketch {
namespace {

// 16-byte values: the first byte is `first`, the rest `rest`.
std::string Bytes16(uint8_t first, uint8_t rest) {
  std::string out(16, static_cast<char>(rest));
  out[0] = static_cast<char>(first);
  return out;
}

std::shared_ptr<arrow::Array> UuidStorage(const std::vector<std::optional<std::string>>& values) {
  arrow::FixedSizeBinaryBuilder builder(arrow::fixed_size_binary(16));
  for (const auto& value : values) {
    if (value) {
      EXPECT_TRUE(builder.Append(*value).ok());
    } else {
      EXPECT_TRUE(builder.AppendNull().ok());
    }
  }
  return builder.Finish().ValueOrDie();
}

std::shared_ptr<arrow::Array> Uuids(const std::vector<std::optional<std::string>>& values) {
  return arrow::ExtensionType::WrapArray(arrow::extension::uuid(), UuidStorage(values));
}

TEST(KeyStorage, ViewsAndWrapsWithoutCopying) {
  auto uuids = Uuids({Bytes16(2, 0), std::nullopt, Bytes16(1, 9)});
  auto storage = StorageView(uuids);
  EXPECT_TRUE(storage->type()->Equals(*arrow::fixed_size_binary(16)));
  EXPECT_EQ(storage->data()->buffers[1], uuids->data()->buffers[1]);  // same bytes
  EXPECT_EQ(storage->null_count(), 1);
  auto back = WrapStorage(storage, arrow::extension::uuid());
  EXPECT_TRUE(back->Equals(*uuids));
  EXPECT_TRUE(StorageType(arrow::extension::uuid())->Equals(*arrow::fixed_size_binary(16)));
  // Plain arrays pass through.
  arrow::Int64Builder int_builder;
  ASSERT_OK(int_builder.AppendValues({1, 2}));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<arrow::Array> ints, int_builder.Finish());
  EXPECT_EQ(StorageView(ints), ints);
  EXPECT_EQ(WrapStorage(ints, arrow::int64()), ints);
  // Scalars, valid and null.
  ASSERT_OK_AND_ASSIGN(auto scalar, uuids->GetScalar(0));
  auto viewed = StorageView(arrow::Datum(scalar));
  EXPECT_TRUE(viewed.scalar()->Equals(*storage->GetScalar(0).ValueOrDie()));
  ASSERT_OK_AND_ASSIGN(auto null, uuids->GetScalar(1));
  auto viewed_null = StorageView(arrow::Datum(null));
  EXPECT_FALSE(viewed_null.scalar()->is_valid);
  EXPECT_TRUE(viewed_null.type()->Equals(*arrow::fixed_size_binary(16)));
}

TEST(KeyStorage, WithStorageColumnsViewsOnlyTheNamedColumns) {
  auto uuids = Uuids({Bytes16(1, 1), Bytes16(2, 2)});
  auto schema = arrow::schema({arrow::field("a", uuids->type()), arrow::field("b", uuids->type())});
  auto batch = arrow::RecordBatch::Make(schema, 2, {uuids, uuids});
  ASSERT_OK_AND_ASSIGN(auto viewed, WithStorageColumns(batch, {"a"}));
  EXPECT_TRUE(viewed->schema()->field(0)->type()->Equals(*arrow::fixed_size_binary(16)));
  EXPECT_TRUE(viewed->schema()->field(1)->type()->Equals(*uuids->type()));
  ASSERT_OK_AND_ASSIGN(auto same, WithStorageColumns(batch, {}));
  EXPECT_EQ(same, batch);
  EXPECT_FALSE(WithStorageColumns(batch, {"missing"}).ok());
}

TEST(KeyStorage, UuidsHashLikeTheirBytes) {
  // Hash partitioning must agree between a UUID column and its bytes (and across processes).
  auto uuids = Uuids({Bytes16(1, 2), std::nullopt, Bytes16(3, 4)});
  auto as_uuid = arrow::RecordBatch::Make(arrow::schema({arrow::field("k", uuids->type())}), 3, {uuids});
  auto as_bytes = arrow::RecordBatch::Make(arrow::schema({arrow::field("k", arrow::fixed_size_binary(16))}),
                                           3, {StorageView(uuids)});
  ASSERT_OK_AND_ASSIGN(auto h1, RowHashes(*as_uuid, {"k"}));
  ASSERT_OK_AND_ASSIGN(auto h2, RowHashes(*as_bytes, {"k"}));
  EXPECT_EQ(h1, h2);
  EXPECT_NE(h1[0], h1[2]);
}

TEST(KeyStorage, RangePartitionsUuidsByByteOrderAndKeepsTheBoundaryType) {
  auto uuids = Uuids({Bytes16(9, 0), Bytes16(1, 0), Bytes16(5, 0), Bytes16(3, 0)});
  auto schema = arrow::schema({arrow::field("k", uuids->type())});
  ASSERT_OK_AND_ASSIGN(auto sample,
                       arrow::Table::FromRecordBatches({arrow::RecordBatch::Make(schema, 4, {uuids})}));
  RangeKeys keys{{"k"}, {false}, {false}};
  ASSERT_OK_AND_ASSIGN(auto bounds, RangeBoundaries(sample, keys, 2));
  ASSERT_EQ(bounds->num_rows(), 1);
  EXPECT_TRUE(bounds->schema()->field(0)->type()->Equals(*uuids->type()));
  ASSERT_OK_AND_ASSIGN(auto ids,
                       RangePartitionIds(*arrow::RecordBatch::Make(schema, 4, {uuids}), keys, bounds));
  // Sorted bytes: 1, 3 | 5, 9 (the boundary is the row at rank 2: 5).
  EXPECT_EQ(ids->Value(0), 1);
  EXPECT_EQ(ids->Value(1), 0);
  EXPECT_EQ(ids->Value(2), 1);
  EXPECT_EQ(ids->Value(3), 0);
}

TEST(KeyStorage, KeyChecksLookThroughToTheStorage) {
  const auto uuid = arrow::extension::uuid();
  EXPECT_TRUE(CanBeKey(*uuid, KeyUse::kHash));
  EXPECT_TRUE(CanBeKey(*uuid, KeyUse::kOrder));
  EXPECT_TRUE(ComparesAsStorage(*uuid));
  EXPECT_FALSE(ComparesAsStorage(*arrow::int64()));  // nothing to look through
  const auto file = file_type();
  EXPECT_FALSE(CanBeKey(*file, KeyUse::kHash));
  EXPECT_FALSE(ComparesAsStorage(*file));
  auto status = CheckKeyColumn("groupby", "group by", "f", *file, KeyUse::kHash);
  EXPECT_TRUE(status.IsTypeError());
  EXPECT_NE(
      status.message().find("groupby: cannot group by column 'f' of type File (an extension type stored "
                            "as struct<"),
      std::string::npos)
      << status.message();
  ASSERT_OK_AND_ASSIGN(auto tensor, arrow::extension::FixedShapeTensorType::Make(arrow::float32(), {2, 2}));
  status = CheckKeyColumn("sort", "sort by", "t", *tensor, KeyUse::kOrder);
  EXPECT_NE(status.message().find("which has no order"), std::string::npos) << status.message();
  EXPECT_TRUE(CheckKeyColumn("sort", "sort by", "u", *uuid, KeyUse::kOrder).ok());
}

}  // namespace
}  // namespace ketch
