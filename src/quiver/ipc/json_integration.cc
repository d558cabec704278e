// quiver/ipc/json_integration.cc — see json_integration.h.
#include "quiver/ipc/json_integration.h"

#include <zlib.h>

#include <charconv>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/compare.h"
#include "quiver/columnar/validate.h"
#include "quiver/columnar/value_format.h"

namespace quiver {

namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxDecompressedBytes = int64_t{1} << 30;

// ---- small JSON helpers -------------------------------------------------------

const Json* Member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

Status Err(const std::string& path, const std::string& msg) {
  return Status::Invalid(path + ": " + msg);
}

/// A short rendering of a JSON value for messages (containers by kind only:
/// dumping a deeply nested value would recurse without bound).
std::string Brief(const Json& v) {
  if (v.is_array()) return "<array>";
  if (v.is_object()) return "<object>";
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 60) + "...";
  return s;
}


/// Parses a whole decimal integer string (an optional leading '+'); false on
/// empty input, trailing characters or overflow. 64-bit values are strings
/// in the integration JSON.
template <typename T>
bool IntegerFromString(const std::string& s, T* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;
  auto res = std::from_chars(b, e, *out);
  return res.ec == std::errc() && res.ptr == e;
}

bool ToInt64(const Json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_string()) return IntegerFromString(v.get_ref<const std::string&>(), out);
  return false;
}

bool ToUInt64(const Json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if (x < 0) return false;
    *out = static_cast<uint64_t>(x);
    return true;
  }
  if (v.is_string()) return IntegerFromString(v.get_ref<const std::string&>(), out);
  return false;
}

template <typename T>
bool ToInt(const Json& v, T* out) {
  if constexpr (std::is_signed_v<T>) {
    int64_t x;
    if (!ToInt64(v, &x)) return false;
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) return false;
    *out = static_cast<T>(x);
  } else {
    uint64_t x;
    if (!ToUInt64(v, &x)) return false;
    if (x > std::numeric_limits<T>::max()) return false;
    *out = static_cast<T>(x);
  }
  return true;
}

bool ToDouble(const Json& v, double* out) {
  if (v.is_number()) {
    *out = v.get<double>();
    return true;
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "NaN" || s == "nan" || s == "-NaN") {
      *out = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
    if (s == "Infinity" || s == "inf" || s == "+inf" || s == "Inf") {
      *out = std::numeric_limits<double>::infinity();
      return true;
    }
    if (s == "-Infinity" || s == "-inf" || s == "-Inf") {
      *out = -std::numeric_limits<double>::infinity();
      return true;
    }
  }
  return false;
}

int HexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/// Decodes an even-length hex string into out[0, hex.size()/2).
bool HexDecode(std::string_view hex, uint8_t* out) {
  if (hex.size() % 2 != 0) return false;
  for (size_t k = 0; k < hex.size() / 2; ++k) {
    const int hi = HexNibble(hex[2 * k]);
    const int lo = HexNibble(hex[2 * k + 1]);
    if (hi < 0 || lo < 0) return false;
    out[k] = static_cast<uint8_t>((hi << 4) | lo);
  }
  return true;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string s(bytes.size() * 2, '0');
  for (size_t k = 0; k < bytes.size(); ++k) {
    const unsigned char c = static_cast<unsigned char>(bytes[k]);
    s[2 * k] = kHex[c >> 4];
    s[2 * k + 1] = kHex[c & 15];
  }
  return s;
}

