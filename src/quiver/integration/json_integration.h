// quiver/integration/json_integration.h — the Apache Arrow integration-test
// JSON format (Arrow docs "Integration Testing" → "JSON test data format";
// reference implementation Arrow C++ cpp/src/arrow/integration/
// json_internal.cc; gold files in arrow-testing data/arrow-ipc-stream/
// integration/*/generated_*.json.gz).
//
// A document is {"schema": {...}, "batches": [...], "dictionaries": [...]}:
// the schema lists fields (name, nullable, type, children, optional
// dictionary {id, indexType, isOrdered}, optional metadata [{key, value}]);
// each batch is {"count", "columns"}; each column lists its buffers by name
// (VALIDITY, DATA, OFFSET, SIZE, TYPE_ID, VIEWS, VARIADIC_DATA_BUFFERS) and
// its children. 64-bit integers and large offsets are JSON strings; binary
// values are hex; decimals are decimal integer strings (unscaled); float16
// values are their uint16 bit patterns; dictionary-encoded columns hold the
// indices, the values live in the "dictionaries" section by id.
//
// The integration layer sits beside ipc (it uses columnar and ipc/io.h, and
// is the only layer that links nlohmann-json and zlib): the format is a test
// interchange, not IPC. Files: json_schema.cc (the "schema" object),
// json_reader.cc (columns, dictionaries, files), json_writer.cc, and
// json_value.cc / gzip.cc (scalar conversions, gunzip).
//
// Thread safety: the functions are reentrant; results are immutable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::integration {

/// The content of one integration JSON document.
struct JsonIntegrationFile {
  /// Dictionary-typed fields have type kDictionary (index type from
  /// "indexType", value type from "type") and Field::dictionary_id set; field
  /// metadata (extension types included: "ARROW:extension:name" stays plain
  /// field metadata) and schema metadata kept in order.
  SchemaPtr schema;
  /// One batch per entry of "batches". Every dictionary-typed array (top
  /// level, nested in lists/structs/maps/unions, or inside another
  /// dictionary's values) has ArrayData::dictionary set to the array built
  /// from the "dictionaries" entry of its field's id; fields sharing an id
  /// share the same dictionary array.
  std::vector<RecordBatchPtr> batches;
};

/// Nesting limit of fields and columns in the JSON input (deeper input is
/// Invalid rather than exhausting the stack) and in what is written.
inline constexpr int kJsonIntegrationMaxDepth = 64;

/// Parses an integration JSON document held in memory.
///
/// Every buffer is allocated from `pool` (required, not null); on error
/// nothing stays allocated. Input is untrusted: sizes ("count" against
/// VALIDITY/DATA/OFFSET/SIZE/TYPE_ID/VIEWS lengths, hex string lengths,
/// integer ranges for the target width, decimal ranges for the bit width,
/// view sizes, child counts) are checked before use, and the finished arrays
/// pass ValidateArray(kFull). Returns Invalid naming the location (e.g.
/// "batches[0].columns[2](f2).children[0]: DATA has 6 entries, count is 7")
/// on malformed JSON or data; NotImplemented for unknown type names;
/// OutOfMemory from the pool. Never throws.
Result<JsonIntegrationFile> ReadJsonIntegration(std::string_view json_text, MemoryPool* pool);

/// Reads a file (ipc::ReadFile; "-" is standard input) and parses it with
/// ReadJsonIntegration. A name ending in ".gz" is gunzipped first (zlib;
/// concatenated gzip members are accepted). The file and the decompressed
/// text are each limited to 1 GiB (Invalid naming `path` beyond); the file's
/// bytes are charged to `pool` while it is parsed.
/// Errors: IOError naming `path` when it cannot be opened or read, Invalid
/// naming `path` for corrupt gzip data, then as ReadJsonIntegration with
/// `path` as context.
Result<JsonIntegrationFile> ReadJsonIntegrationFile(const std::string& path, MemoryPool* pool);

/// Writes `schema` and `batches` as an integration JSON document (compact,
/// one line). Each batch's columns must match the schema (CheckShape).
/// Arrays may have offsets (slices): only their logical range is written.
/// Dictionary-typed fields are written with their Field::dictionary_id (ids
/// are assigned, in field order after the largest id present, to fields
/// whose id is -1) and the "dictionaries" section holds one dictionary per
/// id; when batches carry different dictionaries for one id, the longest is
/// written and every other must equal its prefix (a delta); otherwise
/// NotImplemented (replacements cannot be represented in this format).
/// Invalid UTF-8 in utf8 values is replaced by U+FFFD in the output.
/// Errors: Invalid for batches that do not match the schema.
Result<std::string> WriteJsonIntegration(const Schema& schema, const std::vector<RecordBatchPtr>& batches);

}  // namespace quiver::integration
