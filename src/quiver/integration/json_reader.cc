// quiver/integration/json_reader.cc — reading integration JSON: batches,
// columns and dictionaries (the schema object: json_schema.cc). See
// json_integration.h.
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/layout.h"
#include "quiver/columnar/validate.h"
#include "quiver/columnar/value_format.h"
#include "quiver/integration/gzip_internal.h"
#include "quiver/integration/json_integration.h"
#include "quiver/integration/json_schema_internal.h"
#include "quiver/integration/json_value_internal.h"
#include "quiver/ipc/io.h"

namespace quiver::integration {

namespace {

/// Limit of a file's bytes and of its gunzipped text.
constexpr int64_t kMaxInputBytes = int64_t{1} << 30;

/// Builds the arrays of one document's batches and dictionaries; buffers
/// come from `pool`. One instance per document.
class ColumnReader {
 public:
  ColumnReader(MemoryPool* pool, const std::map<int64_t, DataTypePtr>* dict_value_types)
      : pool_(pool), dict_value_types_(dict_value_types) {}

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
        return Err(cpath,
                   "count " + std::to_string(col->length) + " differs from batch count " + std::to_string(count));
      }
      QUIVER_RETURN_NOT_OK(ValidateArray(*col, ValidationLevel::kFull, cpath));
      batch->columns.push_back(std::move(col));
    }
    QUIVER_RETURN_NOT_OK_CTX(batch->CheckShape(), path);
    return RecordBatchPtr(std::move(batch));
  }

 private:
 private:
  Result<std::shared_ptr<Buffer>> Alloc(int64_t bytes) { return Buffer::AllocateZeroed(pool_, bytes); }

  /// The JSON array `key` of `col` with exactly `n` entries.
  Result<const Json*> SizedArray(const Json& col, const char* key, int64_t n, const std::string& path) {
    const Json* v = Member(col, key);
    if (v == nullptr || !v->is_array()) return Err(path, std::string("missing \"") + key + "\" array");
    if (static_cast<int64_t>(v->size()) != n) {
      return Err(path,
                 std::string(key) + " has " + std::to_string(v->size()) + " entries, expected " + std::to_string(n));
    }
    return v;
  }

  static bool IsValid(const uint8_t* valid_bits, int64_t k) {
    return valid_bits == nullptr || bit_util::GetBit(valid_bits, k);
  }

  /// The integer type id of `bits` (8, 32 or 64) signed bits: how offsets,
  /// sizes and type ids are read.
  static TypeId SignedIntOfBits(int32_t bits) {
    return bits == 64 ? TypeId::kInt64 : bits == 8 ? TypeId::kInt8 : TypeId::kInt32;
  }

  /// The values buffer of a fixed-width type from its DATA array `jd` (count
  /// entries): the JSON value encoding is the type's own.
  Result<std::shared_ptr<Buffer>> Values(const DataType& type, const Json& jd, int64_t count, const uint8_t* valid_bits,
                                         const std::string& path) {
    if (IsFloating(type.id)) {
      const int width = FixedBitWidth(type) / 8;
      QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(count * width));
      uint8_t* p = data->mutable_data();
      for (int64_t k = 0; k < count; ++k) {
        const Json& v = jd[static_cast<size_t>(k)];
        if (type.id == TypeId::kFloat16 && v.is_number_integer()) {
          // Arrow C++ writes half floats as their uint16 bit patterns.
          uint16_t bits;
          if (!ToInt(v, &bits)) {
            if (IsValid(valid_bits, k)) {
              return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + " is not a float16 bit pattern");
            }
            bits = 0;
          }
          bit_util::StoreLE<uint16_t>(p + 2 * k, bits);
          continue;
        }
        double d = 0;
        if (!ToDouble(v, &d)) {
          if (IsValid(valid_bits, k)) {
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
      return data;
    }
    switch (type.id) {
      case TypeId::kBool: {
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(bit_util::BytesForBits(count)));
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = jd[static_cast<size_t>(k)];
          bool b = false;
          int64_t x = 0;
          if (v.is_boolean()) {
            b = v.get<bool>();
          } else if (ToInt64(v, &x) && (x == 0 || x == 1)) {
            b = x == 1;
          } else if (IsValid(valid_bits, k)) {
            return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + " is not a boolean");
          }
          if (b) bit_util::SetBit(data->mutable_data(), k);
        }
        return data;
      }
      case TypeId::kDecimal: {  // decimal integers as strings
        const int width = type.bit_width / 8;
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(count * width));
        uint8_t* p = data->mutable_data();
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = jd[static_cast<size_t>(k)];
          bool ok = false;
          if (v.is_string()) {
            ok = ParseDecimalInteger(v.get_ref<const std::string&>(), width, p + k * width);
          } else if (v.is_number_integer()) {
            ok = ParseDecimalInteger(v.dump(), width, p + k * width);
          }
          if (!ok) {
            if (IsValid(valid_bits, k)) {
              return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + " is not a decimal integer within " +
                                   std::to_string(type.bit_width) + " bits");
            }
            std::memset(p + k * width, 0, static_cast<size_t>(width));
          }
        }
        return data;
      }
      case TypeId::kFixedSizeBinary: {  // hex strings
        const int64_t width = type.byte_width;
        if (width > 0 && count > (int64_t{1} << 40) / width) return Err(path, "data too large");
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(count * width));
        uint8_t* p = data->mutable_data();
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = jd[static_cast<size_t>(k)];
          const bool ok = v.is_string() && static_cast<int64_t>(v.get_ref<const std::string&>().size()) == 2 * width &&
                          HexDecode(v.get_ref<const std::string&>(), p + k * width);
          if (!ok) {
            if (IsValid(valid_bits, k)) {
              return Err(path, "DATA[" + std::to_string(k) + "] = " + Brief(v) + " is not " + std::to_string(width) +
                                   " hex-encoded bytes");
            }
            std::memset(p + k * width, 0, static_cast<size_t>(width));
          }
        }
        return data;
      }
      case TypeId::kIntervalDayTime:
      case TypeId::kIntervalMonthDayNano: {  // objects of named parts
        const bool mdn = type.id == TypeId::kIntervalMonthDayNano;
        const int width = mdn ? 16 : 8;
        QUIVER_ASSIGN_OR_RETURN(auto data, Alloc(count * width));
        uint8_t* p = data->mutable_data();
        for (int64_t k = 0; k < count; ++k) {
          const Json& v = jd[static_cast<size_t>(k)];
          const bool valid = IsValid(valid_bits, k);
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
            const bool ok =
                field32("months", &months) && field32("days", &days) && jn != nullptr && ToInt64(*jn, &nanos);
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
        return data;
      }
      case TypeId::kDictionary: return IntegerData(pool_, type.index_type->id, jd, count, valid_bits, path, "DATA");
      default: return IntegerData(pool_, type.id, jd, count, valid_bits, path, "DATA");  // integer-backed
    }
  }

  /// Offsets (count + 1 entries of OFFSET; none for an empty list) of a list
  /// or map.
  Result<std::shared_ptr<Buffer>> ListOffsets(const Json& col, const BufferLayout& buf, int64_t count,
                                              const std::string& path) {
    const Json* joff = Member(col, "OFFSET");
    if (count == 0 && joff != nullptr && joff->is_array() && joff->empty()) return Alloc(buf.element_bits / 8);
    QUIVER_ASSIGN_OR_RETURN(const Json* jo, SizedArray(col, "OFFSET", count + 1, path));
    return IntegerData(pool_, SignedIntOfBits(buf.element_bits), *jo, count + 1, nullptr, path, "OFFSET");
  }

  /// Offsets and data of binary / utf8 (`large`: 64-bit offsets) from DATA
  /// (utf8 strings or hex) checked against OFFSET.
  Status BinaryBuffers(const Json& col, const DataType& type, int64_t count, bool large, const uint8_t* valid_bits,
                       const std::string& path, std::shared_ptr<Buffer>* offsets_out,
                       std::shared_ptr<Buffer>* data_out) {
    const bool is_utf8 = type.id == TypeId::kUtf8 || type.id == TypeId::kLargeUtf8;
    QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
    const Json* joff = Member(col, "OFFSET");
    if (joff == nullptr || !joff->is_array() ||
        !(static_cast<int64_t>(joff->size()) == count + 1 || (count == 0 && joff->empty()))) {
      return Err(path, "OFFSET must be an array of count + 1 = " + std::to_string(count + 1) + " entries");
    }
    // Pass 1: lengths (null slots hold no bytes, as in Arrow C++).
    int64_t total = 0;
    for (int64_t k = 0; k < count; ++k) {
      if (!IsValid(valid_bits, k)) continue;
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
      if (!ToInt64((*joff)[static_cast<size_t>(k)], &o0) || !ToInt64((*joff)[static_cast<size_t>(k + 1)], &o1) ||
          !CheckedSub(o1, o0, &span) || span != len) {  // o1 - o0, checked: both come from input (issue 10 item 5)
        return Err(path, "DATA[" + std::to_string(k) + "] has " + std::to_string(len) + " bytes, OFFSET says " +
                             Brief((*joff)[static_cast<size_t>(k)]) + ".." +
                             Brief((*joff)[static_cast<size_t>(k + 1)]));
      }
      total += len;
    }
    if (!large && total > std::numeric_limits<int32_t>::max()) {
      return Err(path, "data exceeds 2^31-1 bytes for 32-bit offsets");
    }
    const int ow = large ? 8 : 4;
    QUIVER_ASSIGN_OR_RETURN(*offsets_out, Alloc((count + 1) * ow));
    QUIVER_ASSIGN_OR_RETURN(*data_out, Alloc(total));
    uint8_t* po = (*offsets_out)->mutable_data();
    uint8_t* pd = (*data_out)->mutable_data();
    int64_t pos = 0;
    for (int64_t k = 0; k < count; ++k) {
      if (large) {
        bit_util::StoreLE<int64_t>(po + 8 * k, pos);
      } else {
        bit_util::StoreLE<int32_t>(po + 4 * k, static_cast<int32_t>(pos));
      }
      if (!IsValid(valid_bits, k)) continue;
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
    return Status::OK();
  }

  /// The views buffer of binary / utf8 views from VIEWS; their data buffers
  /// from VARIADIC_DATA_BUFFERS go to `variadic`.
  Result<std::shared_ptr<Buffer>> Views(const Json& col, const DataType& type, int64_t count, const uint8_t* valid_bits,
                                        const std::string& path, std::vector<std::shared_ptr<Buffer>>* variadic) {
    const bool is_utf8 = type.id == TypeId::kUtf8View;
    QUIVER_ASSIGN_OR_RETURN(const Json* jviews, SizedArray(col, "VIEWS", count, path));
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
        variadic->push_back(std::move(buf));
      }
    }
    QUIVER_ASSIGN_OR_RETURN(auto views, Alloc(count * 16));
    uint8_t* pv = views->mutable_data();
    for (int64_t k = 0; k < count; ++k) {
      if (!IsValid(valid_bits, k)) continue;  // zero view
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
            return Err(vpath, "INLINED has " + std::to_string(s.size()) + " bytes, SIZE is " + std::to_string(size));
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
        if (jbi == nullptr || !ToInt(*jbi, &bi) || bi < 0 || static_cast<size_t>(bi) >= variadic->size()) {
          return Err(vpath, "BUFFER_INDEX is missing or not in [0, " + std::to_string(variadic->size()) + ")");
        }
        if (jo == nullptr || !ToInt(*jo, &off) || off < 0 ||
            int64_t{off} + size > (*variadic)[static_cast<size_t>(bi)]->size()) {
          return Err(vpath, "OFFSET is missing or the view exceeds its data buffer");
        }
        bit_util::StoreLE<int32_t>(view + 8, bi);
        bit_util::StoreLE<int32_t>(view + 12, off);
      }
    }
    return views;
  }

  Status ParseChildren(const Json& col, const DataType& type, const std::string& path, int depth, ArrayData* out) {
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
          ParseColumn((*jc)[k], cf, path + ".children[" + std::to_string(k) + "](" + cf.name + ")", depth + 1));
      out->children.push_back(std::move(child));
    }
    return Status::OK();
  }

  Result<ArrayDataPtr> ParseColumn(const Json& col, const Field& field, const std::string& path, int depth) {
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

    // Validity, then the other buffers in the layout's order (LayoutOf),
    // each from its JSON member: DATA (values; binary data with its OFFSET),
    // OFFSET, SIZE, TYPE_ID, VIEWS (+ VARIADIC_DATA_BUFFERS).
    const TypeLayout layout = LayoutOf(type);
    const uint8_t* valid_bits = nullptr;
    std::shared_ptr<Buffer> validity;
    if (layout.has_validity) {
      const Json* jv = Member(col, "VALIDITY");
      if (jv != nullptr && !jv->is_null()) {
        if (!jv->is_array() || static_cast<int64_t>(jv->size()) != count) {
          return Err(path, "VALIDITY has " + std::to_string(jv->is_array() ? jv->size() : 0) + " entries, count is " +
                               std::to_string(count));
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
    if (type.id == TypeId::kNull) out->null_count = count;
    if (type.id == TypeId::kDictionary && (!type.index_type || !type.value_type)) {
      return Err(path, "incomplete dictionary type");
    }
    std::shared_ptr<Buffer> binary_data;
    std::vector<std::shared_ptr<Buffer>> variadic;
    for (int b = 0; b < layout.num_buffers; ++b) {
      const BufferLayout& buf = layout.buffers[b];
      std::shared_ptr<Buffer> parsed;
      switch (buf.kind) {
        case BufferKind::kValidity: parsed = validity; break;
        case BufferKind::kValues: {
          QUIVER_ASSIGN_OR_RETURN(const Json* jd, SizedArray(col, "DATA", count, path));
          QUIVER_ASSIGN_OR_RETURN(parsed, Values(type, *jd, count, valid_bits, path));
          break;
        }
        case BufferKind::kOffsets:
          if (b + 1 < layout.num_buffers && layout.buffers[b + 1].kind == BufferKind::kData) {
            // Binary: offsets and bytes both come from OFFSET and DATA.
            QUIVER_RETURN_NOT_OK(
                BinaryBuffers(col, type, count, buf.element_bits == 64, valid_bits, path, &parsed, &binary_data));
          } else {
            QUIVER_ASSIGN_OR_RETURN(parsed, ListOffsets(col, buf, count, path));
          }
          break;
        case BufferKind::kData: parsed = std::move(binary_data); break;
        case BufferKind::kListViewOffsets:
        case BufferKind::kUnionOffsets:
        case BufferKind::kSizes:
        case BufferKind::kTypeIds: {
          const char* key = buf.kind == BufferKind::kSizes     ? "SIZE"
                            : buf.kind == BufferKind::kTypeIds ? "TYPE_ID"
                                                               : "OFFSET";
          QUIVER_ASSIGN_OR_RETURN(const Json* jv, SizedArray(col, key, count, path));
          QUIVER_ASSIGN_OR_RETURN(
              parsed, IntegerData(pool_, SignedIntOfBits(buf.element_bits), *jv, count, nullptr, path, key));
          break;
        }
        case BufferKind::kViews: {
          QUIVER_ASSIGN_OR_RETURN(parsed, Views(col, type, count, valid_bits, path, &variadic));
          break;
        }
      }
      out->buffers.push_back(std::move(parsed));
    }
    for (auto& v : variadic) out->buffers.push_back(std::move(v));

    if (layout.child_rows != ChildRows::kNone) {
      QUIVER_RETURN_NOT_OK(ParseChildren(col, type, path, depth, out.get()));
    }
    if (layout.child_rows == ChildRows::kFixedSize) {
      const int64_t need = count * type.list_size;  // both <= 2^31: no overflow
      if (out->children[0]->length < need) {
        return Err(path, "child has " + std::to_string(out->children[0]->length) + " values, fixed-size list needs " +
                             std::to_string(need));
      }
    } else if (layout.child_rows == ChildRows::kSameRows) {
      const char* what = type.id == TypeId::kStruct ? "struct child " : "sparse union child ";
      for (size_t k = 0; k < out->children.size(); ++k) {
        if (out->children[k]->length < count) {
          return Err(path, what + std::to_string(k) + " has " + std::to_string(out->children[k]->length) +
                               " values, count is " + std::to_string(count));
        }
      }
    }
    if (type.id == TypeId::kDictionary) {
      if (field.dictionary_id < 0) return Err(path, "dictionary-typed field without an id");
      QUIVER_ASSIGN_OR_RETURN(out->dictionary, Dictionary(field.dictionary_id, path, depth + 1));
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
    auto vit = dict_value_types_->find(id);
    if (vit == dict_value_types_->end()) return Err(path, "no field uses this dictionary id");
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
      return Err(path,
                 "column count " + std::to_string(arr->length) + " differs from data.count " + std::to_string(count));
    }
    QUIVER_RETURN_NOT_OK(ValidateArray(*arr, ValidationLevel::kFull, path));
    dict_arrays_.emplace(id, arr);
    return arr;
  }

  MemoryPool* pool_;
  const std::map<int64_t, DataTypePtr>* dict_value_types_;  // JsonSchemaReader's
  std::map<int64_t, const Json*> dict_json_;
  std::map<int64_t, ArrayDataPtr> dict_arrays_;
  std::set<int64_t> in_progress_;
};

Result<JsonIntegrationFile> ReadImpl(std::string_view json_text, MemoryPool* pool) {
  if (pool == nullptr) return Status::Invalid("ReadJsonIntegration: pool is null");
  Json doc = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Invalid("integration JSON: not valid JSON");
  if (!doc.is_object()) return Status::Invalid("integration JSON: top level is not an object");
  const Json* jschema = Member(doc, "schema");
  if (jschema == nullptr) return Status::Invalid("integration JSON: missing \"schema\"");
  JsonSchemaReader schema_reader;
  JsonIntegrationFile file;
  QUIVER_ASSIGN_OR_RETURN(file.schema, schema_reader.ParseSchema(*jschema));
  ColumnReader reader(pool, &schema_reader.dictionary_value_types());
  QUIVER_RETURN_NOT_OK(reader.IndexDictionaries(Member(doc, "dictionaries")));
  const Json* jbatches = Member(doc, "batches");
  if (jbatches != nullptr && !jbatches->is_null()) {
    if (!jbatches->is_array()) return Status::Invalid("integration JSON: \"batches\" is not an array");
    for (size_t k = 0; k < jbatches->size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b,
                              reader.ParseBatch((*jbatches)[k], file.schema, "batches[" + std::to_string(k) + "]"));
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
  if (pool == nullptr) return Status::Invalid("ReadJsonIntegrationFile: pool is null");
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> bytes, ipc::ReadFile(path, pool, kMaxInputBytes));
  std::string text;
  std::string_view json_text(reinterpret_cast<const char*>(bytes->data()), static_cast<size_t>(bytes->size()));
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    QUIVER_ASSIGN_OR_RETURN(text, Gunzip(bytes->view(), path, kMaxInputBytes));
    bytes.reset();
    json_text = text;
  }
  auto result = ReadJsonIntegration(json_text, pool);
  if (!result.ok()) return result.status().WithContext(path);
  return result;
}

}  // namespace quiver::integration