/// Parses a decimal integer string (optional sign, digits) into a
/// two's-complement little-endian integer of `width` bytes (4, 8, 16, 32).
/// False when malformed or out of range for the width.
bool ParseDecimalInteger(std::string_view s, int width, uint8_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  uint32_t limbs[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t carry = static_cast<uint64_t>(c - '0');
    for (auto& l : limbs) {
      const uint64_t v = static_cast<uint64_t>(l) * 10 + carry;
      l = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) return false;  // beyond 256 bits
  }
  // Range: magnitude < 2^(bits-1), or == 2^(bits-1) when negative.
  const int bits = width * 8;
  const int top = bits - 1;  // bit index that must be clear (mostly)
  bool high_set = false;
  for (int b = top; b < 256; ++b) {
    if ((limbs[b / 32] >> (b % 32)) & 1u) {
      high_set = true;
      break;
    }
  }
  if (high_set) {
    // Only -2^(bits-1) is allowed: bit `top` set and nothing else.
    if (!negative) return false;
    for (int b = 0; b < 256; ++b) {
      const bool set = (limbs[b / 32] >> (b % 32)) & 1u;
      if (set != (b == top)) return false;
    }
  }
  if (negative) {
    uint64_t carry = 1;
    for (auto& l : limbs) {
      const uint64_t v = static_cast<uint64_t>(static_cast<uint32_t>(~l)) + carry;
      l = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
  }
  uint8_t bytes[32];
  std::memcpy(bytes, limbs, sizeof(bytes));
  std::memcpy(out, bytes, static_cast<size_t>(width));
  return true;
}

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

// ---- reader --------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(MemoryPool* pool) : pool_(pool) {}

  Result<SchemaPtr> ParseSchema(const Json& j) {
    const std::string path = "schema";
    if (!j.is_object()) return Err(path, "not a JSON object");
    auto schema = std::make_shared<Schema>();
    const Json* jfields = Member(j, "fields");
    if (jfields == nullptr || !jfields->is_array()) return Err(path, "missing \"fields\" array");
    for (size_t k = 0; k < jfields->size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(FieldPtr f,
                              ParseField((*jfields)[k], path + ".fields[" + std::to_string(k) + "]", 0));
      schema->fields.push_back(std::move(f));
    }
    QUIVER_RETURN_NOT_OK(ParseMetadata(j, path, &schema->metadata));
    return SchemaPtr(std::move(schema));
  }

  Status IndexDictionaries(const Json* jdicts) {
    if (jdicts == nullptr || jdicts->is_null()) return Status::OK();
    if (!jdicts->is_array()) return Err("dictionaries", "not a JSON array");
    for (size_t k = 0; k < jdicts->size(); ++k) {
      const Json& d = (*jdicts)[k];
      const std::string path = "dictionaries[" + std::to_string(k) + "]";
      const Json* jid = Member(d, "id");
      int64_t id;
      if (jid == nullptr || !ToInt64(*jid, &id)) return Err(path, "missing or invalid \"id\"");
      if (!dict_json_.emplace(id, &d).second) {
        return Err(path, "duplicate dictionary id " + std::to_string(id));
      }
    }
    return Status::OK();
  }

  Result<RecordBatchPtr> ParseBatch(const Json& j, const SchemaPtr& schema, const std::string& path) {
    if (!j.is_object()) return Err(path, "not a JSON object");
    const Json* jcount = Member(j, "count");
    int64_t count;
    if (jcount == nullptr || !ToInt64(*jcount, &count) || count < 0 || count > kMaxCount) {
      return Err(path, "missing or invalid \"count\"");
    }
    const Json* jcols = Member(j, "columns");
    if (jcols == nullptr || !jcols->is_array()) return Err(path, "missing \"columns\" array");
    if (jcols->size() != schema->fields.size()) {
      return Err(path, "has " + std::to_string(jcols->size()) + " columns, schema has " +
                           std::to_string(schema->fields.size()) + " fields");
    }
    auto batch = std::make_shared<RecordBatch>();
    batch->schema = schema;
    batch->num_rows = count;
    for (size_t k = 0; k < jcols->size(); ++k) {
      const Field& f = *schema->fields[k];
      const std::string cpath = path + ".columns[" + std::to_string(k) + "](" + f.name + ")";
      QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr col, ParseColumn((*jcols)[k], f, cpath, 0));
      if (col->length != count) {
        return Err(cpath, "count " + std::to_string(col->length) + " differs from batch count " +
                              std::to_string(count));
      }
      QUIVER_RETURN_NOT_OK(ValidateArray(*col, ValidationLevel::kFull, cpath));
      batch->columns.push_back(std::move(col));
    }
    QUIVER_RETURN_NOT_OK_CTX(batch->CheckShape(), path);
    return RecordBatchPtr(std::move(batch));
  }

 private:
  Status ParseMetadata(const Json& j, const std::string& path, KeyValueMetadata* out) {
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

  Result<DataTypePtr> ParseIntType(const Json& jt, const std::string& path) {
    const Json* jbw = Member(jt, "bitWidth");
    const Json* jsigned = Member(jt, "isSigned");
    int64_t bw;
    if (jbw == nullptr || !ToInt64(*jbw, &bw)) return Err(path, "int type needs \"bitWidth\"");
    bool is_signed = true;
    if (jsigned != nullptr) {
      if (!jsigned->is_boolean()) return Err(path, "\"isSigned\" is not a boolean");
      is_signed = jsigned->get<bool>();
    }
    switch (bw) {
      case 8: return is_signed ? int8() : uint8();
      case 16: return is_signed ? int16() : uint16();
      case 32: return is_signed ? int32() : uint32();
      case 64: return is_signed ? int64() : uint64();
      default: return Err(path, "invalid int bitWidth " + std::to_string(bw));
    }
  }

  Result<DataTypePtr> ParseType(const Json& jt, std::vector<FieldPtr> children, const std::string& path) {
    if (!jt.is_object()) return Err(path, "\"type\" is not a JSON object");
    const Json* jname = Member(jt, "name");
    if (jname == nullptr || !jname->is_string()) return Err(path, "type without a \"name\"");
    const std::string& name = jname->get_ref<const std::string&>();
    auto need_children = [&](size_t n) -> Status {
      if (children.size() != n) {
        return Err(path, "type '" + name + "' needs " + std::to_string(n) + " children, got " +
                             std::to_string(children.size()));
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
      if (!ToInt64(*v, out)) return Err(path, "\"" + std::string(key) + "\" is not an integer");
      return Status::OK();
    };

    const bool leaf = name != "list" && name != "largelist" && name != "listview" &&
                      name != "largelistview" && name != "fixedsizelist" && name != "struct" &&
                      name != "map" && name != "union" && name != "runendencoded";
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
      if (w < 0 || w > kMaxCount) return Err(path, "invalid byteWidth " + std::to_string(w));
      return fixed_size_binary(static_cast<int32_t>(w));
    }
    if (name == "decimal" || name == "decimal32" || name == "decimal64" || name == "decimal256") {
      int64_t precision = 0, scale = 0;
      int64_t bw = name == "decimal32" ? 32 : name == "decimal64" ? 64 : name == "decimal256" ? 256 : 128;
      QUIVER_RETURN_NOT_OK(get_int("precision", &precision, true));
      QUIVER_RETURN_NOT_OK(get_int("scale", &scale, false));
      QUIVER_RETURN_NOT_OK(get_int("bitWidth", &bw, false));
      if (bw != 32 && bw != 64 && bw != 128 && bw != 256) {
        return Err(path, "invalid decimal bitWidth " + std::to_string(bw));
      }
      if (precision < 1 || precision > 76 || scale < std::numeric_limits<int32_t>::min() ||
          scale > std::numeric_limits<int32_t>::max()) {
        return Err(path, "invalid decimal precision/scale " + std::to_string(precision) + "/" +
                             std::to_string(scale));
      }
      return decimal(static_cast<int32_t>(bw), static_cast<int32_t>(precision),
                     static_cast<int32_t>(scale));
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
      if (bw != expected_bw) {
        return Err(path, "time bitWidth " + std::to_string(bw) + " does not match unit " + unit_name);
      }
      return bw == 32 ? time32(unit) : time64(unit);
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
      if (size < 0 || size > kMaxCount) return Err(path, "invalid listSize " + std::to_string(size));
      return fixed_size_list(children[0], static_cast<int32_t>(size));
    }
    if (name == "struct") return struct_(std::move(children));
    if (name == "map") {
      QUIVER_RETURN_NOT_OK(need_children(1));
      const DataTypePtr& et = children[0]->type;
      if (et->id != TypeId::kStruct || et->children.size() != 2) {
        return Err(path, "map child must be a struct with two children (key, value)");
      }
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
      std::vector<int8_t> codes;
      if (jids == nullptr || jids->is_null()) {
        for (size_t k = 0; k < children.size() && k < 128; ++k) codes.push_back(static_cast<int8_t>(k));
      } else {
        if (!jids->is_array()) return Err(path, "\"typeIds\" is not an array");
        for (const Json& v : *jids) {
          int8_t c;
          if (!ToInt(v, &c) || c < 0) return Err(path, "invalid union type id " + Brief(v));
          codes.push_back(c);
        }
      }
      if (codes.size() != children.size()) {
        return Err(path, "union has " + std::to_string(children.size()) + " children but " +
                             std::to_string(codes.size()) + " typeIds");
      }
      std::set<int8_t> unique(codes.begin(), codes.end());
      if (unique.size() != codes.size()) return Err(path, "duplicate union typeIds");
      return mode == "SPARSE" ? sparse_union(std::move(children), std::move(codes))
                              : dense_union(std::move(children), std::move(codes));
    }
    if (name == "runendencoded") {
      QUIVER_RETURN_NOT_OK(need_children(2));
      const TypeId re = children[0]->type->id;
      if (re != TypeId::kInt16 && re != TypeId::kInt32 && re != TypeId::kInt64) {
        return Err(path, "run_ends must be int16, int32 or int64");
      }
      return run_end_encoded(children[0], children[1]);
    }
    return Status::NotImplemented(path + ": unsupported type name '" + name + "'");
  }

  Result<FieldPtr> ParseField(const Json& j, const std::string& path, int depth) {
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
        QUIVER_ASSIGN_OR_RETURN(
            FieldPtr c, ParseField((*jc)[k], fpath + ".children[" + std::to_string(k) + "]", depth + 1));
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
        return Err(fpath, "dictionary id " + std::to_string(dictionary_id) +
                              " is used with different value types " + it->second->ToString() +
                              " and " + type->ToString());
      }
      type = dictionary(std::move(index_type), std::move(type), ordered);
    }
    return field(name, std::move(type), nullable, std::move(metadata), dictionary_id);
  }

  Result<std::shared_ptr<Buffer>> Alloc(int64_t bytes) {
    return Buffer::AllocateZeroed(pool_, bytes);
  }

  /// The JSON array `key` of `col` with exactly `n` entries.
  Result<const Json*> SizedArray(const Json& col, const char* key, int64_t n, const std::string& path) {
    const Json* v = Member(col, key);
    if (v == nullptr || !v->is_array()) return Err(path, std::string("missing \"") + key + "\" array");
    if (static_cast<int64_t>(v->size()) != n) {
      return Err(path, std::string(key) + " has " + std::to_string(v->size()) +
                           " entries, expected " + std::to_string(n));
    }
    return v;
  }

  /// Parses `n` integers of type T from `arr` into a new buffer. Entries of
  /// null slots (valid_bits given and bit clear) that do not parse read 0.
  template <typename T>
  Result<std::shared_ptr<Buffer>> IntBuffer(const Json& arr, int64_t n, const uint8_t* valid_bits,
                                            const std::string& path, const char* key) {
    QUIVER_ASSIGN_OR_RETURN(auto buf, Alloc(n * static_cast<int64_t>(sizeof(T))));
    uint8_t* out = buf->mutable_data();
    for (int64_t k = 0; k < n; ++k) {
      const Json& v = arr[static_cast<size_t>(k)];
      T x{};
      if (!ToInt(v, &x)) {
        if (valid_bits == nullptr || bit_util::GetBit(valid_bits, k)) {
          return Err(path, std::string(key) + "[" + std::to_string(k) + "] = " + Brief(v) +
                               " is not a valid " + (std::is_signed_v<T> ? "int" : "uint") +
                               std::to_string(sizeof(T) * 8));
        }
        x = T{};
      }
      bit_util::StoreLE<T>(out + k * static_cast<int64_t>(sizeof(T)), x);
    }
    return buf;
  }

  /// Integer data of any integer-backed type id.
  Result<std::shared_ptr<Buffer>> IntData(TypeId id, const Json& arr, int64_t n,
                                          const uint8_t* valid_bits, const std::string& path,
                                          const char* key) {
    switch (id) {
      case TypeId::kInt8: return IntBuffer<int8_t>(arr, n, valid_bits, path, key);
      case TypeId::kInt16: return IntBuffer<int16_t>(arr, n, valid_bits, path, key);
      case TypeId::kInt32:
      case TypeId::kDate32:
      case TypeId::kTime32:
      case TypeId::kIntervalYearMonth:
        return IntBuffer<int32_t>(arr, n, valid_bits, path, key);
      case TypeId::kInt64:
      case TypeId::kDate64:
      case TypeId::kTime64:
      case TypeId::kTimestamp:
      case TypeId::kDuration:
        return IntBuffer<int64_t>(arr, n, valid_bits, path, key);
      case TypeId::kUInt8: return IntBuffer<uint8_t>(arr, n, valid_bits, path, key);
      case TypeId::kUInt16: return IntBuffer<uint16_t>(arr, n, valid_bits, path, key);
      case TypeId::kUInt32: return IntBuffer<uint32_t>(arr, n, valid_bits, path, key);
      case TypeId::kUInt64: return IntBuffer<uint64_t>(arr, n, valid_bits, path, key);
      default: return Err(path, "not an integer type");
    }
  }

  Status ParseChildren(const Json& col, const DataType& type, const std::string& path, int depth,
                       ArrayData* out) {
    const Json* jc = Member(col, "children");
    const size_t n = type.children.size();
    if (jc == nullptr || jc->is_null()) {
      if (n == 0) return Status::OK();
      return Err(path, "missing \"children\" (type has " + std::to_string(n) + ")");
    }
    if (!jc->is_array()) return Err(path, "\"children\" is not an array");
    if (jc->size() != n) {
      return Err(path, "has " + std::to_string(jc->size()) + " children, type has " + std::to_string(n));
    }
    for (size_t k = 0; k < n; ++k) {
      const Field& cf = *type.children[k];
      QUIVER_ASSIGN_OR_RETURN(
          ArrayDataPtr child,
          ParseColumn((*jc)[k], cf, path + ".children[" + std::to_string(k) + "](" + cf.name + ")",
                      depth + 1));
      out->children.push_back(std::move(child));
    }
    return Status::OK();
  }

  Result<ArrayDataPtr> ParseColumn(const Json& col, const Field& field, const std::string& path,
                                   int depth) {
    if (depth > kJsonIntegrationMaxDepth) return Err(path, "columns nested too deeply");
    if (!col.is_object()) return Err(path, "column is not a JSON object");
    if (!field.type) return Err(path, "field without a type");
    const DataType& type = *field.type;
    const Json* jcount = Member(col, "count");
    int64_t count;
    if (jcount == nullptr || !ToInt64(*jcount, &count) || count < 0 || count > kMaxCount) {
      return Err(path, "missing or invalid \"count\"");
    }
    auto out = std::make_shared<ArrayData>();
    out->type = field.type;
    out->length = count;

    // Validity.
    const uint8_t* valid_bits = nullptr;
    std::shared_ptr<Buffer> validity;
    if (HasValidityBitmap(type.id)) {
      const Json* jv = Member(col, "VALIDITY");
      if (jv != nullptr && !jv->is_null()) {
        if (!jv->is_array() || static_cast<int64_t>(jv->size()) != count) {
          return Err(path, "VALIDITY has " + std::to_string(jv->is_array() ? jv->size() : 0) +
                               " entries, count is " + std::to_string(count));
        }
        QUIVER_ASSIGN_OR_RETURN(validity, Alloc(bit_util::BytesForBits(count)));
        uint8_t* bits = validity->mutable_data();
        int64_t nulls = 0;
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = (*jv)[static_cast<size_t>(k)];
          bool valid;
          if (v.is_boolean()) {
            valid = v.get<bool>();
          } else {
            int64_t x;
            if (!ToInt64(v, &x) || (x != 0 && x != 1)) {
              return Err(path, "VALIDITY[" + std::to_string(k) + "] = " + Brief(v) + " is not 0 or 1");
            }
            valid = x == 1;
          }
          if (valid) {
            bit_util::SetBit(bits, k);
          } else {
            ++nulls;
          }
        }
        out->null_count = nulls;
        if (nulls == 0) {
          validity.reset();
        } else {
          valid_bits = bits;
        }
      }
    }
    auto is_valid = [&](int64_t k) { return valid_bits == nullptr || bit_util::GetBit(valid_bits, k); };

    switch (type.id) {
      case TypeId::kNull:
        out->null_count = count;
        break;
      case TypeId::kBool: {
        QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(bit_util::BytesForBits(count)));
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = (*jd)[static_cast<size_t>(k)];
          bool b = false;
          int64_t x = 0;
          if (v.is_boolean()) {
            b = v.get<bool>();
          } else if (ToInt64(v, &x) && (x == 0 || x == 1)) {
            b = x == 1;
          } else if (is_valid(k)) {
            return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + " is not a boolean");
          }
          if (b) bit_util::SetBit(data->mutable_data(), k);
        }
        out->buffers = {validity, data};
        break;
      }
      case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64:
      case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64:
      case TypeId::kDate32: case TypeId::kDate64: case TypeId::kTime32: case TypeId::kTime64:
      case TypeId::kTimestamp: case TypeId::kDuration: case TypeId::kIntervalYearMonth: {
        QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
        QUIVER_ASSIGN_OR_RETURN(auto data, IntData(type.id, *jd, count, valid_bits, path, "DATA"));
        out->buffers = {validity, data};
        break;
      }
      case TypeId::kFloat16: case TypeId::kFloat32: case TypeId::kFloat64: {
        QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
        const int width = type.id == TypeId::kFloat16 ? 2 : type.id == TypeId::kFloat32 ? 4 : 8;
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(count * width));
        uint8_t* p = data->mutable_data();
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = (*jd)[static_cast<size_t>(k)];
          if (type.id == TypeId::kFloat16 && v.is_number_integer()) {
            // Arrow C++ writes half floats as their uint16 bit patterns.
            uint16_t bits;
            if (!ToInt(v, &bits)) {
              if (is_valid(k)) {
                return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) +
                                     " is not a float16 bit pattern");
              }
              bits = 0;
            }
            bit_util::StoreLE<uint16_t>(p + 2 * k, bits);
            continue;
          }
          double d = 0;
          if (!ToDouble(v, &d)) {
            if (is_valid(k)) {
              return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + " is not a number");
            }
            d = 0;
          }
          if (width == 2) {
            bit_util::StoreLE<uint16_t>(p + 2 * k, DoubleToHalf(d));
          } else if (width == 4) {
            bit_util::StoreLE<float>(p + 4 * k, static_cast<float>(d));
          } else {
            bit_util::StoreLE<double>(p + 8 * k, d);
          }
        }
        out->buffers = {validity, data};
        break;
      }
      case TypeId::kDecimal: {
        QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
        const int width = type.bit_width / 8;
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(count * width));
        uint8_t* p = data->mutable_data();
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = (*jd)[static_cast<size_t>(k)];
          bool ok = false;
          if (v.is_string()) {
            ok = ParseDecimalInteger(v.get_ref<const std::string&>(), width, p + k * width);
          } else if (v.is_number_integer()) {
            ok = ParseDecimalInteger(v.dump(), width, p + k * width);
          }
          if (!ok) {
            if (is_valid(k)) {
              return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) +
                                   " is not a decimal integer within " +
                                   std::to_string(type.bit_width) + " bits");
            }
            std::memset(p + k * width, 0, static_cast<size_t>(width));
          }
        }
        out->buffers = {validity, data};
        break;
      }
      case TypeId::kFixedSizeBinary: {
        QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
        const int64_t width = type.byte_width;
        if (width > 0 && count > (int64_t{1} << 40) / width) return Err(path, "data too large");
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(count * width));
        uint8_t* p = data->mutable_data();
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = (*jd)[static_cast<size_t>(k)];
          const bool ok = v.is_string() &&
                          static_cast<int64_t>(v.get_ref<const std::string&>().size()) == 2 * width &&
                          HexDecode(v.get_ref<const std::string&>(), p + k * width);
          if (!ok) {
            if (is_valid(k)) {
              return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + " is not " +
                                   std::to_string(width) + " hex-encoded bytes");
            }
            std::memset(p + k * width, 0, static_cast<size_t>(width));
          }
        }
        out->buffers = {validity, data};
        break;
      }
      case TypeId::kBinary: case TypeId::kUtf8: case TypeId::kLargeBinary: case TypeId::kLargeUtf8: {
        const bool is_utf8 = type.id == TypeId::kUtf8 || type.id == TypeId::kLargeUtf8;
        const bool large = type.id == TypeId::kLargeBinary || type.id == TypeId::kLargeUtf8;
        QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
        const Json* joff = Member(col, "OFFSET");
        if (joff == nullptr || !joff->is_array() ||
            !(static_cast<int64_t>(joff->size()) == count + 1 || (count == 0 && joff->empty()))) {
          return Err(path, "OFFSET must be an array of count + 1 = " + std::to_string(count + 1) +
                               " entries");
        }
        // Pass 1: lengths (null slots hold no bytes, as in Arrow C++).
        int64_t total = 0;
        for (int64_t k = 0; k < count; ++k) {
          if (!is_valid(k)) continue;
          const Json& v = (*jd)[static_cast<size_t>(k)];
          if (!v.is_string()) {
            return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + " is not a string");
          }
          const std::string& s = v.get_ref<const std::string&>();
          if (!is_utf8 && s.size() % 2 != 0) {
            return Err(path, "DATA[" + std::to_string(k) + "] is not an even-length hex string");
          }
          const int64_t len = static_cast<int64_t>(is_utf8 ? s.size() : s.size() / 2);
          int64_t o0, o1, span;
          if (!ToInt64((*joff)[static_cast<size_t>(k)], &o0) ||
              !ToInt64((*joff)[static_cast<size_t>(k + 1)], &o1) || !CheckedSub(o1, o0, &span) ||
              span != len) {  // o1 - o0, checked: both come from input (issue 10 item 5)
            return Err(path, "DATA[" + std::to_string(k) + "] has " + std::to_string(len) +
                                 " bytes, OFFSET says " + Brief((*joff)[static_cast<size_t>(k)]) +
                                 ".." + Brief((*joff)[static_cast<size_t>(k + 1)]));
          }
          total += len;
        }
        if (!large && total > std::numeric_limits<int32_t>::max()) {
          return Err(path, "data exceeds 2^31-1 bytes for 32-bit offsets");
        }
        const int ow = large ? 8 : 4;
        QUIVER_ASSIGN_OR_RETURN(auto offsets, Alloc((count + 1) * ow));
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(total));
        uint8_t* po = offsets->mutable_data();
        uint8_t* pd = data->mutable_data();
        int64_t pos = 0;
        for (int64_t k = 0; k < count; ++k) {
          if (large) {
            bit_util::StoreLE<int64_t>(po + 8 * k, pos);
          } else {
            bit_util::StoreLE<int32_t>(po + 4 * k, static_cast<int32_t>(pos));
          }
          if (!is_valid(k)) continue;
          const std::string& s = (*jd)[static_cast<size_t>(k)].get_ref<const std::string&>();
          if (is_utf8) {
            if (!s.empty()) std::memcpy(pd + pos, s.data(), s.size());
            pos += static_cast<int64_t>(s.size());
          } else {
            if (!HexDecode(s, pd + pos)) {
              return Err(path, "DATA[" + std::to_string(k) + "] is not a hex string");
            }
            pos += static_cast<int64_t>(s.size() / 2);
          }
        }
        if (large) {
          bit_util::StoreLE<int64_t>(po + 8 * count, pos);
        } else {
          bit_util::StoreLE<int32_t>(po + 4 * count, static_cast<int32_t>(pos));
        }
        out->buffers = {validity, offsets, data};
        break;
      }
      case TypeId::kBinaryView: case TypeId::kUtf8View: {
        const bool is_utf8 = type.id == TypeId::kUtf8View;
        QUIVER_ASSIGN_OR_RETURN(const Json* jviews, SizedArray(col, "VIEWS", count, path));
        std::vector<std::shared_ptr<Buffer>> variadic;
        if (const Json* jb = Member(col, "VARIADIC_DATA_BUFFERS"); jb != nullptr && !jb->is_null()) {
          if (!jb->is_array()) return Err(path, "VARIADIC_DATA_BUFFERS is not an array");
          for (size_t b = 0; b < jb->size(); ++b) {
            const Json& v = (*jb)[b];
            if (!v.is_string() || v.get_ref<const std::string&>().size() % 2 != 0) {
              return Err(path, "VARIADIC_DATA_BUFFERS[" + std::to_string(b) + "] is not a hex string");
            }
            const std::string& s = v.get_ref<const std::string&>();
            QUIVER_ASSIGN_OR_RETURN(auto buf, Alloc(static_cast<int64_t>(s.size() / 2)));
            if (!HexDecode(s, buf->mutable_data())) {
              return Err(path, "VARIADIC_DATA_BUFFERS[" + std::to_string(b) + "] is not a hex string");
            }
            variadic.push_back(std::move(buf));
          }
        }
        QUIVER_ASSIGN_OR_RETURN(auto views, Alloc(count * 16));
        uint8_t* pv = views->mutable_data();
        for (int64_t k = 0; k < count; ++k) {
          if (!is_valid(k)) continue;  // zero view
          const std::string vpath = path + ".VIEWS[" + std::to_string(k) + "]";
          const Json& v = (*jviews)[static_cast<size_t>(k)];
          if (!v.is_object()) return Err(vpath, "not a JSON object");
          const Json* jsize = Member(v, "SIZE");
          int32_t size;
          if (jsize == nullptr || !ToInt(*jsize, &size) || size < 0) {
            return Err(vpath, "missing or invalid SIZE");
          }
          uint8_t* view = pv + 16 * k;
          bit_util::StoreLE<int32_t>(view, size);
          if (size <= 12) {
            const Json* jin = Member(v, "INLINED");
            if (jin == nullptr || !jin->is_string()) return Err(vpath, "missing INLINED string");
            const std::string& s = jin->get_ref<const std::string&>();
            if (is_utf8) {
              if (static_cast<int64_t>(s.size()) != size) {
                return Err(vpath, "INLINED has " + std::to_string(s.size()) + " bytes, SIZE is " +
                                      std::to_string(size));
              }
              if (!s.empty()) std::memcpy(view + 4, s.data(), s.size());
            } else {
              if (static_cast<int64_t>(s.size()) != 2 * int64_t{size} || !HexDecode(s, view + 4)) {
                return Err(vpath, "INLINED is not " + std::to_string(size) + " hex-encoded bytes");
              }
            }
          } else {
            const Json* jp = Member(v, "PREFIX_HEX");
            const Json* jbi = Member(v, "BUFFER_INDEX");
            const Json* jo = Member(v, "OFFSET");
            int32_t bi, off;
            if (jp == nullptr || !jp->is_string() || jp->get_ref<const std::string&>().size() != 8 ||
                !HexDecode(jp->get_ref<const std::string&>(), view + 4)) {
              return Err(vpath, "PREFIX_HEX must be 4 hex-encoded bytes");
            }
            if (jbi == nullptr || !ToInt(*jbi, &bi) || bi < 0 ||
                static_cast<size_t>(bi) >= variadic.size()) {
              return Err(vpath, "BUFFER_INDEX is missing or not in [0, " +
                                    std::to_string(variadic.size()) + ")");
            }
            if (jo == nullptr || !ToInt(*jo, &off) || off < 0 ||
                int64_t{off} + size > variadic[static_cast<size_t>(bi)]->size()) {
              return Err(vpath, "OFFSET is missing or the view exceeds its data buffer");
            }
            bit_util::StoreLE<int32_t>(view + 8, bi);
            bit_util::StoreLE<int32_t>(view + 12, off);
          }
        }
        out->buffers = {validity, views};
        for (auto& b : variadic) out->buffers.push_back(std::move(b));
        break;
      }
      case TypeId::kIntervalDayTime: case TypeId::kIntervalMonthDayNano: {
        const bool mdn = type.id == TypeId::kIntervalMonthDayNano;
        QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
        const int width = mdn ? 16 : 8;
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(count * width));
        uint8_t* p = data->mutable_data() ;
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = (*jd)[static_cast<size_t>(k)];
          const bool valid = is_valid(k);
          auto bad = [&](const char* what) {
            return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + ": " + what);
          };
          if (!v.is_object()) {
            if (valid) return bad("not a JSON object");
            continue;
          }
          auto field32 = [&](const char* key, int32_t* out32) -> bool {
            const Json* m = Member(v, key);
            return m != nullptr && ToInt(*m, out32);
          };
          if (mdn) {
            int32_t months = 0, days = 0;
            int64_t nanos = 0;
            const Json* jn = Member(v, "nanoseconds");
            const bool ok = field32("months", &months) && field32("days", &days) && jn != nullptr &&
                            ToInt64(*jn, &nanos);
            if (!ok && valid) return bad("needs integer months, days, nanoseconds");
            if (ok) {
              bit_util::StoreLE<int32_t>(p + 16 * k, months);
              bit_util::StoreLE<int32_t>(p + 16 * k + 4, days);
              bit_util::StoreLE<int64_t>(p + 16 * k + 8, nanos);
            }
          } else {
            int32_t days = 0, ms = 0;
            const bool ok = field32("days", &days) && field32("milliseconds", &ms);
            if (!ok && valid) return bad("needs integer days, milliseconds");
            if (ok) {
              bit_util::StoreLE<int32_t>(p + 8 * k, days);
              bit_util::StoreLE<int32_t>(p + 8 * k + 4, ms);
            }
          }
        }
        out->buffers = {validity, data};
        break;
      }
      case TypeId::kList: case TypeId::kLargeList: case TypeId::kMap: {
        const Json* joff = Member(col, "OFFSET");
        std::shared_ptr<Buffer> offsets;
        if (count == 0 && joff != nullptr && joff->is_array() && joff->empty()) {
          QUIVER_ASSIGN_OR_RETURN(offsets, Alloc(type.id == TypeId::kLargeList ? 8 : 4));
        } else {
          QUIVER_ASSIGN_OR_RETURN(const Json* jo, SizedArray(col, "OFFSET", count + 1, path));
          QUIVER_ASSIGN_OR_RETURN(
              offsets, IntData(type.id == TypeId::kLargeList ? TypeId::kInt64 : TypeId::kInt32, *jo,
                               count + 1, nullptr, path, "OFFSET"));
        }
        out->buffers = {validity, offsets};
        QUIVER_RETURN_NOT_OK(ParseChildren(col, type, path, depth, out.get()));
        break;
      }
      case TypeId::kListView: case TypeId::kLargeListView: {
        const TypeId ot = type.id == TypeId::kLargeListView ? TypeId::kInt64 : TypeId::kInt32;
        QUIVER_ASSIGN_OR_RETURN(const Json* jo, SizedArray(col, "OFFSET", count, path));
        QUIVER_ASSIGN_OR_RETURN(const Json* js, SizedArray(col, "SIZE", count, path));
        QUIVER_ASSIGN_OR_RETURN(auto offsets, IntData(ot, *jo, count, nullptr, path, "OFFSET"));
        QUIVER_ASSIGN_OR_RETURN(auto sizes, IntData(ot, *js, count, nullptr, path, "SIZE"));
        out->buffers = {validity, offsets, sizes};
        QUIVER_RETURN_NOT_OK(ParseChildren(col, type, path, depth, out.get()));
        break;
      }
      case TypeId::kFixedSizeList: {
        out->buffers = {validity};
        QUIVER_RETURN_NOT_OK(ParseChildren(col, type, path, depth, out.get()));
        const int64_t need = count * type.list_size;  // both <= 2^31: no overflow
        if (out->children[0]->length < need) {
          return Err(path, "child has " + std::to_string(out->children[0]->length) +
                               " values, fixed-size list needs " + std::to_string(need));
        }
        break;
      }
      case TypeId::kStruct: {
        out->buffers = {validity};
        QUIVER_RETURN_NOT_OK(ParseChildren(col, type, path, depth, out.get()));
        for (size_t k = 0; k < out->children.size(); ++k) {
          if (out->children[k]->length < count) {
            return Err(path, "struct child " + std::to_string(k) + " has " +
                                 std::to_string(out->children[k]->length) + " values, count is " +
                                 std::to_string(count));
          }
        }
        break;
      }
      case TypeId::kSparseUnion: case TypeId::kDenseUnion: {
        QUIVER_ASSIGN_OR_RETURN(const Json* jt, SizedArray(col, "TYPE_ID", count, path));
        QUIVER_ASSIGN_OR_RETURN(auto type_ids, IntData(TypeId::kInt8, *jt, count, nullptr, path, "TYPE_ID"));
        out->null_count = 0;
        out->buffers = {type_ids};
        if (type.id == TypeId::kDenseUnion) {
          QUIVER_ASSIGN_OR_RETURN(const Json* jo, SizedArray(col, "OFFSET", count, path));
          QUIVER_ASSIGN_OR_RETURN(auto offsets, IntData(TypeId::kInt32, *jo, count, nullptr, path, "OFFSET"));
          out->buffers.push_back(std::move(offsets));
        }
        QUIVER_RETURN_NOT_OK(ParseChildren(col, type, path, depth, out.get()));
        if (type.id == TypeId::kSparseUnion) {
          for (size_t k = 0; k < out->children.size(); ++k) {
            if (out->children[k]->length < count) {
              return Err(path, "sparse union child " + std::to_string(k) + " has " +
                                   std::to_string(out->children[k]->length) + " values, count is " +
                                   std::to_string(count));
            }
          }
        }
        break;
      }
      case TypeId::kRunEndEncoded:
        out->null_count = 0;
        QUIVER_RETURN_NOT_OK(ParseChildren(col, type, path, depth, out.get()));
        break;
      case TypeId::kDictionary: {
        if (!type.index_type || !type.value_type) return Err(path, "incomplete dictionary type");
        QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
        QUIVER_ASSIGN_OR_RETURN(auto indices, IntData(type.index_type->id, *jd, count, valid_bits, path, "DATA"));
        out->buffers = {validity, indices};
        if (field.dictionary_id < 0) return Err(path, "dictionary-typed field without an id");
        QUIVER_ASSIGN_OR_RETURN(out->dictionary, Dictionary(field.dictionary_id, path, depth + 1));
        break;
      }
    }
    return ArrayDataPtr(std::move(out));
  }

  Result<ArrayDataPtr> Dictionary(int64_t id, const std::string& user, int depth) {
    if (auto it = dict_arrays_.find(id); it != dict_arrays_.end()) return it->second;
    const std::string path = "dictionaries[id=" + std::to_string(id) + "]";
    if (in_progress_.count(id) != 0) return Err(path, "dictionary refers to itself");
    auto jit = dict_json_.find(id);
    if (jit == dict_json_.end()) {
      return Err(user, "no dictionary with id " + std::to_string(id) + " in \"dictionaries\"");
    }
    auto vit = dict_value_types_.find(id);
    if (vit == dict_value_types_.end()) return Err(path, "no field uses this dictionary id");
    const Json* jdata = Member(*jit->second, "data");
    if (jdata == nullptr || !jdata->is_object()) return Err(path, "missing \"data\" object");
    const Json* jcount = Member(*jdata, "count");
    int64_t count;
    if (jcount == nullptr || !ToInt64(*jcount, &count) || count < 0) {
      return Err(path, "missing or invalid data.count");
    }
    const Json* jcols = Member(*jdata, "columns");
    if (jcols == nullptr || !jcols->is_array() || jcols->size() != 1) {
      return Err(path, "data.columns must hold exactly one column");
    }
    in_progress_.insert(id);
    Field f;
    f.name = "DICT" + std::to_string(id);
    f.type = vit->second;
    auto result = ParseColumn((*jcols)[0], f, path + ".data.columns[0]", depth);
    in_progress_.erase(id);
    if (!result.ok()) return result.status();
    ArrayDataPtr arr = std::move(result).value();
    if (arr->length != count) {
      return Err(path, "column count " + std::to_string(arr->length) + " differs from data.count " +
                           std::to_string(count));
    }
    QUIVER_RETURN_NOT_OK(ValidateArray(*arr, ValidationLevel::kFull, path));
    dict_arrays_.emplace(id, arr);
    return arr;
  }

  MemoryPool* pool_;
  std::map<int64_t, DataTypePtr> dict_value_types_;
  std::map<int64_t, const Json*> dict_json_;
  std::map<int64_t, ArrayDataPtr> dict_arrays_;
  std::set<int64_t> in_progress_;
};

