// quiver/integration/json_writer.cc — writing integration JSON: batches,
// columns and dictionaries (the schema object: json_schema.cc). See
// json_integration.h.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/compare.h"
#include "quiver/columnar/layout.h"
#include "quiver/columnar/type_visit.h"
#include "quiver/columnar/value_format.h"
#include "quiver/integration/json_integration.h"
#include "quiver/integration/json_schema_internal.h"
#include "quiver/integration/json_value_internal.h"

namespace quiver::integration {

namespace {

/// Writes the columns of batches and the "dictionaries" section; collects
/// each dictionary id's dictionary as columns are written.
class ColumnWriter {
 public:
  explicit ColumnWriter(const JsonSchemaWriter* schema) : schema_(*schema) {}

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
      return Status::NotImplemented(path + ": batches carry different dictionaries for id " + std::to_string(id) +
                                    " (a replacement, not representable in integration JSON): " + st.message());
    }
    if (grow) it->second.second = dict;
    return Status::OK();
  }

  static OJson Int64Json(int64_t v) { return OJson(std::to_string(v)); }

  /// DATA entries for integer-backed types (64-bit as strings); float16 as
  /// its uint16 bit pattern.
  static OJson IntDataJson(const ArrayData& a, TypeId id, int64_t start, int64_t len) {
    OJson arr = OJson::array();
    const uint8_t* d = a.buffers.size() > 1 && a.buffers[1] ? a.buffers[1]->data() : nullptr;
    VisitTypeId(id, [&]<TypeId kId>(TypeIdTag<kId>) {
      using CType = typename TypeTraits<kId>::CType;
      // Any other id (callers pass none) reads as int64, as before.
      using T = std::conditional_t<std::is_integral_v<CType>, CType, int64_t>;
      for (int64_t k = 0; k < len; ++k) {
        if (d == nullptr) {
          arr.push_back(0);
          continue;
        }
        const T v = bit_util::LoadLE<T>(d + static_cast<int64_t>(sizeof(T)) * (a.offset + start + k));
        if constexpr (sizeof(T) == 8) {
          arr.push_back(std::to_string(v));
        } else {
          arr.push_back(v);
        }
      }
    });
    return arr;
  }

  /// DATA of a fixed-width type: the JSON value encoding is the type's own.
  static OJson ValuesJson(const ArrayData& a, const DataType& t, int64_t start, int64_t len) {
    const uint8_t* b1 = a.buffers.size() > 1 && a.buffers[1] ? a.buffers[1]->data() : nullptr;
    const int64_t p0 = a.offset + start;
    switch (t.id) {
      case TypeId::kBool: {
        OJson d = OJson::array();
        for (int64_t k = 0; k < len; ++k) d.push_back(b1 != nullptr && bit_util::GetBit(b1, p0 + k));
        return d;
      }
      case TypeId::kFloat32:
      case TypeId::kFloat64: {  // NaN and infinities as strings
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
        return d;
      }
      case TypeId::kDecimal: {  // unscaled integers as strings
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
        return d;
      }
      case TypeId::kFixedSizeBinary: {  // hex
        OJson d = OJson::array();
        for (int64_t k = 0; k < len; ++k) d.push_back(HexEncode(BinaryValueAt(a, start + k)));
        return d;
      }
      case TypeId::kIntervalDayTime:
      case TypeId::kIntervalMonthDayNano: {  // objects of named parts
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
        return d;
      }
      case TypeId::kDictionary: return IntDataJson(a, t.index_type->id, start, len);
      default: return IntDataJson(a, t.id, start, len);  // integer-backed and float16
    }
  }

