#pragma once

#include <string>
#include <string_view>

#include "ketch/exec/operator.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// `value` percent-escaped for a Hive partition directory name, as Hive, Arrow and Daft escape
/// it: every byte but the unreserved A-Z a-z 0-9 - _ . ~ becomes %XX, so '/' (a%2Fb), '\', NUL
/// and "../" can never name another directory. Used for the column name too.
std::string EscapeHivePathSegment(std::string_view value);

/// Writes its input into Parquet, CSV or newline-delimited JSON files under WriteInfo::root_dir
/// (a local directory, or an s3:// URL through Arrow's S3 filesystem with WriteInfo::s3).
///
/// Files are named "<32 random hex>-<k>.<parquet|csv|json>" (k = 0, 1, ... in write order), so
/// an append never replaces a file. Without partition columns there is one file per non-empty
/// partition of the input (one empty file when nothing has rows, so the schema is kept). With
/// partition columns, rows go to "<root>/<col>=<value>/..." directories (values escaped by
/// EscapeHivePathSegment, nulls as __HIVE_DEFAULT_PARTITION__, the columns left out of the files),
/// one file per distinct partition value per input partition (at most 128 files are open at once:
/// past that the longest-open one is finished and its value's later rows start a new file);
/// nothing is written for no rows.
///
/// Atomicity: local files are written as hidden temporaries (".<name>.tmp") and renamed into
/// place only by Finalize, after every file is complete; a failed or cancelled query deletes
/// them (and the partition directories it created that stay empty). S3 objects appear when their
/// upload completes, so S3 writes go to a staging prefix that the caller commits (the Python
/// writers do); an error aborts the uploads in flight.
///
/// Finalize returns one row per file: "path" (utf8), the partition columns (one row of their
/// values) and "num_rows" (int64). Errors name the file or directory and the OS's reason.
class WriteFilesSink : public StreamingSink {
 public:
  static arrow::Result<std::unique_ptr<WriteFilesSink>> Make(WriteInfo info,
                                                             std::shared_ptr<arrow::Schema> schema);
  ~WriteFilesSink() override;
  std::string name() const override;
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Status BeginPartition(int64_t partition) override;
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finalize() override;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace ketch
