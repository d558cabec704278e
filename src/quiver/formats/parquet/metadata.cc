#include "quiver/formats/parquet/metadata.h"

#include "quiver/formats/parquet/thrift_compact.h"

namespace quiver::parquet {

std::string PhysicalTypeName(int32_t type) {
  static const char* const kNames[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                       "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  if (type >= 0 && type < 8) return kNames[type];
  return "type " + std::to_string(type);
}

std::string EncodingName(int32_t encoding) {
  static const char* const kNames[] = {
      "PLAIN",          "GROUP_VAR_INT",       "PLAIN_DICTIONARY",        "RLE",
      "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
      "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  if (encoding >= 0 && encoding < 10) return kNames[encoding];
  return "encoding " + std::to_string(encoding);
}

std::string CodecName(int32_t codec) {
  static const char* const kNames[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  if (codec >= 0 && codec < 8) return kNames[codec];
  return "codec " + std::to_string(codec);
}

namespace {

using R = ThriftCompactReader;

/// Stores a decoded value, or passes the error on.
template <typename V, typename Out>
Status Put(Result<V> r, Out* out) {
  if (!r.ok()) return r.status();
  *out = static_cast<Out>(*r);
  return Status::OK();
}
using T = ThriftType;

Result<std::string> ReadString(R& r, T type) {
  QUIVER_ASSIGN_OR_RETURN(auto v, r.ReadBinary(type));
  return std::string(v);
}

Status ReadKeyValues(R& r, T type, KeyValueList* out) {
  return r.ReadList(type, [&](T et) {
    if (et != T::kStruct) return Status::Invalid("KeyValue: not a struct");
    std::pair<std::string, std::string> kv;
    QUIVER_RETURN_NOT_OK(r.ReadStruct([&](int16_t id, T t) -> Status {
      if (id == 1) return Put(ReadString(r, t), &kv.first);
      if (id == 2) return Put(ReadString(r, t), &kv.second);
      return r.Skip(t);
    }));
    out->push_back(std::move(kv));
    return Status::OK();
  });
}

/// Reads an empty-struct union member (e.g. TimeUnit's MILLIS) and reports
/// which field id was set.
Status ReadUnionId(R& r, int* out) {
  return r.ReadStruct([&](int16_t id, T t) {
    *out = id;
    return r.Skip(t);
  });
}

Status ReadLogicalType(R& r, LogicalType* lt) {
  return r.ReadStruct([&](int16_t id, T t) -> Status {
    if (t != T::kStruct) return r.Skip(t);
    lt->kind = id;
    switch (id) {
      case LogicalType::kDecimal:
        return r.ReadStruct([&](int16_t f, T ft) -> Status {
          if (f == 1) return Put(r.ReadI32(ft), &lt->scale);
          if (f == 2) return Put(r.ReadI32(ft), &lt->precision);
          return r.Skip(ft);
        });
      case LogicalType::kTime:
      case LogicalType::kTimestamp:
        return r.ReadStruct([&](int16_t f, T ft) -> Status {
          if (f == 1) return Put(r.ReadBool(ft), &lt->adjusted_to_utc);
          if (f == 2 && ft == T::kStruct) return ReadUnionId(r, &lt->time_unit);
          return r.Skip(ft);
        });
      case LogicalType::kInteger:
        return r.ReadStruct([&](int16_t f, T ft) -> Status {
          if (f == 1) {
            QUIVER_ASSIGN_OR_RETURN(int32_t w, r.ReadI32(ft));
            lt->bit_width = w;
            return Status::OK();
          }
          if (f == 2) return Put(r.ReadBool(ft), &lt->is_signed);
          return r.Skip(ft);
        });
      default: return r.Skip(t);
    }
  });
}

Status ReadSchemaElement(R& r, SchemaElement* e) {
  return r.ReadStruct([&](int16_t id, T t) -> Status {
    switch (id) {
      case 1: return Put(r.ReadI32(t), &e->type.emplace());
      case 2: return Put(r.ReadI32(t), &e->type_length);
      case 3: return Put(r.ReadI32(t), &e->repetition.emplace());
      case 4: return Put(ReadString(r, t), &e->name);
      case 5: return Put(r.ReadI32(t), &e->num_children);
      case 6: return Put(r.ReadI32(t), &e->converted_type.emplace());
      case 7: return Put(r.ReadI32(t), &e->scale);
      case 8: return Put(r.ReadI32(t), &e->precision);
      case 9: return Put(r.ReadI32(t), &e->field_id.emplace());
      case 10:
        if (t == T::kStruct) return ReadLogicalType(r, &e->logical_type);
        return r.Skip(t);
      default: return r.Skip(t);
    }
  });
}

Status ReadStatistics(R& r, Statistics* s) {
  return r.ReadStruct([&](int16_t id, T t) -> Status {
    switch (id) {
      case 1: return Put(ReadString(r, t), &s->max.emplace());
      case 2: return Put(ReadString(r, t), &s->min.emplace());
      case 3: return Put(r.ReadI64(t), &s->null_count.emplace());
      case 4: return Put(r.ReadI64(t), &s->distinct_count.emplace());
      case 5: return Put(ReadString(r, t), &s->max_value.emplace());
      case 6: return Put(ReadString(r, t), &s->min_value.emplace());
      case 7: return Put(r.ReadBool(t), &s->is_max_value_exact.emplace());
      case 8: return Put(r.ReadBool(t), &s->is_min_value_exact.emplace());
      default: return r.Skip(t);
    }
  });
}

Status ReadColumnMetaData(R& r, ColumnMetaData* m) {
  return r.ReadStruct([&](int16_t id, T t) -> Status {
    switch (id) {
      case 1: return Put(r.ReadI32(t), &m->type);
      case 2:
        return r.ReadList(t, [&](T et) -> Status {
          QUIVER_ASSIGN_OR_RETURN(int32_t v, r.ReadI32(et));
          m->encodings.push_back(v);
          return Status::OK();
        });
      case 3:
        return r.ReadList(t, [&](T et) -> Status {
          QUIVER_ASSIGN_OR_RETURN(auto v, ReadString(r, et));
          m->path_in_schema.push_back(std::move(v));
          return Status::OK();
        });
      case 4: return Put(r.ReadI32(t), &m->codec);
      case 5: return Put(r.ReadI64(t), &m->num_values);
      case 6: return Put(r.ReadI64(t), &m->total_uncompressed_size);
      case 7: return Put(r.ReadI64(t), &m->total_compressed_size);
      case 8: return ReadKeyValues(r, t, &m->key_value_metadata);
      case 9: return Put(r.ReadI64(t), &m->data_page_offset);
      case 10: return Put(r.ReadI64(t), &m->index_page_offset.emplace());
      case 11: return Put(r.ReadI64(t), &m->dictionary_page_offset.emplace());
      case 12:
        if (t == T::kStruct) return ReadStatistics(r, &m->statistics.emplace());
        return r.Skip(t);
      case 14: return Put(r.ReadI64(t), &m->bloom_filter_offset.emplace());
      case 15: return Put(r.ReadI32(t), &m->bloom_filter_length.emplace());
      default: return r.Skip(t);
    }
  });
}

Status ReadColumnChunk(R& r, ColumnChunk* c) {
  return r.ReadStruct([&](int16_t id, T t) -> Status {
    switch (id) {
      case 1: return Put(ReadString(r, t), &c->file_path);
      case 2: return Put(r.ReadI64(t), &c->file_offset);
      case 3:
        if (t == T::kStruct) return ReadColumnMetaData(r, &c->meta_data.emplace());
        return r.Skip(t);
      case 4: return Put(r.ReadI64(t), &c->offset_index_offset.emplace());
      case 5: return Put(r.ReadI32(t), &c->offset_index_length.emplace());
      case 6: return Put(r.ReadI64(t), &c->column_index_offset.emplace());
      case 7: return Put(r.ReadI32(t), &c->column_index_length.emplace());
      case 8:
      case 9: c->encrypted = true; return r.Skip(t);
      default: return r.Skip(t);
    }
  });
}

Status ReadRowGroup(R& r, RowGroup* g) {
  // parquet.thrift's required fields: columns (1), total_byte_size (2),
  // num_rows (3). A corrupt footer that loses one must not read as a row
  // group of no rows.
  unsigned seen = 0;
  QUIVER_RETURN_NOT_OK(r.ReadStruct([&](int16_t id, T t) -> Status {
    if (id >= 1 && id <= 3) seen |= 1u << id;
    switch (id) {
      case 1:
        return r.ReadList(t, [&](T et) -> Status {
          if (et != T::kStruct) return Status::Invalid("ColumnChunk: not a struct");
          g->columns.emplace_back();
          return ReadColumnChunk(r, &g->columns.back());
        });
      case 2: return Put(r.ReadI64(t), &g->total_byte_size);
      case 3: return Put(r.ReadI64(t), &g->num_rows);
      case 5: return Put(r.ReadI64(t), &g->file_offset.emplace());
      case 6: return Put(r.ReadI64(t), &g->total_compressed_size.emplace());
      case 7: return Put(r.ReadI32(t), &g->ordinal.emplace());
      default: return r.Skip(t);
    }
  }));
  for (const auto& [id, name] : {std::pair{1, "columns"}, {2, "total_byte_size"}, {3, "num_rows"}}) {
    if (!(seen & (1u << id))) {
      return Status::Invalid("RowGroup: its required field " + std::to_string(id) + " (" + name + ") is missing");
    }
  }
  if (g->num_rows < 0) return Status::Invalid("RowGroup: num_rows " + std::to_string(g->num_rows) + " is negative");
  return Status::OK();
}

}  // namespace

Result<FileMetaData> DecodeFileMetaData(std::span<const uint8_t> bytes) {
  FileMetaData md;
  R r(bytes);
  unsigned seen = 0;  // parquet.thrift's required fields: version, schema, num_rows, row_groups (1..4)
  QUIVER_RETURN_NOT_OK_CTX(r.ReadStruct([&](int16_t id, T t) -> Status {
    if (id >= 1 && id <= 4) seen |= 1u << id;
    switch (id) {
      case 1: return Put(r.ReadI32(t), &md.version);
      case 2:
        return r.ReadList(t, [&](T et) -> Status {
          if (et != T::kStruct) return Status::Invalid("SchemaElement: not a struct");
          md.schema.emplace_back();
          return ReadSchemaElement(r, &md.schema.back());
        });
      case 3: return Put(r.ReadI64(t), &md.num_rows);
      case 4:
        return r.ReadList(t, [&](T et) -> Status {
          if (et != T::kStruct) return Status::Invalid("RowGroup: not a struct");
          md.row_groups.emplace_back();
          return ReadRowGroup(r, &md.row_groups.back());
        });
      case 5: return ReadKeyValues(r, t, &md.key_value_metadata);
      case 6: return Put(ReadString(r, t), &md.created_by);
      case 8: md.encryption_algorithm = true; return r.Skip(t);
      default: return r.Skip(t);
    }
  }),
                           "file metadata");
  // A footer that lost a required field, or whose row count is not its
  // row groups' (a flipped bit can do either), is corrupt: reading it
  // would drop rows without an error.
  for (const auto& [id, name] : {std::pair{1, "version"}, {2, "schema"}, {3, "num_rows"}, {4, "row_groups"}}) {
    if (!(seen & (1u << id))) {
      return Status::Invalid("file metadata: its required field " + std::to_string(id) + " (" + name + ") is missing");
    }
  }
  int64_t rows = 0;
  for (const RowGroup& g : md.row_groups) {
    if (__builtin_add_overflow(rows, g.num_rows, &rows)) return Status::Invalid("file metadata: row counts overflow");
  }
  // Fewer only: some writers leave num_rows 0 (parquet-testing's
  // repeated_no_annotation.parquet: 0, its row group 6; DuckDB reads the
  // row groups' counts, as quiver does), but rows the file says it has and
  // no row group holds were lost.
  if (md.num_rows > rows) {
    return Status::Invalid("file metadata: num_rows is " + std::to_string(md.num_rows) + " but its " +
                           std::to_string(md.row_groups.size()) + " row groups hold " + std::to_string(rows));
  }
  return md;
}

}  // namespace quiver::parquet
