#include "quiver/ipc/metadata_internal.h"

#include <optional>
#include <string>
#include <vector>

namespace quiver::ipc {

KeyValueMetadata MetadataFrom(const flatbuffers::Vector<flatbuffers::Offset<fb::KeyValue>>* kvs) {
  KeyValueMetadata out;
  if (kvs == nullptr) return out;
  out.reserve(kvs->size());
  for (const fb::KeyValue* kv : *kvs) {
    if (kv == nullptr) continue;
    out.emplace_back(kv->key() ? kv->key()->str() : std::string(), kv->value() ? kv->value()->str() : std::string());
  }
  return out;
}

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Status CheckVersion(fb::MetadataVersion version) {
  const auto v = static_cast<int16_t>(version);
  if (v > static_cast<int16_t>(fb::MetadataVersion::V5)) {
    return Status::NotImplemented("metadata version " + std::to_string(v + 1) +
                                  " is newer than the newest supported (V5)");
  }
  if (v < static_cast<int16_t>(fb::MetadataVersion::V4)) {
    return Status::NotImplemented("metadata version " + MetadataVersionName(version) +
                                  " is older than the oldest supported (V4)");
  }
  return Status::OK();
}

Result<TimeUnit> UnitFrom(fb::TimeUnit unit, const std::string& path) {
  switch (unit) {
    case fb::TimeUnit::SECOND: return TimeUnit::kSecond;
    case fb::TimeUnit::MILLISECOND: return TimeUnit::kMilli;
    case fb::TimeUnit::MICROSECOND: return TimeUnit::kMicro;
    case fb::TimeUnit::NANOSECOND: return TimeUnit::kNano;
  }
  return Status::Invalid("field '" + path + "': unknown time unit " + std::to_string(static_cast<int>(unit)));
}

fb::TimeUnit UnitTo(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return fb::TimeUnit::SECOND;
    case TimeUnit::kMilli: return fb::TimeUnit::MILLISECOND;
    case TimeUnit::kMicro: return fb::TimeUnit::MICROSECOND;
    case TimeUnit::kNano: return fb::TimeUnit::NANOSECOND;
  }
  return fb::TimeUnit::SECOND;
}

/// A type rule's result (columnar/data_type.h, "validating type factories")
/// located at the field.
Result<DataTypePtr> AtField(Result<DataTypePtr> type, const std::string& path) {
  if (!type.ok()) return Status::Invalid("field '" + path + "': " + type.status().message());
  return type;
}

Result<DataTypePtr> IntFrom(const fb::Int* t, const std::string& path) {
  if (t == nullptr) return Status::Invalid("field '" + path + "': Int type table missing");
  return AtField(MakeIntegerType(t->bit_width(), t->is_signed()), path);
}

Status ExpectChildren(const std::vector<FieldPtr>& children, size_t n, const std::string& path, const char* type_name) {
  if (children.size() != n) {
    return Status::Invalid("field '" + path + "': " + type_name + " needs " + std::to_string(n) +
                           " child field(s), got " + std::to_string(children.size()));
  }
  return Status::OK();
}

Result<FieldPtr> FieldFrom(const fb::Field* f, const ReadOptions& options, int depth, const std::string& parent_path);

