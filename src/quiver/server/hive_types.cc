// quiver/server/hive_types.cc — Arrow types as Hive types, TIME as text and
// the result's IPC schema message (hive_types.h).
#include "quiver/server/hive_types.h"

#include <cstring>
#include <vector>

#include "quiver/columnar/spark_type.h"
#include "quiver/columnar/value_format.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::server {

t::TTypeId::type HiveTypeId(const DataType& type) {
  switch (SparkTypeOf(type)) {
    case SparkType::kVoid: return t::TTypeId::NULL_TYPE;
    case SparkType::kBoolean: return t::TTypeId::BOOLEAN_TYPE;
    case SparkType::kTinyint: return t::TTypeId::TINYINT_TYPE;
    case SparkType::kSmallint: return t::TTypeId::SMALLINT_TYPE;
    case SparkType::kInt: return t::TTypeId::INT_TYPE;
    case SparkType::kBigint: return t::TTypeId::BIGINT_TYPE;
    case SparkType::kFloat: return t::TTypeId::FLOAT_TYPE;
    case SparkType::kDouble: return t::TTypeId::DOUBLE_TYPE;
    case SparkType::kString: return t::TTypeId::STRING_TYPE;
    case SparkType::kBinary: return t::TTypeId::BINARY_TYPE;
    case SparkType::kDecimal: return t::TTypeId::DECIMAL_TYPE;
    case SparkType::kDate: return t::TTypeId::DATE_TYPE;
    case SparkType::kTimestamp: return t::TTypeId::TIMESTAMP_TYPE;
    case SparkType::kIntervalYearMonth: return t::TTypeId::INTERVAL_YEAR_MONTH_TYPE;
    case SparkType::kIntervalDayTime: return t::TTypeId::INTERVAL_DAY_TIME_TYPE;
    case SparkType::kArray: return t::TTypeId::ARRAY_TYPE;
    case SparkType::kStruct: return t::TTypeId::STRUCT_TYPE;
    case SparkType::kMap: return t::TTypeId::MAP_TYPE;
    case SparkType::kUnion: return t::TTypeId::UNION_TYPE;
  }
  return t::TTypeId::STRING_TYPE;
}

namespace {

bool IsTime(const DataType& type) { return type.id == TypeId::kTime32 || type.id == TypeId::kTime64; }

Result<ArrayDataPtr> TimeAsText(const ArrayData& a, MemoryPool* pool) {
  std::string text;
  std::vector<int32_t> offsets(static_cast<size_t>(a.length) + 1, 0);
  for (int64_t i = 0; i < a.length; ++i) {
    if (a.IsValid(i)) FormatValue(a, i, ValueFormat::kText, &text);
    if (text.size() > static_cast<size_t>(INT32_MAX)) return Status::Invalid("TIME as text: column over 2 GiB");
    offsets[static_cast<size_t>(i) + 1] = static_cast<int32_t>(text.size());
  }
  QUIVER_ASSIGN_OR_RETURN(auto off, Buffer::Allocate(pool, static_cast<int64_t>(offsets.size()) * 4));
  std::memcpy(off->mutable_data(), offsets.data(), offsets.size() * 4);
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, static_cast<int64_t>(text.size())));
  if (!text.empty()) std::memcpy(data->mutable_data(), text.data(), text.size());
  std::shared_ptr<Buffer> validity;
  if (a.null_count > 0) {
    QUIVER_ASSIGN_OR_RETURN(validity, Buffer::Allocate(pool, (a.length + 7) / 8));
    std::memset(validity->mutable_data(), 0, static_cast<size_t>((a.length + 7) / 8));
    for (int64_t i = 0; i < a.length; ++i)
      if (a.IsValid(i)) validity->mutable_data()[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  auto out = std::make_shared<ArrayData>();
  out->type = utf8();
  out->length = a.length;
  out->null_count = a.null_count;
  out->buffers = {validity, off, data};
  return ArrayDataPtr(out);
}

// The statement's stream with its TIME columns as utf8 text (above).
class TimeAsTextStream final : public RecordBatchStream {
 public:
  TimeAsTextStream(std::unique_ptr<RecordBatchStream> in, MemoryPool* pool) : in_(std::move(in)), pool_(pool) {
    auto s = std::make_shared<Schema>(*in_->schema());
    for (auto& f : s->fields) {
      if (IsTime(*f->type)) f = field(f->name, utf8(), f->nullable);
    }
    schema_ = s;
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in_->Next());
    if (!b) return b;
    auto out = std::make_shared<RecordBatch>(*b);
    out->schema = schema_;
    for (size_t i = 0; i < out->columns.size(); ++i) {
      if (IsTime(*out->columns[i]->type)) {
        QUIVER_ASSIGN_OR_RETURN(out->columns[i], TimeAsText(*out->columns[i], pool_));
      }
    }
    return RecordBatchPtr(out);
  }

 private:
  std::unique_ptr<RecordBatchStream> in_;
  MemoryPool* pool_;
  SchemaPtr schema_;
};

}  // namespace

