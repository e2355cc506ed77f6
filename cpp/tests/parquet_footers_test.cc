// ParquetFooters: a footer is read once per file and kept; a local file that changed is read again.
#include "ketch/io/formats/parquet_footers.h"

#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>
#include <unistd.h>

#include <filesystem>

#include "test_util.h"

namespace ketch {
namespace {

void WriteInts(const std::string& path, int64_t rows) {
  arrow::Int64Builder builder;
  for (int64_t i = 0; i < rows; ++i) ASSERT_OK(builder.Append(i));
  std::shared_ptr<arrow::Array> values;
  ASSERT_OK(builder.Finish(&values));
  auto table = arrow::Table::Make(arrow::schema({arrow::field("a", arrow::int64())}), {values});
  std::shared_ptr<arrow::io::FileOutputStream> out;
  ASSERT_OK_AND_ASSIGN(out, arrow::io::FileOutputStream::Open(path));
  ASSERT_OK(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, 1024));
  ASSERT_OK(out->Close());
}

TEST(ParquetFooters, ReadOnceKeptAndReadAgainWhenTheLocalFileChanges) {
  const auto dir = std::filesystem::temp_directory_path() / ("ketch_footers_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.parquet").string();
  WriteInts(path, 3);
  io::ParquetFooters footers(2);
  EXPECT_EQ(footers.Peek(0, path), nullptr);
  std::shared_ptr<parquet::FileMetaData> first, again;
  ASSERT_OK_AND_ASSIGN(first, footers.Get(0, path, -1, {}));
  EXPECT_EQ(first->num_rows(), 3);
  ASSERT_OK_AND_ASSIGN(again, footers.Get(0, path, -1, {}));
  EXPECT_EQ(first.get(), again.get());  // kept, not read again
  EXPECT_EQ(footers.Peek(0, path).get(), first.get());

  WriteInts(path, 500);  // another size: the kept footer is stale
  EXPECT_EQ(footers.Peek(0, path), nullptr);
  ASSERT_OK_AND_ASSIGN(again, footers.Get(0, path, -1, {}));
  EXPECT_EQ(again->num_rows(), 500);

  // A failed read names the path and is not kept.
  const std::string missing = (dir / "missing.parquet").string();
  auto result = footers.Get(1, missing, -1, {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("missing.parquet"), std::string::npos);
  EXPECT_EQ(footers.Peek(1, missing), nullptr);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ketch