Result<DataTypePtr> TypeFrom(const fb::Field* f, std::vector<FieldPtr> children, const std::string& path) {
  using T = fb::Type;
  if (f->type_type() != T::NONE && f->type() == nullptr) {
    return Status::Invalid("field '" + path + "': " + std::string(fb::EnumNameType(f->type_type())) +
                           " type table missing");
  }
  switch (f->type_type()) {
    case T::Null: return null();
    case T::Int: return IntFrom(f->type_as_Int(), path);
    case T::FloatingPoint: {
      const auto* t = f->type_as_FloatingPoint();
      switch (t->precision()) {
        case fb::Precision::HALF: return float16();
        case fb::Precision::SINGLE: return float32();
        case fb::Precision::DOUBLE: return float64();
      }
      return Status::Invalid("field '" + path + "': unknown floating point precision " +
                             std::to_string(static_cast<int>(t->precision())));
    }
    case T::Binary: return binary();
    case T::Utf8: return utf8();
    case T::LargeBinary: return large_binary();
    case T::LargeUtf8: return large_utf8();
    case T::BinaryView: return binary_view();
    case T::Utf8View: return utf8_view();
    case T::Bool: return boolean();
    case T::Decimal: {
      const auto* t = f->type_as_Decimal();
      return AtField(MakeDecimalType(t->bit_width(), t->precision(), t->scale()), path);
    }
    case T::Date: {
      const auto u = f->type_as_Date()->unit();
      if (u == fb::DateUnit::DAY) return date32();
      if (u == fb::DateUnit::MILLISECOND) return date64();
      return Status::Invalid("field '" + path + "': unknown date unit " + std::to_string(static_cast<int>(u)));
    }
    case T::Time: {
      const auto* t = f->type_as_Time();
      QUIVER_ASSIGN_OR_RETURN(TimeUnit unit, UnitFrom(t->unit(), path));
      return AtField(MakeTimeType(unit, t->bit_width()), path);
    }
    case T::Timestamp: {
      const auto* t = f->type_as_Timestamp();
      QUIVER_ASSIGN_OR_RETURN(TimeUnit unit, UnitFrom(t->unit(), path));
      return timestamp(unit, t->timezone() ? t->timezone()->str() : std::string());
    }
    case T::Duration: {
      QUIVER_ASSIGN_OR_RETURN(TimeUnit unit, UnitFrom(f->type_as_Duration()->unit(), path));
      return duration(unit);
    }
    case T::Interval: {
      switch (f->type_as_Interval()->unit()) {
        case fb::IntervalUnit::YEAR_MONTH: return interval_year_month();
        case fb::IntervalUnit::DAY_TIME: return interval_day_time();
        case fb::IntervalUnit::MONTH_DAY_NANO: return interval_month_day_nano();
      }
      return Status::Invalid("field '" + path + "': unknown interval unit");
    }
    case T::List: QUIVER_RETURN_NOT_OK(ExpectChildren(children, 1, path, "list")); return list(children[0]);
    case T::LargeList:
      QUIVER_RETURN_NOT_OK(ExpectChildren(children, 1, path, "large_list"));
      return large_list(children[0]);
    case T::ListView:
      QUIVER_RETURN_NOT_OK(ExpectChildren(children, 1, path, "list_view"));
      return list_view(children[0]);
    case T::LargeListView:
      QUIVER_RETURN_NOT_OK(ExpectChildren(children, 1, path, "large_list_view"));
      return large_list_view(children[0]);
    case T::FixedSizeList: {
      QUIVER_RETURN_NOT_OK(ExpectChildren(children, 1, path, "fixed_size_list"));
      return AtField(MakeFixedSizeListType(children[0], f->type_as_FixedSizeList()->list_size()), path);
    }
    case T::FixedSizeBinary: return AtField(MakeFixedSizeBinaryType(f->type_as_FixedSizeBinary()->byte_width()), path);
    case T::Struct_: return struct_(std::move(children));
    case T::Map: {
      QUIVER_RETURN_NOT_OK(ExpectChildren(children, 1, path, "map"));
      return AtField(MakeMapType(children[0], f->type_as_Map()->keys_sorted()), path);
    }
    case T::Union: {
      const auto* u = f->type_as_Union();
      std::optional<std::vector<int64_t>> codes;
      if (u->type_ids() != nullptr) codes.emplace(u->type_ids()->begin(), u->type_ids()->end());
      if (u->mode() != fb::UnionMode::Sparse && u->mode() != fb::UnionMode::Dense) {
        return Status::Invalid("field '" + path + "': unknown union mode");
      }
      const TypeId mode = u->mode() == fb::UnionMode::Sparse ? TypeId::kSparseUnion : TypeId::kDenseUnion;
      return AtField(MakeUnionType(mode, std::move(children), std::move(codes)), path);
    }
    case T::RunEndEncoded: {
      QUIVER_RETURN_NOT_OK(ExpectChildren(children, 2, path, "run_end_encoded"));
      return AtField(MakeRunEndEncodedType(children[0], children[1]), path);
    }
    case T::NONE: return Status::Invalid("field '" + path + "': type missing");
  }
  return Status::NotImplemented("field '" + path + "': unknown type (union value " +
                                std::to_string(static_cast<int>(f->type_type())) + ")");
}

