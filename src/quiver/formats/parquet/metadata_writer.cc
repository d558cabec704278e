#include "quiver/formats/parquet/metadata_writer.h"

#include <cassert>
#include <cstdint>

#include "quiver/formats/parquet/thrift_compact_writer.h"

namespace quiver::parquet {
namespace {

using W = ThriftCompactWriter;

void WriteKeyValues(W& w, int16_t id, const KeyValueList& kvs) {
  w.FieldListBegin(id, ThriftType::kStruct, static_cast<int64_t>(kvs.size()));
  for (const auto& [k, v] : kvs) {
    w.BeginStruct();
    w.FieldBinary(1, k);
    w.FieldBinary(2, v);
    w.EndStruct();
  }
}

void WriteLogicalType(W& w, const LogicalType& lt) {
  w.FieldStructBegin(10);
  switch (lt.kind) {
    case LogicalType::kDecimal:
      w.FieldStructBegin(LogicalType::kDecimal);
      w.FieldI32(1, lt.scale);
      w.FieldI32(2, lt.precision);
      w.EndStruct();
      break;
    case LogicalType::kTime:
    case LogicalType::kTimestamp:
      w.FieldStructBegin(static_cast<int16_t>(lt.kind));
      w.FieldBool(1, lt.adjusted_to_utc);
      w.FieldStructBegin(2);  // TimeUnit union: 1 MILLIS, 2 MICROS, 3 NANOS
      w.FieldEmptyStruct(static_cast<int16_t>(lt.time_unit));
      w.EndStruct();
      w.EndStruct();
      break;
    case LogicalType::kInteger:
      w.FieldStructBegin(LogicalType::kInteger);
      w.FieldByte(1, static_cast<int8_t>(lt.bit_width));
      w.FieldBool(2, lt.is_signed);
      w.EndStruct();
      break;
    default:  // STRING, DATE, FLOAT16, ...: empty structs
      w.FieldEmptyStruct(static_cast<int16_t>(lt.kind));
      break;
  }
  w.EndStruct();
}

void WriteSchemaElement(W& w, const SchemaElement& e) {
  w.BeginStruct();
  if (e.type) w.FieldI32(1, *e.type);
  if (e.type && *e.type == static_cast<int32_t>(PhysicalType::kFixedLenByteArray)) w.FieldI32(2, e.type_length);
  if (e.repetition) w.FieldI32(3, *e.repetition);
  w.FieldBinary(4, e.name);
  if (e.num_children > 0) w.FieldI32(5, e.num_children);
  if (e.converted_type) {
    w.FieldI32(6, *e.converted_type);
    if (*e.converted_type == static_cast<int32_t>(ConvertedType::kDecimal)) {
      w.FieldI32(7, e.scale);
      w.FieldI32(8, e.precision);
    }
  }
  if (e.field_id) w.FieldI32(9, *e.field_id);
  if (e.logical_type.kind != LogicalType::kNone) WriteLogicalType(w, e.logical_type);
  w.EndStruct();
}

void WriteStatistics(W& w, const Statistics& s) {
  w.FieldStructBegin(12);
  if (s.max) w.FieldBinary(1, *s.max);
  if (s.min) w.FieldBinary(2, *s.min);
  if (s.null_count) w.FieldI64(3, *s.null_count);
  if (s.distinct_count) w.FieldI64(4, *s.distinct_count);
  if (s.max_value) w.FieldBinary(5, *s.max_value);
  if (s.min_value) w.FieldBinary(6, *s.min_value);
  if (s.is_max_value_exact) w.FieldBool(7, *s.is_max_value_exact);
  if (s.is_min_value_exact) w.FieldBool(8, *s.is_min_value_exact);
  w.EndStruct();
}

void WriteColumnMetaData(W& w, const ColumnMetaData& m) {
  w.FieldStructBegin(3);
  w.FieldI32(1, m.type);
  w.FieldListBegin(2, ThriftType::kI32, static_cast<int64_t>(m.encodings.size()));
  for (int32_t e : m.encodings) w.ElementI32(e);
  w.FieldListBegin(3, ThriftType::kBinary, static_cast<int64_t>(m.path_in_schema.size()));
  for (const auto& p : m.path_in_schema) w.ElementBinary(p);
  w.FieldI32(4, m.codec);
  w.FieldI64(5, m.num_values);
  w.FieldI64(6, m.total_uncompressed_size);
  w.FieldI64(7, m.total_compressed_size);
  if (!m.key_value_metadata.empty()) WriteKeyValues(w, 8, m.key_value_metadata);
  w.FieldI64(9, m.data_page_offset);
  if (m.index_page_offset) w.FieldI64(10, *m.index_page_offset);
  if (m.dictionary_page_offset) w.FieldI64(11, *m.dictionary_page_offset);
  if (m.statistics) WriteStatistics(w, *m.statistics);
  w.EndStruct();
}

void WriteRowGroup(W& w, const RowGroup& g) {
  w.BeginStruct();
  w.FieldListBegin(1, ThriftType::kStruct, static_cast<int64_t>(g.columns.size()));
  for (const ColumnChunk& c : g.columns) {
    w.BeginStruct();
    if (!c.file_path.empty()) w.FieldBinary(1, c.file_path);
    w.FieldI64(2, c.file_offset);
    if (c.meta_data) WriteColumnMetaData(w, *c.meta_data);
    if (c.offset_index_offset && c.offset_index_length) {
      w.FieldI64(4, *c.offset_index_offset);
      w.FieldI32(5, *c.offset_index_length);
    }
    if (c.column_index_offset && c.column_index_length) {
      w.FieldI64(6, *c.column_index_offset);
      w.FieldI32(7, *c.column_index_length);
    }
    w.EndStruct();
  }
  w.FieldI64(2, g.total_byte_size);
  w.FieldI64(3, g.num_rows);
  if (g.file_offset) w.FieldI64(5, *g.file_offset);
  if (g.total_compressed_size) w.FieldI64(6, *g.total_compressed_size);
  // RowGroup.ordinal is an i16 on the wire: row groups past 32767 go without.
  if (g.ordinal && *g.ordinal >= 0 && *g.ordinal <= INT16_MAX) w.FieldI16(7, static_cast<int16_t>(*g.ordinal));
  w.EndStruct();
}

}  // namespace

std::string EncodeFileMetaData(const FileMetaData& md, bool type_defined_column_orders) {
  W w;
  w.BeginStruct();
  w.FieldI32(1, md.version);
  w.FieldListBegin(2, ThriftType::kStruct, static_cast<int64_t>(md.schema.size()));
  int64_t leaves = 0;
  for (const SchemaElement& e : md.schema) {
    WriteSchemaElement(w, e);
    if (e.num_children == 0 && e.type) ++leaves;
  }
  w.FieldI64(3, md.num_rows);
  w.FieldListBegin(4, ThriftType::kStruct, static_cast<int64_t>(md.row_groups.size()));
  for (const RowGroup& g : md.row_groups) WriteRowGroup(w, g);
  if (!md.key_value_metadata.empty()) WriteKeyValues(w, 5, md.key_value_metadata);
  if (!md.created_by.empty()) w.FieldBinary(6, md.created_by);
  if (type_defined_column_orders) {
    w.FieldListBegin(7, ThriftType::kStruct, leaves);
    for (int64_t i = 0; i < leaves; ++i) {
      w.BeginStruct();        // ColumnOrder union
      w.FieldEmptyStruct(1);  // TYPE_ORDER: TypeDefinedOrder
      w.EndStruct();
    }
  }
  w.EndStruct();
  return w.Release();
}

std::string EncodeOffsetIndex(const OffsetIndex& oi) {
  W w;
  w.BeginStruct();
  w.FieldListBegin(1, ThriftType::kStruct, static_cast<int64_t>(oi.page_locations.size()));
  for (const PageLocation& p : oi.page_locations) {
    w.BeginStruct();
    w.FieldI64(1, p.offset);
    w.FieldI32(2, p.compressed_page_size);
    w.FieldI64(3, p.first_row_index);
    w.EndStruct();
  }
  w.EndStruct();
  return w.Release();
}

std::string EncodeColumnIndex(const ColumnIndex& ci) {
  W w;
  w.BeginStruct();
  w.FieldListBegin(1, ThriftType::kTrue, static_cast<int64_t>(ci.null_pages.size()));
  for (uint8_t b : ci.null_pages) w.ElementBool(b != 0);
  w.FieldListBegin(2, ThriftType::kBinary, static_cast<int64_t>(ci.min_values.size()));
  for (const auto& v : ci.min_values) w.ElementBinary(v);
  w.FieldListBegin(3, ThriftType::kBinary, static_cast<int64_t>(ci.max_values.size()));
  for (const auto& v : ci.max_values) w.ElementBinary(v);
  w.FieldI32(4, ci.boundary_order);
  if (ci.null_counts) {
    w.FieldListBegin(5, ThriftType::kI64, static_cast<int64_t>(ci.null_counts->size()));
    for (int64_t n : *ci.null_counts) w.ElementI64(n);
  }
  w.EndStruct();
  return w.Release();
}

std::string EncodePageHeader(const PageHeader& h) {
  W w;
  w.BeginStruct();
  w.FieldI32(1, h.type);
  w.FieldI32(2, h.uncompressed_page_size);
  w.FieldI32(3, h.compressed_page_size);
  if (h.crc) w.FieldI32(4, *h.crc);
  if (h.type == static_cast<int32_t>(PageType::kDataPage)) {
    w.FieldStructBegin(5);
    w.FieldI32(1, h.num_values);
    w.FieldI32(2, h.encoding);
    w.FieldI32(3, h.definition_level_encoding);
    w.FieldI32(4, h.repetition_level_encoding);
    w.EndStruct();
  } else {
    assert(h.type == static_cast<int32_t>(PageType::kDictionaryPage));
    w.FieldStructBegin(7);
    w.FieldI32(1, h.num_values);
    w.FieldI32(2, h.encoding);
    w.EndStruct();
  }
  w.EndStruct();
  return w.Release();
}

}  // namespace quiver::parquet