Result<std::string> Gunzip(const std::string& compressed, const std::string& path) {
  // Input is capped at 1 GiB by the caller, so it fits zlib's uInt counts.
  std::string out;
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return Status::IOError(path + ": cannot initialise zlib");
  }
  struct Closer {
    z_stream* z;
    ~Closer() { inflateEnd(z); }
  } closer{&zs};
  const Bytef* base = reinterpret_cast<const Bytef*>(compressed.data());
  size_t pos = 0;
  bool first = true;
  char chunk[1 << 16];
  while (pos < compressed.size()) {
    if (!first) {
      // Concatenated members; trailing zero padding is ignored.
      bool all_zero = true;
      for (size_t k = pos; k < compressed.size() && all_zero; ++k) all_zero = compressed[k] == 0;
      if (all_zero) break;
      if (inflateReset(&zs) != Z_OK) return Status::Invalid(path + ": corrupt gzip data");
    }
    first = false;
    zs.next_in = const_cast<Bytef*>(base + pos);
    zs.avail_in = static_cast<uInt>(compressed.size() - pos);
    while (true) {
      zs.next_out = reinterpret_cast<Bytef*>(chunk);
      zs.avail_out = sizeof(chunk);
      const int rc = inflate(&zs, Z_NO_FLUSH);
      out.append(chunk, sizeof(chunk) - zs.avail_out);
      if (static_cast<int64_t>(out.size()) > kMaxDecompressedBytes) {
        return Status::Invalid(path + ": decompressed size exceeds 1 GiB");
      }
      if (rc == Z_STREAM_END) break;
      if (rc == Z_OK) continue;
      if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
        return Status::Invalid(path + ": truncated gzip data");
      }
      return Status::Invalid(path + ": corrupt gzip data (" +
                             std::string(zs.msg != nullptr ? zs.msg : "zlib error") + ")");
    }
    pos = static_cast<size_t>(zs.next_in - base);
  }
  return out;
}