Result<FieldPtr> FieldFrom(const fb::Field* f, const ReadOptions& options, int depth, const std::string& parent_path) {
  if (f == nullptr) return Status::Invalid("field '" + parent_path + "': null field entry");
  std::string name = f->name() ? f->name()->str() : std::string();
  std::string path = parent_path.empty() ? name : parent_path + "." + name;
  if (depth > options.max_nesting_depth) {
    return Status::Invalid("field '" + path + "': nesting deeper than " + std::to_string(options.max_nesting_depth) +
                           " levels");
  }
  std::vector<FieldPtr> children;
  if (f->children() != nullptr) {
    children.reserve(f->children()->size());
    for (const fb::Field* c : *f->children()) {
      QUIVER_ASSIGN_OR_RETURN(FieldPtr child, FieldFrom(c, options, depth + 1, path));
      children.push_back(std::move(child));
    }
  }
  QUIVER_ASSIGN_OR_RETURN(DataTypePtr type, TypeFrom(f, std::move(children), path));
  int64_t dictionary_id = -1;
  if (const fb::DictionaryEncoding* d = f->dictionary(); d != nullptr) {
    DataTypePtr index = int32();
    if (d->index_type() != nullptr) {
      QUIVER_ASSIGN_OR_RETURN(index, IntFrom(d->index_type(), path));
    }

    dictionary_id = d->id();
    type = dictionary(index, type, d->is_ordered());
  }
  return field(std::move(name), std::move(type), f->nullable(), MetadataFrom(f->custom_metadata()), dictionary_id);
}

// ---- writing ------------------------------------------------------------

Offset<flatbuffers::Vector<Offset<fb::KeyValue>>> MetadataTo(FlatBufferBuilder& b, const KeyValueMetadata& md) {
  if (md.empty()) return 0;
  std::vector<Offset<fb::KeyValue>> kvs;
  for (const auto& [k, v] : md) {
    auto ko = b.CreateString(k);
    auto vo = b.CreateString(v);
    kvs.push_back(fb::CreateKeyValue(b, ko, vo));
  }
  return b.CreateVector(kvs);
}

Offset<fb::Int> IntTo(FlatBufferBuilder& b, const DataType& t) {
  return fb::CreateInt(b, FixedBitWidth(t), IsSignedInteger(t.id));
}

Offset<fb::Field> FieldTo(FlatBufferBuilder& b, const Field& f);

