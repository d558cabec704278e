// quiver stats for table files (table_file_stats.h): a Parquet file's
// footer and page index described, a CSV file's shape.
#include "table_file_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "quiver/cli.h"
#include "quiver/columnar/value_format.h"
#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/parquet/page_index.h"
#include "quiver/formats/parquet/schema.h"

namespace quiver::cli {
namespace {

std::string Ratio(int64_t uncompressed, int64_t compressed) {
  char b[32];
  std::snprintf(b, sizeof b, " (%.2fx)", static_cast<double>(uncompressed) / std::max<int64_t>(1, compressed));
  return b;
}

// A statistic as text, by the leaf's physical type: integers and floats as
// numbers, byte strings quoted (non-printable bytes as \xNN, at most 40
// bytes shown), others in hex.
std::string StatText(int32_t type, const std::string& raw) {
  char b[64];
  switch (static_cast<parquet::PhysicalType>(type)) {
    case parquet::PhysicalType::kBoolean:
      if (raw.size() == 1) return raw[0] ? "true" : "false";
      break;
    case parquet::PhysicalType::kInt32:
      if (raw.size() == 4) {
        int32_t v;
        std::memcpy(&v, raw.data(), 4);
        return std::to_string(v);
      }
      break;
    case parquet::PhysicalType::kInt64:
      if (raw.size() == 8) {
        int64_t v;
        std::memcpy(&v, raw.data(), 8);
        return std::to_string(v);
      }
      break;
    case parquet::PhysicalType::kFloat:
      if (raw.size() == 4) {
        float v;
        std::memcpy(&v, raw.data(), 4);
        std::snprintf(b, sizeof b, "%g", static_cast<double>(v));
        return b;
      }
      break;
    case parquet::PhysicalType::kDouble:
      if (raw.size() == 8) {
        double v;
        std::memcpy(&v, raw.data(), 8);
        std::snprintf(b, sizeof b, "%g", v);
        return b;
      }
      break;
    case parquet::PhysicalType::kByteArray: {
      std::string out = "'";
      for (size_t i = 0; i < raw.size() && i < 40; ++i) {
        const unsigned char c = static_cast<unsigned char>(raw[i]);
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
          out.push_back(static_cast<char>(c));
        } else {
          std::snprintf(b, sizeof b, "\\x%02x", c);
          out += b;
        }
      }
      if (raw.size() > 40) out += "...";
      return out + "'";
    }
    default: break;
  }
  std::string hex = "0x";
  for (size_t i = 0; i < raw.size() && i < 32; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(raw[i]));
    hex += b;
  }
  return raw.size() > 32 ? hex + "..." : hex;
}

// Bytes per value of the fixed-width Arrow types a Parquet leaf maps to
// (LeafArrowType), 0 for the others.
int FixedBytes(const DataType& t) {
  const TypeId id = t.id;
  if (id == TypeId::kDecimal) return t.bit_width / 8;
  if (id == TypeId::kInt8 || id == TypeId::kUInt8) return 1;
  if (id == TypeId::kInt16 || id == TypeId::kUInt16 || id == TypeId::kFloat16) return 2;
  if (id == TypeId::kInt32 || id == TypeId::kUInt32 || id == TypeId::kDate32 || id == TypeId::kTime32) return 4;
  if (id == TypeId::kInt64 || id == TypeId::kUInt64 || id == TypeId::kTime64 || id == TypeId::kTimestamp ||
      id == TypeId::kDate64)
    return 8;
  return 0;
}

