// quiver/integration/json_schema.cc — see json_schema_internal.h.
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "quiver/integration/json_integration.h"
#include "quiver/integration/json_schema_internal.h"

namespace quiver::integration {

namespace {

Result<TimeUnit> ParseUnit(const std::string& s, const std::string& path) {
  if (s == "SECOND") return TimeUnit::kSecond;
  if (s == "MILLISECOND") return TimeUnit::kMilli;
  if (s == "MICROSECOND") return TimeUnit::kMicro;
  if (s == "NANOSECOND") return TimeUnit::kNano;
  return Err(path, "invalid time unit '" + s + "'");
}

const char* UnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return "SECOND";
    case TimeUnit::kMilli: return "MILLISECOND";
    case TimeUnit::kMicro: return "MICROSECOND";
    case TimeUnit::kNano: return "NANOSECOND";
  }
  return "SECOND";
}

/// A type rule's result (columnar/data_type.h, "validating type factories")
/// located at `path`.
Result<DataTypePtr> AtPath(Result<DataTypePtr> type, const std::string& path) {
  if (!type.ok()) return Err(path, type.status().message());
  return type;
}

}  // namespace

// ---- reading -------------------------------------------------------------------

Result<SchemaPtr> JsonSchemaReader::ParseSchema(const Json& j) {
  const std::string path = "schema";
  if (!j.is_object()) return Err(path, "not a JSON object");
  auto schema = std::make_shared<Schema>();
  const Json* jfields = Member(j, "fields");
  if (jfields == nullptr || !jfields->is_array()) return Err(path, "missing \"fields\" array");
  for (size_t k = 0; k < jfields->size(); ++k) {
    QUIVER_ASSIGN_OR_RETURN(FieldPtr f, ParseField((*jfields)[k], path + ".fields[" + std::to_string(k) + "]", 0));
    schema->fields.push_back(std::move(f));
  }
  QUIVER_RETURN_NOT_OK(ParseMetadata(j, path, &schema->metadata));
  return SchemaPtr(std::move(schema));
}

Status JsonSchemaReader::ParseMetadata(const Json& j, const std::string& path, KeyValueMetadata* out) {
  const Json* jm = Member(j, "metadata");
  if (jm == nullptr || jm->is_null()) return Status::OK();
  if (!jm->is_array()) return Err(path, "\"metadata\" is not a JSON array");
  for (size_t k = 0; k < jm->size(); ++k) {
    const Json& kv = (*jm)[k];
    const Json* key = Member(kv, "key");
    const Json* value = Member(kv, "value");
    if (key == nullptr || value == nullptr || !key->is_string() || !value->is_string()) {
      return Err(path, "metadata[" + std::to_string(k) + "] needs string \"key\" and \"value\"");
    }
    out->emplace_back(key->get<std::string>(), value->get<std::string>());
  }
  return Status::OK();
}

Result<DataTypePtr> JsonSchemaReader::ParseIntType(const Json& jt, const std::string& path) {
  const Json* jbw = Member(jt, "bitWidth");
  const Json* jsigned = Member(jt, "isSigned");
  int64_t bw;
  if (jbw == nullptr || !ToInt64(*jbw, &bw)) return Err(path, "int type needs \"bitWidth\"");
  bool is_signed = true;
  if (jsigned != nullptr) {
    if (!jsigned->is_boolean()) return Err(path, "\"isSigned\" is not a boolean");
    is_signed = jsigned->get<bool>();
  }
  return AtPath(MakeIntegerType(bw, is_signed), path);
}