// ---- writer --------------------------------------------------------------------

class Writer {
 public:
  Status AssignIds(const Schema& schema) {
    int64_t max_id = -1;
    std::vector<const Field*> stack;
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
    return Status::OK();
  }

  int64_t FieldId(const Field& f) const {
    if (f.dictionary_id >= 0) return f.dictionary_id;
    auto it = assigned_.find(&f);
    return it == assigned_.end() ? -1 : it->second;
  }

  OJson TypeJson(const DataType& t) const {
    OJson j = OJson::object();
    switch (t.id) {
      case TypeId::kNull: j["name"] = "null"; break;
      case TypeId::kBool: j["name"] = "bool"; break;
      case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64:
      case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64: {
        static const std::map<TypeId, int> kBits = {
            {TypeId::kInt8, 8}, {TypeId::kInt16, 16}, {TypeId::kInt32, 32}, {TypeId::kInt64, 64},
            {TypeId::kUInt8, 8}, {TypeId::kUInt16, 16}, {TypeId::kUInt32, 32}, {TypeId::kUInt64, 64}};
        j["name"] = "int";
        j["isSigned"] = IsSignedInteger(t.id);
        j["bitWidth"] = kBits.at(t.id);
        break;
      }
      case TypeId::kFloat16: j["name"] = "floatingpoint"; j["precision"] = "HALF"; break;
      case TypeId::kFloat32: j["name"] = "floatingpoint"; j["precision"] = "SINGLE"; break;
      case TypeId::kFloat64: j["name"] = "floatingpoint"; j["precision"] = "DOUBLE"; break;
      case TypeId::kBinary: j["name"] = "binary"; break;
      case TypeId::kUtf8: j["name"] = "utf8"; break;
      case TypeId::kLargeBinary: j["name"] = "largebinary"; break;
      case TypeId::kLargeUtf8: j["name"] = "largeutf8"; break;
      case TypeId::kBinaryView: j["name"] = "binaryview"; break;
      case TypeId::kUtf8View: j["name"] = "utf8view"; break;
      case TypeId::kFixedSizeBinary: j["name"] = "fixedsizebinary"; j["byteWidth"] = t.byte_width; break;
      case TypeId::kDecimal:
        j["name"] = "decimal";
        j["precision"] = t.precision;
        j["scale"] = t.scale;
        j["bitWidth"] = t.bit_width;
        break;
      case TypeId::kDate32: j["name"] = "date"; j["unit"] = "DAY"; break;
      case TypeId::kDate64: j["name"] = "date"; j["unit"] = "MILLISECOND"; break;
      case TypeId::kTime32: case TypeId::kTime64:
        j["name"] = "time";
        j["unit"] = UnitName(t.unit);
        j["bitWidth"] = t.id == TypeId::kTime32 ? 32 : 64;
        break;
      case TypeId::kTimestamp:
        j["name"] = "timestamp";
        j["unit"] = UnitName(t.unit);
        if (!t.timezone.empty()) j["timezone"] = t.timezone;
        break;
      case TypeId::kDuration: j["name"] = "duration"; j["unit"] = UnitName(t.unit); break;
      case TypeId::kIntervalYearMonth: j["name"] = "interval"; j["unit"] = "YEAR_MONTH"; break;
      case TypeId::kIntervalDayTime: j["name"] = "interval"; j["unit"] = "DAY_TIME"; break;
      case TypeId::kIntervalMonthDayNano: j["name"] = "interval"; j["unit"] = "MONTH_DAY_NANO"; break;
      case TypeId::kList: j["name"] = "list"; break;
      case TypeId::kLargeList: j["name"] = "largelist"; break;
      case TypeId::kListView: j["name"] = "listview"; break;
      case TypeId::kLargeListView: j["name"] = "largelistview"; break;
      case TypeId::kFixedSizeList: j["name"] = "fixedsizelist"; j["listSize"] = t.list_size; break;
      case TypeId::kStruct: j["name"] = "struct"; break;
      case TypeId::kMap: j["name"] = "map"; j["keysSorted"] = t.keys_sorted; break;
      case TypeId::kSparseUnion: case TypeId::kDenseUnion: {
        j["name"] = "union";
        j["mode"] = t.id == TypeId::kSparseUnion ? "SPARSE" : "DENSE";
        OJson ids = OJson::array();
        for (int8_t c : t.type_codes) ids.push_back(static_cast<int>(c));
        j["typeIds"] = std::move(ids);
        break;
      }
      case TypeId::kRunEndEncoded: j["name"] = "runendencoded"; break;
      case TypeId::kDictionary:
        return t.value_type ? TypeJson(*t.value_type) : OJson::object();
    }
    return j;
  }