// A statistic as the value a reader of the column sees (a DATE as
// 1992-01-02, a DECIMAL(15,2) as 9.05, a TIMESTAMP in ISO 8601, an
// unsigned INT as unsigned: the leaf's Arrow type, value_format.h's text),
// where the leaf is annotated and the bytes have the physical type's size;
// otherwise as StatText shows the physical value. Statistics are PLAIN
// encoded (parquet.thrift Statistics): little-endian INT32 / INT64, INT96
// as nanoseconds of the day then the Julian day, DECIMAL in a byte array
// big-endian two's complement.
std::string LogicalStatText(const parquet::SchemaElement* leaf, int32_t type, const std::string& raw) {
  if (leaf == nullptr) return StatText(type, raw);
  const bool annotated = leaf->logical_type.kind != parquet::LogicalType::kNone || leaf->converted_type.has_value();
  const auto physical = static_cast<parquet::PhysicalType>(type);
  if (!annotated && physical != parquet::PhysicalType::kInt96) return StatText(type, raw);
  auto arrow = parquet::LeafArrowType(*leaf);
  if (!arrow.ok()) return StatText(type, raw);
  const DataTypePtr& t = *arrow;
  const int width = FixedBytes(*t);
  if (width == 0) return StatText(type, raw);  // strings, binary: as stored
  // The value as a little-endian two's complement integer of 16 bytes.
  uint8_t value[16] = {0};
  if (physical == parquet::PhysicalType::kInt32 && raw.size() == 4) {
    int32_t v;
    std::memcpy(&v, raw.data(), 4);
    const int64_t wide = t->id == TypeId::kUInt32 ? static_cast<int64_t>(static_cast<uint32_t>(v)) : v;
    std::memcpy(value, &wide, 8);
    if (wide < 0) std::memset(value + 8, 0xff, 8);
  } else if (physical == parquet::PhysicalType::kInt64 && raw.size() == 8) {
    std::memcpy(value, raw.data(), 8);
    if (t->id != TypeId::kUInt64 && (static_cast<unsigned char>(raw[7]) & 0x80)) std::memset(value + 8, 0xff, 8);
  } else if (physical == parquet::PhysicalType::kInt96 && raw.size() == 12 && t->id == TypeId::kTimestamp) {
    int64_t nanos_of_day;
    int32_t julian_day;
    std::memcpy(&nanos_of_day, raw.data(), 8);
    std::memcpy(&julian_day, raw.data() + 8, 4);
    const int64_t nanos = (static_cast<int64_t>(julian_day) - 2440588) * 86400LL * 1000000000LL + nanos_of_day;
    std::memcpy(value, &nanos, 8);
  } else if (t->id == TypeId::kDecimal && !raw.empty() && raw.size() <= 16) {
    const bool negative = static_cast<unsigned char>(raw[0]) & 0x80;
    std::memset(value, negative ? 0xff : 0, 16);
    for (size_t i = 0; i < raw.size(); ++i) value[i] = static_cast<uint8_t>(raw[raw.size() - 1 - i]);
  } else if (t->id == TypeId::kFloat16 && raw.size() == 2) {
    std::memcpy(value, raw.data(), 2);
  } else {
    return StatText(type, raw);
  }
  ArrayData one;
  one.type = t;
  one.length = 1;
  one.buffers = {nullptr, Buffer::Unowned(value, width)};
  return FormatValueToString(one, 0, ValueFormat::kText);
}

std::string StatisticsText(const parquet::SchemaElement* leaf, int32_t type,
                           const std::optional<parquet::Statistics>& s) {
  if (!s) return "statistics none";
  std::string out = "statistics";
  const std::string* lo = s->min_value ? &*s->min_value : (s->min ? &*s->min : nullptr);
  const std::string* hi = s->max_value ? &*s->max_value : (s->max ? &*s->max : nullptr);
  if (lo) out += " min " + LogicalStatText(leaf, type, *lo);
  if (hi) out += " max " + LogicalStatText(leaf, type, *hi);
  if (!s->min_value && s->min) out += " (deprecated min/max)";
  if (s->null_count) out += " nulls " + std::to_string(*s->null_count);
  if (s->distinct_count) out += " distinct " + std::to_string(*s->distinct_count);
  if (!lo && !hi && !s->null_count && !s->distinct_count) out += " empty";
  return out;
}

}  // namespace