std::unique_ptr<RecordBatchStream> WithTimeAsText(std::unique_ptr<RecordBatchStream> in, MemoryPool* pool) {
  bool any = false;
  for (const auto& f : in->schema()->fields) any |= IsTime(*f->type);
  if (!any) return in;
  return std::make_unique<TimeAsTextStream>(std::move(in), pool);
}

t::TTableSchema HiveSchema(const Schema& schema) {
  t::TTableSchema out;
  for (int i = 0; i < schema.num_fields(); ++i) {
    const Field& f = *schema.fields[i];
    t::TPrimitiveTypeEntry prim;
    prim.type = HiveTypeId(*f.type);
    if (f.type->id == TypeId::kDecimal) {
      t::TTypeQualifierValue p, s;
      p.__set_i32Value(f.type->precision);
      s.__set_i32Value(f.type->scale);
      t::TTypeQualifiers q;
      q.qualifiers["precision"] = p;
      q.qualifiers["scale"] = s;
      prim.__set_typeQualifiers(q);
    }
    t::TTypeEntry entry;
    entry.__set_primitiveEntry(prim);
    t::TColumnDesc col;
    col.columnName = f.name;
    col.typeDesc.types.push_back(entry);
    col.position = i + 1;
    out.columns.push_back(std::move(col));
  }
  return out;
}

// The IPC schema message of `schema` (encapsulated, no end-of-stream).
Result<std::string> SchemaMessage(const SchemaPtr& schema, MemoryPool* pool) {
  ipc::BufferOutputStream sink;
  ipc::WriteOptions wo;
  wo.pool = pool;
  QUIVER_ASSIGN_OR_RETURN(auto writer, ipc::RecordBatchWriter::Make(&sink, schema, ipc::IpcFormat::kStream, wo));
  const auto& bytes = sink.bytes();
  return std::string(bytes.begin(), bytes.end());
}

ColumnTypeInfo HiveTypeInfo(const DataType& type) {
  ColumnTypeInfo info;
  const auto id = HiveTypeId(type);
  auto it = t::_TTypeId_VALUES_TO_NAMES.find(static_cast<int>(id));
  std::string name = it != t::_TTypeId_VALUES_TO_NAMES.end() ? it->second : "STRING_TYPE";
  if (name.size() > 5 && name.substr(name.size() - 5) == "_TYPE") name.resize(name.size() - 5);
  info.type_name = name;
  if (type.id == TypeId::kDecimal) {
    info.type_name = "DECIMAL(" + std::to_string(type.precision) + "," + std::to_string(type.scale) + ")";
    info.column_size = type.precision;
    info.decimal_digits = type.scale;
  }
  info.jdbc_type = JdbcTypeCode(static_cast<int>(id));
  return info;
}

}  // namespace quiver::server