  static OJson MetadataJson(const KeyValueMetadata& md) {
    OJson arr = OJson::array();
    for (const auto& [k, v] : md) {
      OJson kv = OJson::object();
      kv["key"] = k;
      kv["value"] = v;
      arr.push_back(std::move(kv));
    }
    return arr;
  }

  Result<OJson> FieldJson(const Field& f, int depth) const {
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

  Status RegisterDictionary(int64_t id, const DataTypePtr& value_type, const ArrayDataPtr& dict,
                            const std::string& path) {
    if (!dict) return Status::Invalid(path + ": dictionary-typed array without a dictionary");
    auto it = dicts_.find(id);
    if (it == dicts_.end()) {
      dicts_.emplace(id, std::make_pair(value_type, dict));
      return Status::OK();
    }
    const ArrayDataPtr& have = it->second.second;
    if (have == dict) return Status::OK();
    const bool grow = dict->length > have->length;
    const ArrayDataPtr& longer = grow ? dict : have;
    const ArrayDataPtr& shorter = grow ? have : dict;
    QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr prefix, SliceArray(longer, 0, shorter->length));
    CompareOptions exact;
    exact.float_abs_tolerance = 0;
    exact.float_rel_tolerance = 0;
    Status st = CompareArrays(*prefix, *shorter, exact, path + " dictionary " + std::to_string(id));
    if (!st.ok()) {
      return Status::NotImplemented(
          path + ": batches carry different dictionaries for id " + std::to_string(id) +
          " (a replacement, not representable in integration JSON): " + st.message());
    }
    if (grow) it->second.second = dict;
    return Status::OK();
  }

