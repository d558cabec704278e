// quiver/formats/parquet/thrift_compact_writer.h — an encoder of the Thrift
// compact protocol (Apache Thrift's "compact protocol" specification), the
// writing side of thrift_compact.h: field headers with id deltas, zigzag
// varints, binary values, list headers, structs and their stop bytes.
//
// The bytes accumulate in a std::string the writer owns (footers and page
// headers are small: a few bytes per field). The caller nests Begin/End
// calls correctly (a programmer error otherwise, asserted). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/formats/parquet/thrift_compact.h"

namespace quiver::parquet {

class ThriftCompactWriter {
 public:
  /// Field writers: a field header (id relative to the previous field of
  /// the same struct) followed by the value.
  void FieldI16(int16_t id, int16_t value);
  void FieldI32(int16_t id, int32_t value);
  void FieldI64(int16_t id, int64_t value);
  /// An i8 field (one raw byte, e.g. IntType.bitWidth).
  void FieldByte(int16_t id, int8_t value);
  void FieldBool(int16_t id, bool value);
  void FieldBinary(int16_t id, std::string_view value);
  /// Opens a struct-valued field; close it with EndStruct().
  void FieldStructBegin(int16_t id);
  /// A list-valued field's header; then `size` elements follow, written
  /// with the element writers below (structs: BeginStruct / EndStruct).
  void FieldListBegin(int16_t id, ThriftType element_type, int64_t size);

  /// Element writers (list elements, no field header).
  void ElementI32(int32_t value);
  void ElementI64(int64_t value);
  /// A bool list element (list element type kTrue): one byte, 1 true, 2 false.
  void ElementBool(bool value);
  void ElementBinary(std::string_view value);

  /// A struct value without a field header (the top level, list
  /// elements); EndStruct writes the stop byte.
  void BeginStruct();
  void EndStruct();
  /// An empty struct-valued field (union members such as TimeUnit.MILLIS).
  void FieldEmptyStruct(int16_t id);

  const std::string& bytes() const { return out_; }
  std::string Release() { return std::move(out_); }

 private:
  void FieldHeader(int16_t id, ThriftType type);
  void Varint(uint64_t v);
  void Zigzag(int64_t v);

  std::string out_;
  std::vector<int16_t> last_ids_{0};  // the last field id of each open struct
};

}  // namespace quiver::parquet