Result<DataTypePtr> JsonSchemaReader::ParseType(const Json& jt, std::vector<FieldPtr> children,
                                                const std::string& path) {
  if (!jt.is_object()) return Err(path, "\"type\" is not a JSON object");
  const Json* jname = Member(jt, "name");
  if (jname == nullptr || !jname->is_string()) return Err(path, "type without a \"name\"");
  const std::string& name = jname->get_ref<const std::string&>();
  auto need_children = [&](size_t n) -> Status {
    if (children.size() != n) {
      return Err(
          path, "type '" + name + "' needs " + std::to_string(n) + " children, got " + std::to_string(children.size()));
    }
    return Status::OK();
  };
  auto get_string = [&](const char* key, std::string* out) -> Status {
    const Json* v = Member(jt, key);
    if (v == nullptr || !v->is_string()) {
      return Err(path, "type '" + name + "' needs string \"" + key + "\"");
    }
    *out = v->get<std::string>();
    return Status::OK();
  };
  auto get_int = [&](const char* key, int64_t* out, bool required) -> Status {
    const Json* v = Member(jt, key);
    if (v == nullptr) {
      if (required) return Err(path, "type '" + name + "' needs integer \"" + key + "\"");
      return Status::OK();
    }
    if (!ToInt64(*v, out)) return Err(path, std::string("\"") + key + "\" is not an integer");
    return Status::OK();
  };

  const bool leaf = name != "list" && name != "largelist" && name != "listview" && name != "largelistview" &&
                    name != "fixedsizelist" && name != "struct" && name != "map" && name != "union" &&
                    name != "runendencoded";
  if (leaf) QUIVER_RETURN_NOT_OK(need_children(0));

  if (name == "null") return null();
  if (name == "bool") return boolean();
  if (name == "int") return ParseIntType(jt, path);
  if (name == "floatingpoint") {
    std::string precision;
    QUIVER_RETURN_NOT_OK(get_string("precision", &precision));
    if (precision == "HALF") return float16();
    if (precision == "SINGLE") return float32();
    if (precision == "DOUBLE") return float64();
    return Err(path, "invalid floating point precision '" + precision + "'");
  }
  if (name == "binary") return binary();
  if (name == "utf8") return utf8();
  if (name == "largebinary") return large_binary();
  if (name == "largeutf8") return large_utf8();
  if (name == "binaryview") return binary_view();
  if (name == "utf8view") return utf8_view();
  if (name == "fixedsizebinary") {
    int64_t w = 0;
    QUIVER_RETURN_NOT_OK(get_int("byteWidth", &w, true));
    return AtPath(MakeFixedSizeBinaryType(w), path);
  }
  if (name == "decimal" || name == "decimal32" || name == "decimal64" || name == "decimal256") {
    int64_t precision = 0, scale = 0;
    int64_t bw = name == "decimal32" ? 32 : name == "decimal64" ? 64 : name == "decimal256" ? 256 : 128;
    QUIVER_RETURN_NOT_OK(get_int("precision", &precision, true));
    QUIVER_RETURN_NOT_OK(get_int("scale", &scale, false));
    QUIVER_RETURN_NOT_OK(get_int("bitWidth", &bw, false));
    return AtPath(MakeDecimalType(bw, precision, scale), path);
  }
  if (name == "date") {
    std::string unit;
    QUIVER_RETURN_NOT_OK(get_string("unit", &unit));
    if (unit == "DAY") return date32();
    if (unit == "MILLISECOND") return date64();
    return Err(path, "invalid date unit '" + unit + "'");
  }
  if (name == "time") {
    std::string unit_name;
    QUIVER_RETURN_NOT_OK(get_string("unit", &unit_name));
    QUIVER_ASSIGN_OR_RETURN(TimeUnit unit, ParseUnit(unit_name, path));
    const int64_t expected_bw = (unit == TimeUnit::kSecond || unit == TimeUnit::kMilli) ? 32 : 64;
    int64_t bw = expected_bw;
    QUIVER_RETURN_NOT_OK(get_int("bitWidth", &bw, false));
    return AtPath(MakeTimeType(unit, bw), path);
  }
  if (name == "timestamp") {
    std::string unit_name;
    QUIVER_RETURN_NOT_OK(get_string("unit", &unit_name));
    QUIVER_ASSIGN_OR_RETURN(TimeUnit unit, ParseUnit(unit_name, path));
    std::string tz;
    const Json* jtz = Member(jt, "timezone");
    if (jtz != nullptr && !jtz->is_null()) {
      if (!jtz->is_string()) return Err(path, "\"timezone\" is not a string");
      tz = jtz->get<std::string>();
    }
    return timestamp(unit, std::move(tz));
  }
  if (name == "duration") {
    std::string unit_name;
    QUIVER_RETURN_NOT_OK(get_string("unit", &unit_name));
    QUIVER_ASSIGN_OR_RETURN(TimeUnit unit, ParseUnit(unit_name, path));
    return duration(unit);
  }
  if (name == "interval") {
    std::string unit;
    QUIVER_RETURN_NOT_OK(get_string("unit", &unit));
    if (unit == "YEAR_MONTH") return interval_year_month();
    if (unit == "DAY_TIME") return interval_day_time();
    if (unit == "MONTH_DAY_NANO") return interval_month_day_nano();
    return Err(path, "invalid interval unit '" + unit + "'");
  }
  if (name == "list" || name == "largelist" || name == "listview" || name == "largelistview") {
    QUIVER_RETURN_NOT_OK(need_children(1));
    if (name == "list") return list(children[0]);
    if (name == "largelist") return large_list(children[0]);
    if (name == "listview") return list_view(children[0]);
    return large_list_view(children[0]);
  }
  if (name == "fixedsizelist") {
    QUIVER_RETURN_NOT_OK(need_children(1));
    int64_t size = 0;
    QUIVER_RETURN_NOT_OK(get_int("listSize", &size, true));
    return AtPath(MakeFixedSizeListType(children[0], size), path);
  }
  if (name == "struct") return struct_(std::move(children));
  if (name == "map") {
    QUIVER_RETURN_NOT_OK(need_children(1));
    QUIVER_RETURN_NOT_OK(AtPath(MakeMapType(children[0], false), path).status());
    // Arrow's Schema.fbs: "the entries field must not be nullable" (the
    // IPC reader does not enforce it).
    if (children[0]->nullable) return Err(path, "map entries must not be nullable");
    bool keys_sorted = false;
    const Json* jks = Member(jt, "keysSorted");
    if (jks != nullptr) {
      if (!jks->is_boolean()) return Err(path, "\"keysSorted\" is not a boolean");
      keys_sorted = jks->get<bool>();
    }
    return map(children[0], keys_sorted);
  }
  if (name == "union") {
    std::string mode;
    QUIVER_RETURN_NOT_OK(get_string("mode", &mode));
    if (mode != "SPARSE" && mode != "DENSE") return Err(path, "invalid union mode '" + mode + "'");
    const Json* jids = Member(jt, "typeIds");
    std::optional<std::vector<int64_t>> codes;
    if (jids != nullptr && !jids->is_null()) {
      if (!jids->is_array()) return Err(path, "\"typeIds\" is not an array");
      codes.emplace();
      for (const Json& v : *jids) {
        int64_t c;
        if (!ToInt64(v, &c)) return Err(path, "invalid union type id " + Brief(v));
        codes->push_back(c);
      }
    }
    return AtPath(MakeUnionType(mode == "SPARSE" ? TypeId::kSparseUnion : TypeId::kDenseUnion, std::move(children),
                                std::move(codes)),
                  path);
  }
  if (name == "runendencoded") {
    QUIVER_RETURN_NOT_OK(need_children(2));
    return AtPath(MakeRunEndEncodedType(children[0], children[1]), path);
  }
  return Status::NotImplemented(path + ": unsupported type name '" + name + "'");
}