  static OJson Int64Json(int64_t v) { return OJson(std::to_string(v)); }

  /// DATA entries for integer-backed types (64-bit as strings).
  static OJson IntDataJson(const ArrayData& a, TypeId id, int64_t start, int64_t len) {
    OJson arr = OJson::array();
    const uint8_t* d = a.buffers.size() > 1 && a.buffers[1] ? a.buffers[1]->data() : nullptr;
    for (int64_t k = 0; k < len; ++k) {
      const int64_t p = a.offset + start + k;
      if (d == nullptr) {
        arr.push_back(0);
        continue;
      }
      switch (id) {
        case TypeId::kInt8: arr.push_back(bit_util::LoadLE<int8_t>(d + p)); break;
        case TypeId::kInt16: arr.push_back(bit_util::LoadLE<int16_t>(d + 2 * p)); break;
        case TypeId::kInt32: case TypeId::kDate32: case TypeId::kTime32: case TypeId::kIntervalYearMonth:
          arr.push_back(bit_util::LoadLE<int32_t>(d + 4 * p));
          break;
        case TypeId::kUInt8: arr.push_back(bit_util::LoadLE<uint8_t>(d + p)); break;
        case TypeId::kUInt16: case TypeId::kFloat16: arr.push_back(bit_util::LoadLE<uint16_t>(d + 2 * p)); break;
        case TypeId::kUInt32: arr.push_back(bit_util::LoadLE<uint32_t>(d + 4 * p)); break;
        case TypeId::kUInt64: arr.push_back(std::to_string(bit_util::LoadLE<uint64_t>(d + 8 * p))); break;
        default: arr.push_back(Int64Json(bit_util::LoadLE<int64_t>(d + 8 * p))); break;
      }
    }
    return arr;
  }

