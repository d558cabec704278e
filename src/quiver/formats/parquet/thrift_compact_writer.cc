#include "quiver/formats/parquet/thrift_compact_writer.h"

#include <cassert>

namespace quiver::parquet {

void ThriftCompactWriter::Varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void ThriftCompactWriter::Zigzag(int64_t v) {
  // (v << 1) ^ (v >> 63) computed on unsigned values (no signed overflow).
  const uint64_t u = static_cast<uint64_t>(v);
  Varint((u << 1) ^ (v < 0 ? ~uint64_t{0} : uint64_t{0}));
}

void ThriftCompactWriter::FieldHeader(int16_t id, ThriftType type) {
  int16_t& last = last_ids_.back();
  const int delta = static_cast<int>(id) - static_cast<int>(last);
  if (delta > 0 && delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    out_.push_back(static_cast<char>(type));
    Zigzag(id);
  }
  last = id;
}

void ThriftCompactWriter::FieldI16(int16_t id, int16_t value) {
  FieldHeader(id, ThriftType::kI16);
  Zigzag(value);
}

void ThriftCompactWriter::FieldI32(int16_t id, int32_t value) {
  FieldHeader(id, ThriftType::kI32);
  Zigzag(value);
}

void ThriftCompactWriter::FieldI64(int16_t id, int64_t value) {
  FieldHeader(id, ThriftType::kI64);
  Zigzag(value);
}

void ThriftCompactWriter::FieldByte(int16_t id, int8_t value) {
  FieldHeader(id, ThriftType::kByte);
  out_.push_back(static_cast<char>(value));
}

void ThriftCompactWriter::FieldBool(int16_t id, bool value) {
  FieldHeader(id, value ? ThriftType::kTrue : ThriftType::kFalse);
}

void ThriftCompactWriter::FieldBinary(int16_t id, std::string_view value) {
  FieldHeader(id, ThriftType::kBinary);
  ElementBinary(value);
}

void ThriftCompactWriter::FieldStructBegin(int16_t id) {
  FieldHeader(id, ThriftType::kStruct);
  BeginStruct();
}

void ThriftCompactWriter::FieldListBegin(int16_t id, ThriftType element_type, int64_t size) {
  FieldHeader(id, ThriftType::kList);
  if (size < 15) {
    out_.push_back(static_cast<char>((size << 4) | static_cast<int>(element_type)));
  } else {
    out_.push_back(static_cast<char>(0xF0 | static_cast<int>(element_type)));
    Varint(static_cast<uint64_t>(size));
  }
}

void ThriftCompactWriter::ElementI32(int32_t value) { Zigzag(value); }

void ThriftCompactWriter::ElementI64(int64_t value) { Zigzag(value); }

void ThriftCompactWriter::ElementBool(bool value) { out_.push_back(static_cast<char>(value ? 1 : 2)); }

void ThriftCompactWriter::ElementBinary(std::string_view value) {
  Varint(value.size());
  out_.append(value);
}

void ThriftCompactWriter::BeginStruct() { last_ids_.push_back(0); }

void ThriftCompactWriter::EndStruct() {
  assert(last_ids_.size() > 1);
  out_.push_back(static_cast<char>(ThriftType::kStop));
  last_ids_.pop_back();
}

void ThriftCompactWriter::FieldEmptyStruct(int16_t id) {
  FieldStructBegin(id);
  EndStruct();
}

}  // namespace quiver::parquet
