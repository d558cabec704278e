// quiver/formats/parquet/thrift_compact.h — a decoder of the Thrift compact
// protocol (Apache Thrift's "compact protocol" specification), the encoding
// of every Parquet footer and page header (parquet-format, parquet.thrift).
//
// Reads from a caller-owned byte span; never allocates beyond the strings
// it returns (each length checked against the bytes left first). Struct
// nesting and skipped values are bounded by kMaxDepth. Errors are Invalid,
// naming the byte offset and what was wrong. Not thread-safe (one reader per
// thread); the bytes must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "quiver/base/result.h"
#include "quiver/base/status.h"

namespace quiver::parquet {

/// Compact-protocol wire types (the low nibble of a field header).
enum class ThriftType : uint8_t {
  kStop = 0,
  kTrue = 1,  ///< a bool field whose value is true (in containers: a bool element)
  kFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

/// A container's header: element type and count (checked: 0 <= count and
/// count <= the bytes left, every element taking at least one byte).
struct ThriftListHeader {
  ThriftType element_type = ThriftType::kStop;
  int64_t size = 0;
};

class ThriftCompactReader {
 public:
  /// Maximum nesting of structs and containers (deeper input: Invalid).
  static constexpr int kMaxDepth = 64;

  explicit ThriftCompactReader(std::span<const uint8_t> bytes) : data_(bytes) {}

  /// Bytes consumed so far.
  int64_t position() const { return static_cast<int64_t>(pos_); }

  /// Reads the fields of one struct (after its opening, up to and including
  /// its stop byte), calling `on_field(field_id, type)` for each; the
  /// callback must consume the value (Read* or Skip). Recursion-bounded.
  Status ReadStruct(const std::function<Status(int16_t field_id, ThriftType type)>& on_field);

  /// Readers of one value of the given wire type (as announced by a field
  /// header or container header). Integer readers accept any integer wire
  /// type and check the range of the target.
  Result<bool> ReadBool(ThriftType type);
  Result<int32_t> ReadI32(ThriftType type);
  Result<int64_t> ReadI64(ThriftType type);
  Result<double> ReadDouble(ThriftType type);
  /// A binary/string value: a view into the input bytes.
  Result<std::string_view> ReadBinary(ThriftType type);
  /// A list or set header; `type` must be kList or kSet.
  Result<ThriftListHeader> ReadListHeader(ThriftType type);
  /// A whole list or set: its header, then `element(element_type)` once per
  /// element (which reads it); the first error stops it.
  template <typename F>
  Status ReadList(ThriftType type, F&& element) {
    QUIVER_ASSIGN_OR_RETURN(auto h, ReadListHeader(type));
    for (int64_t i = 0; i < h.size; ++i) QUIVER_RETURN_NOT_OK(element(h.element_type));
    return Status::OK();
  }
  /// Skips one value of `type` (structs and containers recursively).
  Status Skip(ThriftType type);

 private:
  Result<uint64_t> ReadVarint();
  Result<int64_t> ReadZigzag();
  Status Fail(const std::string& what) const;
  Status SkipDepth(ThriftType type, int depth);

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace quiver::parquet