Result<std::string> DescribeParquetFile(const parquet::FileReader& reader, MemoryPool* pool) {
  const parquet::FileMetaData& md = reader.metadata();
  const parquet::ParquetSchema& schema = reader.parquet_schema();
  std::string out = "format: parquet, version " + std::to_string(md.version) + ", created by '" + md.created_by +
                    "', " + std::to_string(reader.num_row_groups()) + " row groups, " +
                    std::to_string(reader.num_rows()) + " rows, " + std::to_string(schema.leaves.size()) +
                    " leaf columns, " + std::to_string(reader.source().size()) + " B\n";
  int64_t compressed_total = 0, uncompressed_total = 0, pages_total = 0, chunks_indexed = 0;
  for (int g = 0; g < reader.num_row_groups(); ++g) {
    const parquet::RowGroup& rg = md.row_groups[static_cast<size_t>(g)];
    int64_t compressed = 0, uncompressed = 0;
    for (const auto& cc : rg.columns) {
      if (!cc.meta_data) continue;
      compressed += cc.meta_data->total_compressed_size;
      uncompressed += cc.meta_data->total_uncompressed_size;
    }
    out += "row group " + std::to_string(g) + ": rows " + std::to_string(rg.num_rows) + ", compressed " +
           std::to_string(compressed) + " B, uncompressed " + std::to_string(uncompressed) + " B" +
           Ratio(uncompressed, compressed) + "\n";
    // The page indexes of the row group's chunks (read and checked).
    std::vector<int> leaves;
    for (int l = 0; l < static_cast<int>(rg.columns.size()); ++l) leaves.push_back(l);
    QUIVER_ASSIGN_OR_RETURN(auto indexes, parquet::ReadPageIndexes(reader, g, leaves, true, pool));
    for (size_t l = 0; l < rg.columns.size(); ++l) {
      const parquet::ColumnChunk& cc = rg.columns[l];
      std::string name;
      if (cc.meta_data) {
        for (const auto& p : cc.meta_data->path_in_schema) name += (name.empty() ? "" : ".") + p;
      }
      if (name.empty() && l < schema.leaves.size())
        name = schema.nodes[static_cast<size_t>(schema.leaves[l])].element->name;
      out += "  " + name + ": ";
      if (!cc.meta_data) {
        out += cc.encrypted ? "encrypted\n" : "no metadata\n";
        continue;
      }
      const parquet::ColumnMetaData& m = *cc.meta_data;
      const parquet::SchemaElement* leaf =
          l < schema.leaves.size() ? schema.nodes[static_cast<size_t>(schema.leaves[l])].element : nullptr;
      out += parquet::PhysicalTypeName(m.type);
      if (leaf != nullptr && (leaf->logical_type.kind != parquet::LogicalType::kNone || leaf->converted_type)) {
        auto arrow = parquet::LeafArrowType(*leaf);  // the annotated type, as a reader gets it
        const bool plain_int =
            arrow.ok() &&
            (((*arrow)->id == TypeId::kInt32 && m.type == static_cast<int32_t>(parquet::PhysicalType::kInt32)) ||
             ((*arrow)->id == TypeId::kInt64 && m.type == static_cast<int32_t>(parquet::PhysicalType::kInt64)));
        if (arrow.ok() && !plain_int) out += " (" + (*arrow)->ToString() + ")";
      }
      out += ", codec " + parquet::CodecName(m.codec) + ", encodings [";
      for (size_t i = 0; i < m.encodings.size(); ++i) out += (i ? ", " : "") + parquet::EncodingName(m.encodings[i]);
      out += "], values " + std::to_string(m.num_values) + ", compressed " + std::to_string(m.total_compressed_size) +
             " B, uncompressed " + std::to_string(m.total_uncompressed_size) + " B" +
             Ratio(m.total_uncompressed_size, m.total_compressed_size) + ", " +
             StatisticsText(leaf, m.type, m.statistics);
      const parquet::ChunkPageIndex& pi = indexes[l];
      if (pi.offset_index) {
        const size_t pages = pi.offset_index->page_locations.size();
        out += ", page index: " + std::to_string(pages) + " pages (offset index" +
               (pi.column_index ? std::string(", column index") : std::string()) + ")";
        pages_total += static_cast<int64_t>(pages);
        ++chunks_indexed;
      } else {
        out += ", page index: none";
      }
      if (m.bloom_filter_offset) out += ", bloom filter";
      out += "\n";
    }
    compressed_total += compressed;
    uncompressed_total += uncompressed;
  }
  int64_t chunks = 0;
  for (const auto& rg : md.row_groups) chunks += static_cast<int64_t>(rg.columns.size());
  out += "total: " + std::to_string(reader.num_row_groups()) + " row groups, " + std::to_string(reader.num_rows()) +
         " rows, compressed " + std::to_string(compressed_total) + " B, uncompressed " +
         std::to_string(uncompressed_total) + " B" + Ratio(uncompressed_total, compressed_total) + ", page index on " +
         std::to_string(chunks_indexed) + " of " + std::to_string(chunks) + " column chunks (" +
         std::to_string(pages_total) + " pages)\n";
  return out;
}

std::string DescribeCsvTable(const std::string& path, const formats::csv::CsvTable& t, int64_t file_bytes) {
  const formats::csv::CsvCompression c = formats::csv::CsvCompressionOf(path);
  const char* codec = c == formats::csv::CsvCompression::kGzip   ? "gzip"
                      : c == formats::csv::CsvCompression::kZstd ? "zstd"
                                                                 : "none";
  std::string delim = t.delimiter == '\t' ? "\\t" : std::string(1, t.delimiter);
  std::string out = "format: csv, compression " + std::string(codec) + ", " + std::to_string(file_bytes) +
                    " B, delimiter '" + delim + "', quote '" + std::string(1, t.quote) + "', header " +
                    (t.header ? "yes" : "no") + ", " + std::to_string(t.num_rows) + " rows, " +
                    std::to_string(t.schema->fields.size()) + " columns\n";
  for (size_t c2 = 0; c2 < t.schema->fields.size(); ++c2) {
    int64_t nulls = 0, bytes = 0;
    for (const auto& b : t.batches) {
      nulls += b->columns[c2]->null_count;
      bytes += b->columns[c2]->TotalBufferBytes();
    }
    out += "  " + t.schema->fields[c2]->name + ": " + t.schema->fields[c2]->type->ToString() + ", nulls " +
           std::to_string(nulls) + ", " + std::to_string(bytes) + " B as Arrow\n";
  }
  return out;
}

}  // namespace quiver::cli