Result<FieldPtr> JsonSchemaReader::ParseField(const Json& j, const std::string& path, int depth) {
  if (depth > kJsonIntegrationMaxDepth) return Err(path, "fields nested too deeply");
  if (!j.is_object()) return Err(path, "field is not a JSON object");
  const Json* jname = Member(j, "name");
  if (jname == nullptr || !jname->is_string()) return Err(path, "field without a string \"name\"");
  const std::string name = jname->get<std::string>();
  const std::string fpath = path + "(" + name + ")";
  bool nullable = true;
  if (const Json* jn = Member(j, "nullable"); jn != nullptr) {
    if (!jn->is_boolean()) return Err(fpath, "\"nullable\" is not a boolean");
    nullable = jn->get<bool>();
  }
  std::vector<FieldPtr> children;
  if (const Json* jc = Member(j, "children"); jc != nullptr && !jc->is_null()) {
    if (!jc->is_array()) return Err(fpath, "\"children\" is not an array");
    for (size_t k = 0; k < jc->size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(FieldPtr c,
                              ParseField((*jc)[k], fpath + ".children[" + std::to_string(k) + "]", depth + 1));
      children.push_back(std::move(c));
    }
  }
  const Json* jt = Member(j, "type");
  if (jt == nullptr) return Err(fpath, "field without \"type\"");
  QUIVER_ASSIGN_OR_RETURN(DataTypePtr type, ParseType(*jt, std::move(children), fpath));
  KeyValueMetadata metadata;
  QUIVER_RETURN_NOT_OK(ParseMetadata(j, fpath, &metadata));

  int64_t dictionary_id = -1;
  if (const Json* jd = Member(j, "dictionary"); jd != nullptr && !jd->is_null()) {
    if (!jd->is_object()) return Err(fpath, "\"dictionary\" is not an object");
    const Json* jid = Member(*jd, "id");
    if (jid == nullptr || !ToInt64(*jid, &dictionary_id) || dictionary_id < 0) {
      return Err(fpath, "dictionary needs a non-negative integer \"id\"");
    }
    const Json* jit = Member(*jd, "indexType");
    if (jit == nullptr || !jit->is_object()) return Err(fpath, "dictionary needs \"indexType\"");
    const Json* jitn = Member(*jit, "name");
    if (jitn == nullptr || !jitn->is_string() || jitn->get_ref<const std::string&>() != "int") {
      return Err(fpath, "dictionary indexType must be an int type");
    }
    QUIVER_ASSIGN_OR_RETURN(DataTypePtr index_type, ParseIntType(*jit, fpath));
    bool ordered = false;
    if (const Json* jo = Member(*jd, "isOrdered"); jo != nullptr) {
      if (!jo->is_boolean()) return Err(fpath, "\"isOrdered\" is not a boolean");
      ordered = jo->get<bool>();
    }
    auto [it, inserted] = dict_value_types_.emplace(dictionary_id, type);
    if (!inserted && !it->second->Equals(*type)) {
      return Err(fpath, "dictionary id " + std::to_string(dictionary_id) + " is used with different value types " +
                            it->second->ToString() + " and " + type->ToString());
    }
    type = dictionary(std::move(index_type), std::move(type), ordered);
  }
  return field(name, std::move(type), nullable, std::move(metadata), dictionary_id);
}