  Result<OJson> Column(const Field& f, const ArrayData& a, int64_t start, int64_t len, const std::string& path,
                       int depth) {
    if (depth > kJsonIntegrationMaxDepth) return Status::Invalid(path + ": nested too deeply");
    if (!a.type) return Status::Invalid(path + ": array without a type");
    const DataType& t = *a.type;
    // VALIDITY, then the other buffers in the layout's order (LayoutOf),
    // each as its JSON member, then the children.
    const TypeLayout layout = LayoutOf(t);
    OJson c = OJson::object();
    c["name"] = f.name;
    c["count"] = len;
    if (layout.has_validity) {
      OJson v = OJson::array();
      for (int64_t k = 0; k < len; ++k) v.push_back(IsPhysicalNull(a, start + k) ? 0 : 1);
      c["VALIDITY"] = std::move(v);
    }
    if (t.id == TypeId::kDictionary && !t.index_type) {
      return Status::Invalid(path + ": dictionary type without index type");
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
    const int64_t p0 = a.offset + start;
    int64_t first = 0, last = 0;  // list / map: the child rows the slice spans
    for (int b = 0; b < layout.num_buffers; ++b) {
      const BufferLayout& buf = layout.buffers[b];
      const size_t bi = static_cast<size_t>(b);
      const uint8_t* data = bi < a.buffers.size() && a.buffers[bi] ? a.buffers[bi]->data() : nullptr;
      // Element i of an offsets / sizes / type ids buffer (0 when absent);
      // 64-bit ones are written as strings.
      auto load = [&](int64_t i) -> int64_t {
        if (data == nullptr) return 0;
        if (buf.element_bits == 64) return bit_util::LoadLE<int64_t>(data + 8 * i);
        if (buf.element_bits == 32) return bit_util::LoadLE<int32_t>(data + 4 * i);
        return static_cast<int8_t>(data[i]);
      };
      auto number = [&](int64_t v) { return buf.element_bits == 64 ? Int64Json(v) : OJson(v); };
      switch (buf.kind) {
        case BufferKind::kValidity: break;  // VALIDITY above
        case BufferKind::kData: break;      // with its offsets
        case BufferKind::kValues: c["DATA"] = ValuesJson(a, t, start, len); break;
        case BufferKind::kOffsets: {
          if (b + 1 < layout.num_buffers && layout.buffers[b + 1].kind == BufferKind::kData) {
            // Binary: OFFSET from 0 and DATA as utf8 or hex.
            const bool is_utf8 = t.id == TypeId::kUtf8 || t.id == TypeId::kLargeUtf8;
            OJson offsets = OJson::array();
            OJson d = OJson::array();
            int64_t pos = 0;
            for (int64_t k = 0; k < len; ++k) {
              offsets.push_back(number(pos));
              std::string_view v = BinaryValueAt(a, start + k);
              d.push_back(is_utf8 ? std::string(v) : HexEncode(v));
              pos += static_cast<int64_t>(v.size());
            }
            offsets.push_back(number(pos));
            c["OFFSET"] = std::move(offsets);
            c["DATA"] = std::move(d);
            break;
          }
          first = load(p0);
          last = load(p0 + len);
          OJson offsets = OJson::array();
          for (int64_t k = 0; k <= len; ++k) offsets.push_back(number(load(p0 + k) - first));
          c["OFFSET"] = std::move(offsets);
          break;
        }
        case BufferKind::kListViewOffsets:
        case BufferKind::kUnionOffsets:
        case BufferKind::kSizes:
        case BufferKind::kTypeIds: {
          OJson values = OJson::array();
          for (int64_t k = 0; k < len; ++k) values.push_back(number(load(p0 + k)));
          c[buf.kind == BufferKind::kSizes     ? "SIZE"
            : buf.kind == BufferKind::kTypeIds ? "TYPE_ID"
                                               : "OFFSET"] = std::move(values);
          break;
        }
        case BufferKind::kViews: {
          const bool is_utf8 = t.id == TypeId::kUtf8View;
          OJson views = OJson::array();
          for (int64_t k = 0; k < len; ++k) {
            OJson v = OJson::object();
            const uint8_t* view = data != nullptr ? data + 16 * (p0 + k) : nullptr;
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
          for (size_t v = bi + 1; v < a.buffers.size(); ++v) {  // the variadic data buffers
            bufs.push_back(a.buffers[v] ? HexEncode(a.buffers[v]->view()) : std::string());
          }
          c["VIEWS"] = std::move(views);
          c["VARIADIC_DATA_BUFFERS"] = std::move(bufs);
          break;
        }
      }
    }
    switch (layout.child_rows) {
      case ChildRows::kNone: break;
      case ChildRows::kByOffsets: {
        QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(0, first, last - first));
        c["children"] = OJson::array({std::move(child)});
        break;
      }
      case ChildRows::kByListViews: {
        const int64_t clen = a.children.empty() || !a.children[0] ? 0 : a.children[0]->length;
        QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(0, 0, clen));
        c["children"] = OJson::array({std::move(child)});
        break;
      }
      case ChildRows::kFixedSize: {
        QUIVER_ASSIGN_OR_RETURN(OJson child, write_child(0, p0 * t.list_size, len * t.list_size));
        c["children"] = OJson::array({std::move(child)});
        break;
      }
      case ChildRows::kSameRows:
      case ChildRows::kByUnionOffsets: {  // the slice's rows / every child whole
        const bool whole = layout.child_rows == ChildRows::kByUnionOffsets;
        OJson children = OJson::array();
        for (size_t k = 0; k < t.children.size(); ++k) {
          const int64_t clen = k < a.children.size() && a.children[k] ? a.children[k]->length : 0;
          QUIVER_ASSIGN_OR_RETURN(OJson child, whole ? write_child(k, 0, clen) : write_child(k, p0, len));
          children.push_back(std::move(child));
        }
        c["children"] = std::move(children);
        break;
      }
      case ChildRows::kByRunEnds: {
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
    }
    if (t.id == TypeId::kDictionary) {
      const int64_t id = schema_.FieldId(f);
      if (id < 0) return Status::Invalid(path + ": dictionary field without an id");
      QUIVER_RETURN_NOT_OK(RegisterDictionary(id, t.value_type, a.dictionary, path));
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
  const JsonSchemaWriter& schema_;
  std::map<int64_t, std::pair<DataTypePtr, ArrayDataPtr>> dicts_;
};

}  // namespace

Result<std::string> WriteJsonIntegration(const Schema& schema, const std::vector<RecordBatchPtr>& batches) {
  try {
    JsonSchemaWriter schema_writer;
    schema_writer.AssignIds(schema);
    ColumnWriter writer(&schema_writer);
    OJson doc = OJson::object();
    OJson sj = OJson::object();
    OJson fields = OJson::array();
    for (const auto& f : schema.fields) {
      if (!f) return Status::Invalid("WriteJsonIntegration: null field in schema");
      QUIVER_ASSIGN_OR_RETURN(OJson fj, schema_writer.FieldJson(*f, 0));
      fields.push_back(std::move(fj));
    }
    sj["fields"] = std::move(fields);
    if (!schema.metadata.empty()) sj["metadata"] = JsonSchemaWriter::MetadataJson(schema.metadata);
    doc["schema"] = std::move(sj);
    OJson bj = OJson::array();
    for (size_t b = 0; b < batches.size(); ++b) {
      const RecordBatchPtr& batch = batches[b];
      const std::string bpath = "batch " + std::to_string(b);
      if (!batch) return Status::Invalid("WriteJsonIntegration: " + bpath + " is null");
      QUIVER_RETURN_NOT_OK_CTX(batch->CheckShape(), "WriteJsonIntegration: " + bpath);
      if (batch->columns.size() != schema.fields.size()) {
        return Status::Invalid("WriteJsonIntegration: " + bpath + " has " + std::to_string(batch->columns.size()) +
                               " columns, schema has " + std::to_string(schema.fields.size()));
      }
      OJson cols = OJson::array();
      for (size_t k = 0; k < batch->columns.size(); ++k) {
        const Field& f = *schema.fields[k];
        if (!batch->columns[k]) return Status::Invalid("WriteJsonIntegration: null column");
        if (batch->columns[k]->length != batch->num_rows) {
          return Status::Invalid("WriteJsonIntegration: " + bpath + " column " + f.name +
                                 " length differs from num_rows");
        }
        QUIVER_ASSIGN_OR_RETURN(OJson col,
                                writer.Column(f, *batch->columns[k], 0, batch->num_rows, bpath + "." + f.name, 0));
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

}  // namespace quiver::integration