  Result<OJson> Column(const Field& f, const ArrayData& a, int64_t start, int64_t len,
                       const std::string& path, int depth) {
    if (depth > kJsonIntegrationMaxDepth) return Status::Invalid(path + ": nested too deeply");
    if (!a.type) return Status::Invalid(path + ": array without a type");
    const DataType& t = *a.type;
    OJson c = OJson::object();
    c["name"] = f.name;
    c["count"] = len;
    if (HasValidityBitmap(t.id)) {
      OJson v = OJson::array();
      for (int64_t k = 0; k < len; ++k) v.push_back(IsPhysicalNull(a, start + k) ? 0 : 1);
      c["VALIDITY"] = std::move(v);
    }
    auto child_field = [&](size_t k) -> const Field* {
      return k < t.children.size() && t.children[k] ? t.children[k].get() : nullptr;
    };
    auto write_child = [&](size_t k, int64_t cstart, int64_t clen) -> Result<OJson> {
      const Field* cf = child_field(k);
      if (cf == nullptr || k >= a.children.size() || !a.children[k]) {
        return Status::Invalid(path + ": missing child " + std::to_string(k));
      }
      return Column(*cf, *a.children[k], cstart, clen, path + "." + cf->name, depth + 1);
    };
    const uint8_t* b1 = a.buffers.size() > 1 && a.buffers[1] ? a.buffers[1]->data() : nullptr;
    const uint8_t* b2 = a.buffers.size() > 2 && a.buffers[2] ? a.buffers[2]->data() : nullptr;
    const int64_t p0 = a.offset + start;
    switch (t.id) {
      case TypeId::kNull:
        break;
      case TypeId::kBool: {
        OJson d = OJson::array();
        for (int64_t k = 0; k < len; ++k) d.push_back(b1 != nullptr && bit_util::GetBit(b1, p0 + k));
        c["DATA"] = std::move(d);
        break;
      }
      case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64:
      case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64:
      case TypeId::kDate32: case TypeId::kDate64: case TypeId::kTime32: case TypeId::kTime64:
      case TypeId::kTimestamp: case TypeId::kDuration: case TypeId::kIntervalYearMonth:
      case TypeId::kFloat16:
        c["DATA"] = IntDataJson(a, t.id, start, len);
        break;
      case TypeId::kFloat32: case TypeId::kFloat64: {
        OJson d = OJson::array();
        for (int64_t k = 0; k < len; ++k) {
          double v = 0;
          if (b1 != nullptr) {
            v = t.id == TypeId::kFloat32 ? static_cast<double>(bit_util::LoadLE<float>(b1 + 4 * (p0 + k)))
                                         : bit_util::LoadLE<double>(b1 + 8 * (p0 + k));
          }
          if (std::isnan(v)) {
            d.push_back("NaN");
          } else if (std::isinf(v)) {
            d.push_back(v < 0 ? "-Infinity" : "Infinity");
          } else {
            d.push_back(v);
          }
        }
        c["DATA"] = std::move(d);
        break;
      }
      case TypeId::kDecimal: {
        ArrayData unscaled = a;
        unscaled.type = decimal(t.bit_width, t.precision, 0);
        OJson d = OJson::array();
        for (int64_t k = 0; k < len; ++k) {
          if (IsPhysicalNull(a, start + k)) {
            d.push_back("0");
          } else {
            d.push_back(FormatValueToString(unscaled, start + k, ValueFormat::kText));
          }
        }
        c["DATA"] = std::move(d);
        break;
      }
      case TypeId::kFixedSizeBinary: {
        OJson d = OJson::array();
        for (int64_t k = 0; k < len; ++k) d.push_back(HexEncode(BinaryValueAt(a, start + k)));
        c["DATA"] = std::move(d);
        break;
      }
      case TypeId::kBinary: case TypeId::kUtf8: case TypeId::kLargeBinary: case TypeId::kLargeUtf8: {
        const bool is_utf8 = t.id == TypeId::kUtf8 || t.id == TypeId::kLargeUtf8;
        const bool large = t.id == TypeId::kLargeBinary || t.id == TypeId::kLargeUtf8;
        OJson offsets = OJson::array();
        OJson d = OJson::array();
        int64_t pos = 0;
        for (int64_t k = 0; k < len; ++k) {
          large ? offsets.push_back(Int64Json(pos)) : offsets.push_back(pos);
          std::string_view v = BinaryValueAt(a, start + k);
          d.push_back(is_utf8 ? std::string(v) : HexEncode(v));
          pos += static_cast<int64_t>(v.size());
        }
        large ? offsets.push_back(Int64Json(pos)) : offsets.push_back(pos);
        c["OFFSET"] = std::move(offsets);
        c["DATA"] = std::move(d);
        break;
      }
      case TypeId::kBinaryView: case TypeId::kUtf8View: {
        const bool is_utf8 = t.id == TypeId::kUtf8View;
        OJson views = OJson::array();
        for (int64_t k = 0; k < len; ++k) {
          OJson v = OJson::object();
          const uint8_t* view = b1 != nullptr ? b1 + 16 * (p0 + k) : nullptr;
          const int32_t size = view != nullptr ? bit_util::LoadLE<int32_t>(view) : 0;
          v["SIZE"] = size;
          if (size <= 12) {
            std::string_view bytes =
                view != nullptr && size > 0
                    ? std::string_view(reinterpret_cast<const char*>(view + 4), static_cast<size_t>(size))
                    : std::string_view();
            v["INLINED"] = is_utf8 ? std::string(bytes) : HexEncode(bytes);
          } else {
            v["PREFIX_HEX"] = HexEncode(std::string_view(reinterpret_cast<const char*>(view + 4), 4));
            v["BUFFER_INDEX"] = bit_util::LoadLE<int32_t>(view + 8);
            v["OFFSET"] = bit_util::LoadLE<int32_t>(view + 12);
          }
          views.push_back(std::move(v));
        }
        OJson bufs = OJson::array();
        for (size_t b = 2; b < a.buffers.size(); ++b) {
          bufs.push_back(a.buffers[b] ? HexEncode(a.buffers[b]->view()) : std::string());
        }
        c["VIEWS"] = std::move(views);
        c["VARIADIC_DATA_BUFFERS"] = std::move(bufs);
        break;
      }
      case TypeId::kIntervalDayTime: case TypeId::kIntervalMonthDayNano: {
        OJson d = OJson::array();
        for (int64_t k = 0; k < len; ++k) {
          OJson v = OJson::object();
          if (t.id == TypeId::kIntervalDayTime) {
            const uint8_t* e = b1 != nullptr ? b1 + 8 * (p0 + k) : nullptr;
            v["days"] = e ? bit_util::LoadLE<int32_t>(e) : 0;
            v["milliseconds"] = e ? bit_util::LoadLE<int32_t>(e + 4) : 0;
          } else {
            const uint8_t* e = b1 != nullptr ? b1 + 16 * (p0 + k) : nullptr;
            v["months"] = e ? bit_util::LoadLE<int32_t>(e) : 0;
            v["days"] = e ? bit_util::LoadLE<int32_t>(e + 4) : 0;
            v["nanoseconds"] = e ? bit_util::LoadLE<int64_t>(e + 8) : 0;
          }
          d.push_back(std::move(v));
        }
        c["DATA"] = std::move(d);
        break;
      }
      case TypeId::kList: case TypeId::kLargeList: case TypeId::kMap: {
        const bool large = t.id == TypeId::kLargeList;
        int64_t first = 0, last = 0;
        if (b1 != nullptr) {
          first = large ? bit_util::LoadLE<int64_t>(b1 + 8 * p0) : bit_util::LoadLE<int32_t>(b1 + 4 * p0);
          last = large ? bit_util::LoadLE<int64_t>(b1 + 8 * (p0 + len))
                       : bit_util::LoadLE<int32_t>(b1 + 4 * (p0 + len));
        }
        OJson offsets = OJson::array();
        for (int64_t k = 0; k <= len; ++k) {
          int64_t o = 0;
          if (b1 != nullptr) {
            o = (large ? bit_util::LoadLE<int64_t>(b1 + 8 * (p0 + k))
                       : bit_util::LoadLE<int32_t>(b1 + 4 * (p0 + k))) - first;
          }
          large ? offsets.push_back(Int64Json(o)) : offsets.push_back(o);
        }
        c["OFFSET"] = std::move(offsets);
        QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(0, first, last - first));
        c["children"] = OJson::array({std::move(child)});
        break;
      }
      case TypeId::kListView: case TypeId::kLargeListView: {
        const bool large = t.id == TypeId::kLargeListView;
        OJson offsets = OJson::array();
        OJson sizes = OJson::array();
        for (int64_t k = 0; k < len; ++k) {
          if (large) {
            offsets.push_back(Int64Json(b1 ? bit_util::LoadLE<int64_t>(b1 + 8 * (p0 + k)) : 0));
            sizes.push_back(Int64Json(b2 ? bit_util::LoadLE<int64_t>(b2 + 8 * (p0 + k)) : 0));
          } else {
            offsets.push_back(b1 ? bit_util::LoadLE<int32_t>(b1 + 4 * (p0 + k)) : 0);
            sizes.push_back(b2 ? bit_util::LoadLE<int32_t>(b2 + 4 * (p0 + k)) : 0);
          }
        }
        c["OFFSET"] = std::move(offsets);
        c["SIZE"] = std::move(sizes);
        const int64_t clen = a.children.empty() || !a.children[0] ? 0 : a.children[0]->length;
        QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(0, 0, clen));
        c["children"] = OJson::array({std::move(child)});
        break;
      }
      case TypeId::kFixedSizeList: {
        QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(0, p0 * t.list_size, len * t.list_size));
        c["children"] = OJson::array({std::move(child)});
        break;
      }
      case TypeId::kStruct: {
        OJson children = OJson::array();
        for (size_t k = 0; k < t.children.size(); ++k) {
          QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(k, p0, len));
          children.push_back(std::move(child));
        }
        c["children"] = std::move(children);
        break;
      }
      case TypeId::kSparseUnion: case TypeId::kDenseUnion: {
        const uint8_t* ids = !a.buffers.empty() && a.buffers[0] ? a.buffers[0]->data() : nullptr;
        OJson tids = OJson::array();
        for (int64_t k = 0; k < len; ++k) tids.push_back(ids ? static_cast<int>(static_cast<int8_t>(ids[p0 + k])) : 0);
        c["TYPE_ID"] = std::move(tids);
        OJson children = OJson::array();
        if (t.id == TypeId::kDenseUnion) {
          OJson offs = OJson::array();
          for (int64_t k = 0; k < len; ++k) offs.push_back(b1 ? bit_util::LoadLE<int32_t>(b1 + 4 * (p0 + k)) : 0);
          c["OFFSET"] = std::move(offs);
          for (size_t k = 0; k < t.children.size(); ++k) {
            const int64_t clen = k < a.children.size() && a.children[k] ? a.children[k]->length : 0;
            QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(k, 0, clen));
            children.push_back(std::move(child));
          }
        } else {
          for (size_t k = 0; k < t.children.size(); ++k) {
            QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(k, p0, len));
            children.push_back(std::move(child));
          }
        }
        c["children"] = std::move(children);
        break;
      }
      case TypeId::kRunEndEncoded: {
        if (a.children.size() != 2 || !a.children[0] || !a.children[1] || t.children.size() != 2) {
          return Status::Invalid(path + ": run-end encoded array needs two children");
        }
        int64_t k0 = 0, k1 = -1;
        if (len > 0) {
          k0 = RunIndexAt(a, start);
          k1 = RunIndexAt(a, start + len - 1);
        }
        const ArrayData& re = *a.children[0];
        OJson ends = OJson::array();
        OJson valid = OJson::array();
        for (int64_t k = k0; k <= k1; ++k) {
          const int64_t end = std::min(IntegerValueAt(re, k), p0 + len) - p0;
          re.type->id == TypeId::kInt64 ? ends.push_back(Int64Json(end)) : ends.push_back(end);
          valid.push_back(1);
        }
        OJson rj = OJson::object();
        rj["name"] = t.children[0]->name;
        rj["count"] = k1 - k0 + 1;
        rj["VALIDITY"] = std::move(valid);
        rj["DATA"] = std::move(ends);
        QUIVER_ASSIGN_OR_RETURN(OJson vj, write_child(1, k0, k1 - k0 + 1));
        c["children"] = OJson::array({std::move(rj), std::move(vj)});
        break;
      }
      case TypeId::kDictionary: {
        if (!t.index_type) return Status::Invalid(path + ": dictionary type without index type");
        c["DATA"] = IntDataJson(a, t.index_type->id, start, len);
        const int64_t id = FieldId(f);
        if (id < 0) return Status::Invalid(path + ": dictionary field without an id");
        QUIVER_RETURN_NOT_OK(RegisterDictionary(id, t.value_type, a.dictionary, path));
        break;
      }
    }
    return c;
  }

  /// Writes every registered dictionary (registering nested ones as found).
  Result<OJson> Dictionaries() {
    std::map<int64_t, OJson> written;
    bool progress = true;
    while (progress) {
      progress = false;
      // Copy: writing may register more dictionaries.
      auto snapshot = dicts_;
      for (const auto& [id, entry] : snapshot) {
        if (written.count(id) != 0) continue;
        Field f;
        f.name = "DICT" + std::to_string(id);
        f.type = entry.first;
        const ArrayDataPtr& d = entry.second;
        QUIVER_ASSIGN_OR_RETURN(OJson col, Column(f, *d, 0, d->length, "dictionary " + std::to_string(id), 1));
        OJson data = OJson::object();
        data["count"] = d->length;
        data["columns"] = OJson::array({std::move(col)});
        OJson e = OJson::object();
        e["id"] = id;
        e["data"] = std::move(data);
        written.emplace(id, std::move(e));
        progress = true;
      }
    }
    // A dictionary that grew after being written (delta seen while writing a
    // nested one) is rewritten with its final content.
    for (auto& [id, e] : written) {
      const ArrayDataPtr& d = dicts_.at(id).second;
      if (e["data"]["count"].get<int64_t>() != d->length) {
        Field f;
        f.name = "DICT" + std::to_string(id);
        f.type = dicts_.at(id).first;
        QUIVER_ASSIGN_OR_RETURN(OJson col, Column(f, *d, 0, d->length, "dictionary " + std::to_string(id), 1));
        e["data"]["count"] = d->length;
        e["data"]["columns"] = OJson::array({std::move(col)});
      }
    }
    OJson arr = OJson::array();
    for (auto& [id, e] : written) arr.push_back(std::move(e));
    return arr;
  }

 private:
  std::map<const Field*, int64_t> assigned_;
  int64_t next_id_ = 0;
  std::map<int64_t, std::pair<DataTypePtr, ArrayDataPtr>> dicts_;
};

