// quiver/formats/parquet/metadata.h — the Parquet file footer
// (parquet-format parquet.thrift: FileMetaData, SchemaElement, LogicalType,
// RowGroup, ColumnChunk, ColumnMetaData, Statistics, KeyValue) as plain
// structs, decoded from the Thrift compact protocol.
//
// Only the fields quiver uses are kept; unknown fields are skipped (the
// format's forward compatibility). Enum values are kept as the integers the
// file holds (an unknown value is not an error until it is used). Strings
// are copies. Immutable after decoding; safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "quiver/base/result.h"

namespace quiver::parquet {

/// parquet.thrift `Type` (physical types).
enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};
/// "BOOLEAN", "INT32", ...; "type N" for unknown values.
std::string PhysicalTypeName(int32_t type);

/// parquet.thrift `ConvertedType` (the deprecated annotations).
enum class ConvertedType : int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

/// parquet.thrift `FieldRepetitionType`.
enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

/// parquet.thrift `Encoding`.
enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};
/// "PLAIN", "RLE_DICTIONARY", ...; "encoding N" for unknown values.
std::string EncodingName(int32_t encoding);

/// parquet.thrift `CompressionCodec`.
enum class Codec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,  ///< deprecated: Hadoop-framed LZ4 (or, from some writers, a raw LZ4 block)
  kZstd = 6,
  kLz4Raw = 7,
};
/// "SNAPPY", "ZSTD", ...; "codec N" for unknown values.
std::string CodecName(int32_t codec);

/// The `LogicalType` union (field ids of parquet.thrift), flattened.
struct LogicalType {
  enum Kind : int32_t {
    kNone = 0,
    kString = 1,
    kMap = 2,
    kList = 3,
    kEnum = 4,
    kDecimal = 5,
    kDate = 6,
    kTime = 7,
    kTimestamp = 8,
    kInteger = 10,
    kUnknown = 11,  ///< NullType: always null
    kJson = 12,
    kBson = 13,
    kUuid = 14,
    kFloat16 = 15,
    kVariant = 16,
    kGeometry = 17,
    kGeography = 18,
  };
  int32_t kind = kNone;              ///< a Kind, or an id this reader does not know
  int32_t scale = 0, precision = 0;  ///< kDecimal
  bool adjusted_to_utc = false;      ///< kTime, kTimestamp
  int time_unit = 0;                 ///< kTime, kTimestamp: 1 millis, 2 micros, 3 nanos
  int bit_width = 0;                 ///< kInteger: 8, 16, 32 or 64
  bool is_signed = true;             ///< kInteger
};

/// One node of the flattened schema tree (depth-first order).
struct SchemaElement {
  std::optional<int32_t> type;        ///< PhysicalType; absent for groups
  int32_t type_length = 0;            ///< FIXED_LEN_BYTE_ARRAY width in bytes
  std::optional<int32_t> repetition;  ///< Repetition; absent for the root
  std::string name;
  int32_t num_children = 0;  ///< > 0 for groups
  std::optional<int32_t> converted_type;
  int32_t scale = 0, precision = 0;  ///< DECIMAL (converted type)
  std::optional<int32_t> field_id;
  LogicalType logical_type;
};

/// Column statistics (both the deprecated min/max and min_value/max_value),
/// as the raw PLAIN-encoded bytes the file holds.
struct Statistics {
  std::optional<std::string> max, min;  ///< deprecated (signed order)
  std::optional<int64_t> null_count, distinct_count;
  std::optional<std::string> max_value, min_value;
  std::optional<bool> is_max_value_exact, is_min_value_exact;
};

using KeyValueList = std::vector<std::pair<std::string, std::string>>;

struct ColumnMetaData {
  int32_t type = 0;                ///< PhysicalType
  std::vector<int32_t> encodings;  ///< Encoding values
  std::vector<std::string> path_in_schema;
  int32_t codec = 0;  ///< Codec
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  KeyValueList key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
  std::optional<int64_t> bloom_filter_offset;
  std::optional<int32_t> bloom_filter_length;
};

struct ColumnChunk {
  std::string file_path;  ///< non-empty: the chunk lives in another file (not supported)
  int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;
  std::optional<int64_t> offset_index_offset, column_index_offset;
  std::optional<int32_t> offset_index_length, column_index_length;
  bool encrypted = false;  ///< crypto_metadata or encrypted_column_metadata present
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
  std::optional<int64_t> file_offset, total_compressed_size;
  std::optional<int32_t> ordinal;
};

struct FileMetaData {
  int32_t version = 0;
  std::vector<SchemaElement> schema;  ///< depth-first; element 0 is the root
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  KeyValueList key_value_metadata;
  std::string created_by;
  bool encryption_algorithm = false;  ///< present: the file is encrypted with a plaintext footer
};

/// Decodes a FileMetaData struct from `bytes` (the footer between the file
/// body and the 8-byte trailer). Checks counts (non-negative, at most the
/// bytes left); deeper checks (schema tree shape, offsets within the file)
/// are the file reader's. Also Invalid when a required field of
/// FileMetaData (version, schema, num_rows, row_groups) or of a RowGroup
/// (columns, total_byte_size, num_rows) is missing, a row group's num_rows
/// is negative, or num_rows is more than the row groups' sum (a corrupt
/// footer would otherwise read as fewer rows, silently; less is accepted,
/// as some writers leave it 0).
/// Errors: Invalid naming the struct and field.
Result<FileMetaData> DecodeFileMetaData(std::span<const uint8_t> bytes);

}  // namespace quiver::parquet