std::pair<fb::Type, Offset<void>> TypeTo(FlatBufferBuilder& b, const DataType& t) {
  using T = fb::Type;
  switch (t.id) {
    case TypeId::kNull: return {T::Null, fb::CreateNull(b).Union()};
    case TypeId::kBool: return {T::Bool, fb::CreateBool(b).Union()};
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32:
    case TypeId::kUInt64: return {T::Int, IntTo(b, t).Union()};
    case TypeId::kFloat16: return {T::FloatingPoint, fb::CreateFloatingPoint(b, fb::Precision::HALF).Union()};
    case TypeId::kFloat32: return {T::FloatingPoint, fb::CreateFloatingPoint(b, fb::Precision::SINGLE).Union()};
    case TypeId::kFloat64: return {T::FloatingPoint, fb::CreateFloatingPoint(b, fb::Precision::DOUBLE).Union()};
    case TypeId::kBinary: return {T::Binary, fb::CreateBinary(b).Union()};
    case TypeId::kUtf8: return {T::Utf8, fb::CreateUtf8(b).Union()};
    case TypeId::kLargeBinary: return {T::LargeBinary, fb::CreateLargeBinary(b).Union()};
    case TypeId::kLargeUtf8: return {T::LargeUtf8, fb::CreateLargeUtf8(b).Union()};
    case TypeId::kBinaryView: return {T::BinaryView, fb::CreateBinaryView(b).Union()};
    case TypeId::kUtf8View: return {T::Utf8View, fb::CreateUtf8View(b).Union()};
    case TypeId::kFixedSizeBinary: return {T::FixedSizeBinary, fb::CreateFixedSizeBinary(b, t.byte_width).Union()};
    case TypeId::kDecimal: return {T::Decimal, fb::CreateDecimal(b, t.precision, t.scale, t.bit_width).Union()};
    case TypeId::kDate32: return {T::Date, fb::CreateDate(b, fb::DateUnit::DAY).Union()};
    case TypeId::kDate64: return {T::Date, fb::CreateDate(b, fb::DateUnit::MILLISECOND).Union()};
    case TypeId::kTime32: return {T::Time, fb::CreateTime(b, UnitTo(t.unit), 32).Union()};
    case TypeId::kTime64: return {T::Time, fb::CreateTime(b, UnitTo(t.unit), 64).Union()};
    case TypeId::kTimestamp: {
      auto tz = t.timezone.empty() ? Offset<flatbuffers::String>() : b.CreateString(t.timezone);
      return {T::Timestamp, fb::CreateTimestamp(b, UnitTo(t.unit), tz).Union()};
    }
    case TypeId::kDuration: return {T::Duration, fb::CreateDuration(b, UnitTo(t.unit)).Union()};
    case TypeId::kIntervalYearMonth: return {T::Interval, fb::CreateInterval(b, fb::IntervalUnit::YEAR_MONTH).Union()};
    case TypeId::kIntervalDayTime: return {T::Interval, fb::CreateInterval(b, fb::IntervalUnit::DAY_TIME).Union()};
    case TypeId::kIntervalMonthDayNano:
      return {T::Interval, fb::CreateInterval(b, fb::IntervalUnit::MONTH_DAY_NANO).Union()};
    case TypeId::kList: return {T::List, fb::CreateList(b).Union()};
    case TypeId::kLargeList: return {T::LargeList, fb::CreateLargeList(b).Union()};
    case TypeId::kListView: return {T::ListView, fb::CreateListView(b).Union()};
    case TypeId::kLargeListView: return {T::LargeListView, fb::CreateLargeListView(b).Union()};
    case TypeId::kFixedSizeList: return {T::FixedSizeList, fb::CreateFixedSizeList(b, t.list_size).Union()};
    case TypeId::kStruct: return {T::Struct_, fb::CreateStruct_(b).Union()};
    case TypeId::kMap: return {T::Map, fb::CreateMap(b, t.keys_sorted).Union()};
    case TypeId::kSparseUnion:
    case TypeId::kDenseUnion: {
      std::vector<int32_t> codes(t.type_codes.begin(), t.type_codes.end());
      auto v = b.CreateVector(codes);
      return {
          T::Union,
          fb::CreateUnion(b, t.id == TypeId::kDenseUnion ? fb::UnionMode::Dense : fb::UnionMode::Sparse, v).Union()};
    }
    case TypeId::kRunEndEncoded: return {T::RunEndEncoded, fb::CreateRunEndEncoded(b).Union()};
    case TypeId::kDictionary: return TypeTo(b, *t.value_type);
  }
  return {T::NONE, 0};
}

Offset<fb::Field> FieldTo(FlatBufferBuilder& b, const Field& f) {
  const DataType& t = *f.type;
  const DataType& value_type = t.id == TypeId::kDictionary ? *t.value_type : t;
  std::vector<Offset<fb::Field>> children;
  for (const auto& c : value_type.children) children.push_back(FieldTo(b, *c));
  auto name = b.CreateString(f.name);
  auto [type_type, type_offset] = TypeTo(b, value_type);
  auto children_off = b.CreateVector(children);
  Offset<fb::DictionaryEncoding> dict = 0;
  if (t.id == TypeId::kDictionary) {
    auto index = IntTo(b, *t.index_type);
    dict = fb::CreateDictionaryEncoding(b, f.dictionary_id, index, t.ordered);
  }
  auto md = MetadataTo(b, f.metadata);
  return fb::CreateField(b, name, f.nullable, type_type, type_offset, dict, children_off, md);
}

