#pragma once

#include <arrow/api.h>

#include <string>
#include <string_view>
#include <vector>

namespace ketch {

/// Storage view of extension types: the one step by which extension-typed columns serve as keys.
///
/// Arrow's hashing, grouping, sorting and comparison kernels take no extension types (arrow.uuid,
/// ketch.file, ketch.image, arrow.fixed_shape_tensor, ...). Every place that hashes, groups, sorts
/// or compares key columns (sort, top-N, sort-merge, group-by and distinct, hash join, window
/// partition_by / order_by, hash and range repartitioning, the comparison functions) views those
/// columns as their storage arrays (zero copy: the same buffers under the storage type) for that
/// work only; the operators' output columns keep the extension type. Keys therefore compare as
/// their storage values: a UUID by its 16 bytes, whose byte order is the order of Python's
/// `uuid.UUID` (big-endian 128-bit integers). Plan-time checks (CheckKeyColumn) refuse extension
/// types whose storage cannot be hashed or ordered (images, files, tensors: structs and lists),
/// and Python objects (ketch.python: pickled bytes, whose equality is not the objects').

/// `type` with extension types replaced by their storage type (repeatedly, should a storage type
/// be an extension type itself); any other type unchanged.
std::shared_ptr<arrow::DataType> StorageType(const std::shared_ptr<arrow::DataType>& type);

/// `array` under its storage type when it is an extension array (zero copy), else `array` itself.
std::shared_ptr<arrow::Array> StorageView(const std::shared_ptr<arrow::Array>& array);
std::shared_ptr<arrow::ChunkedArray> StorageView(const std::shared_ptr<arrow::ChunkedArray>& array);
/// Arrays, chunked arrays and scalars (a null extension scalar becomes a null of the storage type);
/// other datums unchanged.
arrow::Datum StorageView(const arrow::Datum& value);

/// `batch` with the columns named `columns` viewed as storage (their fields keep name,
/// nullability and metadata). KeyError for a name that is not a column.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> WithStorageColumns(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::vector<std::string>& columns);
arrow::Result<std::shared_ptr<arrow::Table>> WithStorageColumns(const std::shared_ptr<arrow::Table>& table,
                                                                const std::vector<std::string>& columns);

/// The way back for operator output: `array` (of `type`'s storage type) labelled `type` again
/// (zero copy). Unchanged when `type` is no extension type or `array` already has it.
std::shared_ptr<arrow::Array> WrapStorage(const std::shared_ptr<arrow::Array>& array,
                                          const std::shared_ptr<arrow::DataType>& type);
std::shared_ptr<arrow::ChunkedArray> WrapStorage(const std::shared_ptr<arrow::ChunkedArray>& array,
                                                 const std::shared_ptr<arrow::DataType>& type);

/// What a key column is used for.
enum class KeyUse {
  kHash,   ///< equality and hashing: group-by, distinct, join, partition_by, hash repartition
  kOrder,  ///< ordering: sort, top-N, range repartition, window order_by
};

/// Whether a column of `type`, viewed as its storage, can be a key for `use`. kHash: the types
/// RowHashes hashes (IsHashableType); kOrder: booleans, integers, floats, strings, binaries
/// (fixed-size too), dates, times, timestamps, durations. Python objects (ketch.python) never.
bool CanBeKey(const arrow::DataType& type, KeyUse use);

/// Whether comparisons (equal, less, ...) may look through `type` to its storage: an extension
/// type whose storage can be a key (so not ketch.python, images, files or tensors).
bool ComparesAsStorage(const arrow::DataType& type);

/// OK when CanBeKey(type, use); else TypeError "<operation>: cannot <action> column '<column>' of
/// type <type>" plus why (for an extension type, its storage type), e.g. "sort: cannot sort by
/// column 'image' of type Image[RGB] (an extension type stored as struct<...>, which has no order)".
arrow::Status CheckKeyColumn(std::string_view operation, std::string_view action, std::string_view column,
                             const arrow::DataType& type, KeyUse use);

}  // namespace ketch