// ---- writing -------------------------------------------------------------------

void JsonSchemaWriter::AssignIds(const Schema& schema) {
  int64_t max_id = -1;
  std::function<void(const Field&)> collect = [&](const Field& f) {
    if (f.dictionary_id > max_id) max_id = f.dictionary_id;
    const DataType* t = f.type.get();
    if (t == nullptr) return;
    if (t->id == TypeId::kDictionary && t->value_type) t = t->value_type.get();
    for (const auto& c : t->children) {
      if (c) collect(*c);
    }
  };
  for (const auto& f : schema.fields) {
    if (f) collect(*f);
  }
  next_id_ = max_id + 1;
  std::function<void(const Field&)> assign = [&](const Field& f) {
    const DataType* t = f.type.get();
    if (t == nullptr) return;
    if (t->id == TypeId::kDictionary) {
      if (t->value_type) {
        for (const auto& c : t->value_type->children) {
          if (c) assign(*c);
        }
      }
      if (f.dictionary_id < 0 && assigned_.find(&f) == assigned_.end()) assigned_[&f] = next_id_++;
      return;
    }
    for (const auto& c : t->children) {
      if (c) assign(*c);
    }
  };
  for (const auto& f : schema.fields) {
    if (f) assign(*f);
  }
}

int64_t JsonSchemaWriter::FieldId(const Field& f) const {
  if (f.dictionary_id >= 0) return f.dictionary_id;
  auto it = assigned_.find(&f);
  return it == assigned_.end() ? -1 : it->second;
}