template <typename Root>
Result<const Root*> VerifyRoot(std::span<const uint8_t> bytes, const ReadOptions& options, const char* what) {
  if (bytes.size() < 8) {
    return Status::Invalid(std::string(what) + " flatbuffer of " + std::to_string(bytes.size()) +
                           " bytes is too small");
  }
  flatbuffers::Verifier::Options vo;
  vo.max_depth = static_cast<flatbuffers::uoffset_t>(options.max_nesting_depth * 2 + 16);
  vo.max_tables = static_cast<flatbuffers::uoffset_t>(options.max_flatbuffer_tables);
  vo.check_alignment = true;
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), vo);
  if (!verifier.VerifyBuffer<Root>(nullptr)) {
    return Status::Invalid(std::string(what) + " flatbuffer failed verification (" + std::to_string(bytes.size()) +
                           " bytes)");
  }
  return flatbuffers::GetRoot<Root>(bytes.data());
}

}  // namespace

std::string MetadataVersionName(fb::MetadataVersion version) {
  // Appended rather than "V" + std::to_string(...): GCC 12 reports a false
  // -Wrestrict on that operator+ at -O2 (GCC bug 105329).
  std::string out = "V";
  out += std::to_string(static_cast<int>(version) + 1);
  return out;
}

Result<const fb::Message*> VerifyMessage(std::span<const uint8_t> bytes, const ReadOptions& options) {
  QUIVER_ASSIGN_OR_RETURN(const fb::Message* m, VerifyRoot<fb::Message>(bytes, options, "message"));
  QUIVER_RETURN_NOT_OK(CheckVersion(m->version()));
  return m;
}

Result<const fb::Footer*> VerifyFooter(std::span<const uint8_t> bytes, const ReadOptions& options) {
  QUIVER_ASSIGN_OR_RETURN(const fb::Footer* f, VerifyRoot<fb::Footer>(bytes, options, "footer"));
  // Writers before Arrow 0.15 left the footer's version unset (V1); only a
  // future version is refused here. Every message is checked on its own.
  if (static_cast<int16_t>(f->version()) > static_cast<int16_t>(fb::MetadataVersion::V5)) {
    return CheckVersion(f->version());
  }
  return f;
}

Result<SchemaPtr> SchemaFromFlatbuffer(const fb::Schema* schema, const ReadOptions& options) {
  if (schema == nullptr) return Status::Invalid("schema missing");
  auto out = std::make_shared<Schema>();
  if (schema->fields() != nullptr) {
    for (const fb::Field* f : *schema->fields()) {
      QUIVER_ASSIGN_OR_RETURN(FieldPtr field, FieldFrom(f, options, 1, ""));
      out->fields.push_back(std::move(field));
    }
  }
  out->metadata = MetadataFrom(schema->custom_metadata());
  if (schema->endianness() == fb::Endianness::Big) {
    out->big_endian = true;
  } else if (schema->endianness() != fb::Endianness::Little) {
    return Status::Invalid("schema: unknown endianness " + std::to_string(static_cast<int>(schema->endianness())));
  }
  return SchemaPtr(std::move(out));
}

flatbuffers::Offset<fb::Schema> SchemaToFlatbuffer(FlatBufferBuilder& b, const Schema& schema) {
  std::vector<Offset<fb::Field>> fields;
  for (const auto& f : schema.fields) fields.push_back(FieldTo(b, *f));
  auto fv = b.CreateVector(fields);
  auto md = MetadataTo(b, schema.metadata);
  return fb::CreateSchema(b, fb::Endianness::Little, fv, md);
}

}  // namespace quiver::ipc