Result<JsonIntegrationFile> ReadImpl(std::string_view json_text, MemoryPool* pool) {
  if (pool == nullptr) return Status::Invalid("ReadJsonIntegration: pool is null");
  Json doc = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Invalid("integration JSON: not valid JSON");
  if (!doc.is_object()) return Status::Invalid("integration JSON: top level is not an object");
  Reader reader(pool);
  const Json* jschema = Member(doc, "schema");
  if (jschema == nullptr) return Status::Invalid("integration JSON: missing \"schema\"");
  JsonIntegrationFile file;
  QUIVER_ASSIGN_OR_RETURN(file.schema, reader.ParseSchema(*jschema));
  QUIVER_RETURN_NOT_OK(reader.IndexDictionaries(Member(doc, "dictionaries")));
  const Json* jbatches = Member(doc, "batches");
  if (jbatches != nullptr && !jbatches->is_null()) {
    if (!jbatches->is_array()) return Status::Invalid("integration JSON: \"batches\" is not an array");
    for (size_t k = 0; k < jbatches->size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(
          RecordBatchPtr b, reader.ParseBatch((*jbatches)[k], file.schema, "batches[" + std::to_string(k) + "]"));
      file.batches.push_back(std::move(b));
    }
  }
  return file;
}

}  // namespace

Result<JsonIntegrationFile> ReadJsonIntegration(std::string_view json_text, MemoryPool* pool) {
  try {
    return ReadImpl(json_text, pool);
  } catch (const std::bad_alloc&) {
    return Status::OutOfMemory("ReadJsonIntegration: out of memory while parsing JSON");
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("ReadJsonIntegration: ") + e.what());
  }
}

Result<JsonIntegrationFile> ReadJsonIntegrationFile(const std::string& path, MemoryPool* pool) {
  std::string bytes;
  {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) {
      bytes.append(buf, n);
      if (static_cast<int64_t>(bytes.size()) > kMaxDecompressedBytes) {
        return Status::Invalid(path + ": file exceeds 1 GiB");
      }
    }
    if (std::ferror(f.get())) return Status::IOError(path + ": read error: " + std::strerror(errno));
  }
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    QUIVER_ASSIGN_OR_RETURN(bytes, Gunzip(bytes, path));
  }
  auto result = ReadJsonIntegration(bytes, pool);
  if (!result.ok()) return result.status().WithContext(path);
  return result;
}

Result<std::string> WriteJsonIntegration(const Schema& schema,
                                         const std::vector<RecordBatchPtr>& batches) {
  try {
    Writer writer;
    QUIVER_RETURN_NOT_OK(writer.AssignIds(schema));
    OJson doc = OJson::object();
    OJson sj = OJson::object();
    OJson fields = OJson::array();
    for (const auto& f : schema.fields) {
      if (!f) return Status::Invalid("WriteJsonIntegration: null field in schema");
      QUIVER_ASSIGN_OR_RETURN(OJson fj, writer.FieldJson(*f, 0));
      fields.push_back(std::move(fj));
    }
    sj["fields"] = std::move(fields);
    if (!schema.metadata.empty()) sj["metadata"] = Writer::MetadataJson(schema.metadata);
    doc["schema"] = std::move(sj);
    OJson bj = OJson::array();
    for (size_t b = 0; b < batches.size(); ++b) {
      const RecordBatchPtr& batch = batches[b];
      const std::string bpath = "batch " + std::to_string(b);
      if (!batch) return Status::Invalid("WriteJsonIntegration: " + bpath + " is null");
      QUIVER_RETURN_NOT_OK_CTX(batch->CheckShape(), "WriteJsonIntegration: " + bpath);
      if (batch->columns.size() != schema.fields.size()) {
        return Status::Invalid("WriteJsonIntegration: " + bpath + " has " +
                               std::to_string(batch->columns.size()) + " columns, schema has " +
                               std::to_string(schema.fields.size()));
      }
      OJson cols = OJson::array();
      for (size_t k = 0; k < batch->columns.size(); ++k) {
        const Field& f = *schema.fields[k];
        if (!batch->columns[k]) return Status::Invalid("WriteJsonIntegration: null column");
        if (batch->columns[k]->length != batch->num_rows) {
          return Status::Invalid("WriteJsonIntegration: " + bpath + " column " + f.name +
                                 " length differs from num_rows");
        }
        QUIVER_ASSIGN_OR_RETURN(OJson col, writer.Column(f, *batch->columns[k], 0, batch->num_rows,
                                                         bpath + "." + f.name, 0));
        cols.push_back(std::move(col));
      }
      OJson bo = OJson::object();
      bo["count"] = batch->num_rows;
      bo["columns"] = std::move(cols);
      bj.push_back(std::move(bo));
    }
    doc["batches"] = std::move(bj);
    QUIVER_ASSIGN_OR_RETURN(OJson dicts, writer.Dictionaries());
    if (!dicts.empty()) doc["dictionaries"] = std::move(dicts);
    return doc.dump(-1, ' ', false, OJson::error_handler_t::replace);
  } catch (const std::bad_alloc&) {
    return Status::OutOfMemory("WriteJsonIntegration: out of memory");
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("WriteJsonIntegration: ") + e.what());
  }
}

}  // namespace quiver