OJson JsonSchemaWriter::TypeJson(const DataType& t) const {
  OJson j = OJson::object();
  switch (t.id) {
    case TypeId::kNull: j["name"] = "null"; break;
    case TypeId::kBool: j["name"] = "bool"; break;
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32:
    case TypeId::kUInt64: {
      j["name"] = "int";
      j["isSigned"] = IsSignedInteger(t.id);
      j["bitWidth"] = FixedBitWidth(t);
      break;
    }
    case TypeId::kFloat16:
      j["name"] = "floatingpoint";
      j["precision"] = "HALF";
      break;
    case TypeId::kFloat32:
      j["name"] = "floatingpoint";
      j["precision"] = "SINGLE";
      break;
    case TypeId::kFloat64:
      j["name"] = "floatingpoint";
      j["precision"] = "DOUBLE";
      break;
    case TypeId::kBinary: j["name"] = "binary"; break;
    case TypeId::kUtf8: j["name"] = "utf8"; break;
    case TypeId::kLargeBinary: j["name"] = "largebinary"; break;
    case TypeId::kLargeUtf8: j["name"] = "largeutf8"; break;
    case TypeId::kBinaryView: j["name"] = "binaryview"; break;
    case TypeId::kUtf8View: j["name"] = "utf8view"; break;
    case TypeId::kFixedSizeBinary:
      j["name"] = "fixedsizebinary";
      j["byteWidth"] = t.byte_width;
      break;
    case TypeId::kDecimal:
      j["name"] = "decimal";
      j["precision"] = t.precision;
      j["scale"] = t.scale;
      j["bitWidth"] = t.bit_width;
      break;
    case TypeId::kDate32:
      j["name"] = "date";
      j["unit"] = "DAY";
      break;
    case TypeId::kDate64:
      j["name"] = "date";
      j["unit"] = "MILLISECOND";
      break;
    case TypeId::kTime32:
    case TypeId::kTime64:
      j["name"] = "time";
      j["unit"] = UnitName(t.unit);
      j["bitWidth"] = t.id == TypeId::kTime32 ? 32 : 64;
      break;
    case TypeId::kTimestamp:
      j["name"] = "timestamp";
      j["unit"] = UnitName(t.unit);
      if (!t.timezone.empty()) j["timezone"] = t.timezone;
      break;
    case TypeId::kDuration:
      j["name"] = "duration";
      j["unit"] = UnitName(t.unit);
      break;
    case TypeId::kIntervalYearMonth:
      j["name"] = "interval";
      j["unit"] = "YEAR_MONTH";
      break;
    case TypeId::kIntervalDayTime:
      j["name"] = "interval";
      j["unit"] = "DAY_TIME";
      break;
    case TypeId::kIntervalMonthDayNano:
      j["name"] = "interval";
      j["unit"] = "MONTH_DAY_NANO";
      break;
    case TypeId::kList: j["name"] = "list"; break;
    case TypeId::kLargeList: j["name"] = "largelist"; break;
    case TypeId::kListView: j["name"] = "listview"; break;
    case TypeId::kLargeListView: j["name"] = "largelistview"; break;
    case TypeId::kFixedSizeList:
      j["name"] = "fixedsizelist";
      j["listSize"] = t.list_size;
      break;
    case TypeId::kStruct: j["name"] = "struct"; break;
    case TypeId::kMap:
      j["name"] = "map";
      j["keysSorted"] = t.keys_sorted;
      break;
    case TypeId::kSparseUnion:
    case TypeId::kDenseUnion: {
      j["name"] = "union";
      j["mode"] = t.id == TypeId::kSparseUnion ? "SPARSE" : "DENSE";
      OJson ids = OJson::array();
      for (int8_t c : t.type_codes) ids.push_back(static_cast<int>(c));
      j["typeIds"] = std::move(ids);
      break;
    }
    case TypeId::kRunEndEncoded: j["name"] = "runendencoded"; break;
    case TypeId::kDictionary: return t.value_type ? TypeJson(*t.value_type) : OJson::object();
  }
  return j;
}

OJson JsonSchemaWriter::MetadataJson(const KeyValueMetadata& md) {
  OJson arr = OJson::array();
  for (const auto& [k, v] : md) {
    OJson kv = OJson::object();
    kv["key"] = k;
    kv["value"] = v;
    arr.push_back(std::move(kv));
  }
  return arr;
}

Result<OJson> JsonSchemaWriter::FieldJson(const Field& f, int depth) const {
  if (depth > kJsonIntegrationMaxDepth) return Status::Invalid("fields nested too deeply");
  if (!f.type) return Status::Invalid("field '" + f.name + "' without a type");
  OJson j = OJson::object();
  j["name"] = f.name;
  j["nullable"] = f.nullable;
  const DataType* t = f.type.get();
  const DataType* vt = t->id == TypeId::kDictionary && t->value_type ? t->value_type.get() : t;
  j["type"] = TypeJson(*vt);
  OJson children = OJson::array();
  for (const auto& c : vt->children) {
    if (!c) return Status::Invalid("field '" + f.name + "' has a null child");
    QUIVER_ASSIGN_OR_RETURN(OJson cj, FieldJson(*c, depth + 1));
    children.push_back(std::move(cj));
  }
  j["children"] = std::move(children);
  if (t->id == TypeId::kDictionary) {
    OJson d = OJson::object();
    d["id"] = FieldId(f);
    d["indexType"] = t->index_type ? TypeJson(*t->index_type) : OJson::object();
    d["isOrdered"] = t->ordered;
    j["dictionary"] = std::move(d);
  }
  if (!f.metadata.empty()) j["metadata"] = MetadataJson(f.metadata);
  return j;
}

}  // namespace quiver::integration
