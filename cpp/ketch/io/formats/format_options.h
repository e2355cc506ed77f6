#pragma once

#include <string>

namespace ketch {

/// kLance: a Lance dataset read through pylance (see lance_format.h); its "files" are fragments.
enum class FileFormat { kParquet, kCsv, kJson, kLance };
std::string FileFormatName(FileFormat format);

/// Parsing options of read_csv (Daft's names in Python: has_headers, delimiter, quote, escape_char,
/// double_quote, allow_variable_columns).
struct CsvOptions {
  bool has_header = true;
  char delimiter = ',';
  char quote = '"';
  bool quoting = true;
  char escape = 0;  ///< 0 = no escape character
  bool double_quote = true;
  /// Rows with too few or too many fields: false = an error naming the file and row; true = short
  /// rows are padded with nulls and extra fields are dropped (Daft's allow_variable_columns).
  bool allow_variable_columns = false;
};

}  // namespace ketch
