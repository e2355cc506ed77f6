#pragma once

#include <arrow/status.h>

namespace ketch::codec {

/// Registers Daft's codec, serialization, URL-parsing and jq functions. Codec names, formats and
/// jq filters are constant options checked at plan time; a bad one fails there, naming it.
///
/// - encode / try_encode (codec) → large_binary. Input: string, binary or fixed-size binary.
///   Codecs (case-insensitive): utf-8 / utf8 (a string's bytes; binary input is checked to be
///   UTF-8), base64 (RFC 4648 standard alphabet, padded), hex (lower case), and the compressions
///   deflate (raw RFC 1951), zlib (RFC 1950), gzip / gz (RFC 1952), zstd, lz4 (frame format),
///   brotli, bz2 / bzip2 (all through arrow::util::Codec; zlib levels: zlib's default 6).
/// - decode / try_decode (codec) → large_binary, or large_string for utf-8 (bytes checked to be
///   UTF-8). Input: binary, fixed-size binary or string. Concatenated gzip members and zstd/lz4
///   frames decode as one value.
///   encode/decode fail at the first bad row ("decode failed at source row 3 (codec 'gzip'): ...");
///   the try_ forms give null there instead. Null stays null.
/// - url_parse(string) → struct<scheme, username, password, host: large_string, port: uint16,
///   path, query, fragment: large_string> parsed by libcurl's URL API (curl_url). A URL that does
///   not parse gives a struct whose fields are all null (as Daft); a null URL gives null. No error
///   or log ever shows a row's URL (user-info may hold a password).
/// - jq(string; filter) → large_string: the jq program (libjq, the jq 1.6 language) run on each
///   row's JSON text; no output gives null, one output its compact JSON text, several outputs a
///   JSON array of them (as Daft). An invalid filter fails at plan time; invalid JSON or a jq
///   runtime error fails naming the row.
/// - serialize(any; format = "json") → large_string: each value as compact JSON (structs as
///   objects, lists as arrays, maps as objects with string keys, binary as lower-case hex,
///   temporal values as ISO 8601 strings, NaN/inf as null).
/// - deserialize / try_deserialize(string; format = "json", dtype: a typed null scalar) → dtype:
///   each row's JSON text converted by Arrow's JSON reader (arrow::json) into `dtype`.
///   deserialize fails naming the first row that is not valid JSON or does not convert;
///   try_deserialize gives null there.
arrow::Status RegisterCodecFunctions();

// One per file, called by RegisterCodecFunctions.
arrow::Status RegisterBinaryCodecFunctions();
arrow::Status RegisterParseUrlFunction();
arrow::Status RegisterJqFunction();
arrow::Status RegisterJsonSerdeFunctions();

}  // namespace ketch::codec
