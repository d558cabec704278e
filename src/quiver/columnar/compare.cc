// quiver/columnar/compare.cc — see compare.h.
#include "quiver/columnar/compare.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/element_load.h"
#include "quiver/columnar/value_format.h"
#include "quiver/columnar/value_visit.h"

namespace quiver {

namespace {

constexpr size_t kMaxValueChars = 200;

bool TypesCompatible(const DataType& e, const DataType& a, const CompareOptions& o);

/// A field compared by name (when `compare_name`), nullability, type and
/// (with o.check_metadata) metadata.
bool FieldsCompatible(const Field& e, const Field& a, const CompareOptions& o, bool compare_name = true) {
  if ((compare_name && e.name != a.name) || e.nullable != a.nullable) return false;
  if (o.check_metadata && !MetadataEquals(e.metadata, a.metadata)) return false;
  if (!e.type || !a.type) return !e.type && !a.type;
  return TypesCompatible(*e.type, *a.type, o);
}

/// Type equality for comparison purposes: like DataType::Equals, except that
/// dictionary index types and orderedness are ignored (values are compared
/// decoded). Internal field names (list items, map entries / key / value)
/// count only with o.check_internal_names, as in DataType::Equals.
bool TypesCompatible(const DataType& e, const DataType& a, const CompareOptions& o) {
  if (e.id != a.id) return false;
  if (e.id == TypeId::kDictionary) {
    if (!e.value_type || !a.value_type) return !e.value_type && !a.value_type;
    return TypesCompatible(*e.value_type, *a.value_type, o);
  }
  if (!TypeParametersEqual(e, a)) return false;
  if (e.children.size() != a.children.size()) return false;
  const bool names = o.check_internal_names;
  const bool list_like = e.id == TypeId::kList || e.id == TypeId::kLargeList || e.id == TypeId::kListView ||
                         e.id == TypeId::kLargeListView || e.id == TypeId::kFixedSizeList;
  if (e.id == TypeId::kMap && e.children.size() == 1 && e.children[0] && a.children[0] && e.children[0]->type &&
      a.children[0]->type && e.children[0]->type->id == TypeId::kStruct && a.children[0]->type->id == TypeId::kStruct) {
    const Field& ef = *e.children[0];
    const Field& af = *a.children[0];
    if ((names && ef.name != af.name) || ef.nullable != af.nullable) return false;
    if (o.check_metadata && !MetadataEquals(ef.metadata, af.metadata)) return false;
    const auto& ek = ef.type->children;
    const auto& ak = af.type->children;
    if (ek.size() != ak.size()) return false;
    for (size_t k = 0; k < ek.size(); ++k) {
      if (!ek[k] || !ak[k]) {
        if (ek[k] != ak[k]) return false;
        continue;
      }
      if (!FieldsCompatible(*ek[k], *ak[k], o, names)) return false;
    }
    return true;
  }
  for (size_t k = 0; k < e.children.size(); ++k) {
    if (!e.children[k] || !a.children[k]) {
      if (e.children[k] != a.children[k]) return false;
      continue;
    }
    if (!FieldsCompatible(*e.children[k], *a.children[k], o, !list_like || names)) return false;
  }
  return true;
}

const uint8_t* Data(const ArrayData& a, size_t b) {
  return (b < a.buffers.size() && a.buffers[b]) ? a.buffers[b]->data() : nullptr;
}

std::string Shorten(std::string s) {
  if (s.size() > kMaxValueChars) {
    s.resize(kMaxValueChars);
    s.append("...");
  }
  return s;
}

class Comparer {
 public:
  explicit Comparer(const CompareOptions& options) : opt_(options) {}

  bool Equal(const ArrayData& e, int64_t i, const ArrayData& a, int64_t j) {
    const DataType& t = *e.type;
    switch (t.id) {
      case TypeId::kNull: return true;
      case TypeId::kSparseUnion:
      case TypeId::kDenseUnion: {
        const uint8_t* ecodes = Data(e, 0);
        const uint8_t* acodes = Data(a, 0);
        const int8_t ec = ecodes ? static_cast<int8_t>(ecodes[e.offset + i]) : 0;
        const int8_t ac = acodes ? static_cast<int8_t>(acodes[a.offset + j]) : 0;
        if (ec != ac) {
          return Fail(e, i, a, j, "union type code differs (" + std::to_string(ec) + " vs " + std::to_string(ac) + ")");
        }
        int ech = 0, ach = 0;
        int64_t eci = 0, aci = 0;
        if (!UnionChildAt(e, i, &ech, &eci) || !UnionChildAt(a, j, &ach, &aci) || ech != ach) {
          return Fail(e, i, a, j, "undeclared union type code " + std::to_string(ec));
        }
        if (!Equal(*e.children[ech], eci, *a.children[ach], aci)) {
          Push("." + ChildName(t, ech));
          return false;
        }
        return true;
      }
      case TypeId::kRunEndEncoded:
        if (e.children.size() != 2 || a.children.size() != 2) {
          return Fail(e, i, a, j, "run-end encoded array without two children");
        }
        return Equal(*e.children[1], RunIndexAt(e, i), *a.children[1], RunIndexAt(a, j));
      case TypeId::kDictionary: {
        const bool en = IsPhysicalNull(e, i);
        const bool an = IsPhysicalNull(a, j);
        if (en || an) {
          const bool le = en || IsLogicalNull(e, i);
          const bool la = an || IsLogicalNull(a, j);
          if (le && la) return true;
          return Fail(e, i, a, j, "validity differs");
        }
        if (!e.dictionary || !a.dictionary) {
          if (!e.dictionary && !a.dictionary) {
            if (DictionaryIndexAt(e, i) == DictionaryIndexAt(a, j)) return true;
            return Fail(e, i, a, j, "dictionary index differs (no dictionaries)");
          }
          return Fail(e, i, a, j, "dictionary missing on one side");
        }
        return Equal(*e.dictionary, DictionaryIndexAt(e, i), *a.dictionary, DictionaryIndexAt(a, j));
      }
      default: break;
    }

    const bool en = IsPhysicalNull(e, i);
    const bool an = IsPhysicalNull(a, j);
    if (en || an) {
      if (en && an) return true;
      return Fail(e, i, a, j, "validity differs");
    }
    const int64_t ep = e.offset + i;
    const int64_t ap = a.offset + j;
    if (IsFloating(t.id)) {
      // As doubles (float16 through HalfToDouble); an absent buffer reads 0.
      auto load = [&t](const uint8_t* data, int64_t p) {
        return VisitValueType(
            t,
            [&]<typename T>() -> double {
              if constexpr (std::is_floating_point_v<T>) {
                return LoadValue<T>(data, p);
              } else if constexpr (std::is_same_v<T, uint16_t>) {
                return HalfToDouble(LoadValue<T>(data, p));
              } else {
                return 0;
              }
            },
            [] { return 0.0; });
      };
      return FloatEqual(load(Data(e, 1), ep), load(Data(a, 1), ap)) || Fail(e, i, a, j, "value differs");
    }
    switch (t.id) {
      case TypeId::kBool: {
        const uint8_t* eb = Data(e, 1);
        const uint8_t* ab = Data(a, 1);
        const bool ev = eb && bit_util::GetBit(eb, ep);
        const bool av = ab && bit_util::GetBit(ab, ap);
        return ev == av || Fail(e, i, a, j, "value differs");
      }
      case TypeId::kBinary:
      case TypeId::kUtf8:
      case TypeId::kLargeBinary:
      case TypeId::kLargeUtf8:
      case TypeId::kBinaryView:
      case TypeId::kUtf8View:
      case TypeId::kFixedSizeBinary:
        return BinaryValueAt(e, i) == BinaryValueAt(a, j) || Fail(e, i, a, j, "value differs");
      case TypeId::kList:
      case TypeId::kLargeList:
      case TypeId::kListView:
      case TypeId::kLargeListView:
      case TypeId::kFixedSizeList:
      case TypeId::kMap: {
        int64_t eo = 0, el = 0, ao = 0, al = 0;
        ListRangeAt(e, i, &eo, &el);
        ListRangeAt(a, j, &ao, &al);
        if (el != al) {
          return Fail(e, i, a, j, "list length differs (" + std::to_string(el) + " vs " + std::to_string(al) + ")");
        }
        if (el == 0) return true;
        if (e.children.empty() || a.children.empty() || !e.children[0] || !a.children[0]) {
          return Fail(e, i, a, j, "list array without a child");
        }
        for (int64_t k = 0; k < el; ++k) {
          if (!Equal(*e.children[0], eo + k, *a.children[0], ao + k)) {
            Push("[" + std::to_string(k) + "]");
            return false;
          }
        }
        return true;
      }
      case TypeId::kStruct: {
        if (e.children.size() != a.children.size()) {
          return Fail(e, i, a, j, "struct child count differs");
        }
        for (size_t k = 0; k < e.children.size(); ++k) {
          if (!Equal(*e.children[k], ep, *a.children[k], ap)) {
            Push("." + ChildName(t, static_cast<int>(k)));
            return false;
          }
        }
        return true;
      }
      default: break;
    }
    // Integers, temporal types, intervals and decimals: compared bytewise
    // (whole bytes per value; bool and fixed_size_binary are handled above).
    const int width = FixedBitWidth(t) / 8;
    if (width > 0) {
      const uint8_t* eb = Data(e, 1);
      const uint8_t* ab = Data(a, 1);
      if (eb == nullptr || ab == nullptr) {
        return (eb == ab) || Fail(e, i, a, j, "data buffer missing on one side");
      }
      return std::memcmp(eb + ep * width, ab + ap * width, static_cast<size_t>(width)) == 0 ||
             Fail(e, i, a, j, "value differs");
    }
    return Fail(e, i, a, j, "unsupported type " + t.ToString());
  }

  /// The message for the recorded failure at top-level row `row`.
  std::string Describe(const std::string& path, int64_t row) const {
    std::string loc = path + "[" + std::to_string(row) + "]";
    for (auto it = segments_.rbegin(); it != segments_.rend(); ++it) loc += *it;
    std::string msg = loc + ": " + what_;
    if (fe_ != nullptr && fa_ != nullptr) {
      msg += ": expected " + Shorten(FormatValueToString(*fe_, fei_, ValueFormat::kText)) + ", actual " +
             Shorten(FormatValueToString(*fa_, fai_, ValueFormat::kText));
    }
    return msg;
  }

 private:
  bool FloatEqual(double x, double y) const {
    const bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn || yn) return xn && yn;
    if (x == y) return true;
    if (std::isinf(x) || std::isinf(y)) return false;
    return std::fabs(x - y) <= opt_.float_abs_tolerance + opt_.float_rel_tolerance * std::fabs(x);
  }

  static std::string ChildName(const DataType& t, int k) {
    if (k >= 0 && static_cast<size_t>(k) < t.children.size() && t.children[k]) {
      return t.children[k]->name;
    }
    return "<child " + std::to_string(k) + ">";
  }

  bool Fail(const ArrayData& e, int64_t i, const ArrayData& a, int64_t j, std::string what) {
    fe_ = &e;
    fei_ = i;
    fa_ = &a;
    fai_ = j;
    what_ = std::move(what);
    segments_.clear();
    return false;
  }

  void Push(std::string segment) { segments_.push_back(std::move(segment)); }

  const CompareOptions& opt_;
  const ArrayData* fe_ = nullptr;
  int64_t fei_ = 0;
  const ArrayData* fa_ = nullptr;
  int64_t fai_ = 0;
  std::string what_;
  std::vector<std::string> segments_;  // innermost first
};

std::string TypeText(const DataTypePtr& t) { return t ? t->ToString() : std::string("<none>"); }

}  // namespace

Status CompareArrays(const ArrayData& expected, const ArrayData& actual, const CompareOptions& options,
                     const std::string& path) {
  if (!expected.type || !actual.type) {
    return Status::Invalid(path + ": array without a type");
  }
  if (!TypesCompatible(*expected.type, *actual.type, options)) {
    return Status::Invalid(path + ": type mismatch: expected " + TypeText(expected.type) + ", actual " +
                           TypeText(actual.type));
  }
  if (expected.length != actual.length) {
    return Status::Invalid(path + ": length mismatch: expected " + std::to_string(expected.length) + ", actual " +
                           std::to_string(actual.length));
  }
  Comparer comparer(options);
  for (int64_t row = 0; row < expected.length; ++row) {
    if (!comparer.Equal(expected, row, actual, row)) {
      return Status::Invalid(comparer.Describe(path, row));
    }
  }
  return Status::OK();
}

bool ArrayRangeEquals(const ArrayData& left, int64_t left_start, const ArrayData& right, int64_t right_start,
                      int64_t length, const CompareOptions& options) {
  if (!left.type || !right.type || !TypesCompatible(*left.type, *right.type, options)) return false;
  if (length < 0 || left_start < 0 || right_start < 0 || left_start > left.length - length ||
      right_start > right.length - length) {
    return false;
  }
  Comparer comparer(options);
  for (int64_t k = 0; k < length; ++k) {
    if (!comparer.Equal(left, left_start + k, right, right_start + k)) return false;
  }
  return true;
}

Status CompareSchemas(const Schema& expected, const Schema& actual, const CompareOptions& options) {
  if (expected.fields.size() != actual.fields.size()) {
    return Status::Invalid("schema field count mismatch: expected " + std::to_string(expected.fields.size()) +
                           ", actual " + std::to_string(actual.fields.size()));
  }
  for (size_t k = 0; k < expected.fields.size(); ++k) {
    const FieldPtr& e = expected.fields[k];
    const FieldPtr& a = actual.fields[k];
    const std::string where = "schema field " + std::to_string(k);
    if (!e || !a) {
      if (e != a) return Status::Invalid(where + ": missing field on one side");
      continue;
    }
    if (e->name != a->name) {
      return Status::Invalid(where + ": name mismatch: expected '" + e->name + "', actual '" + a->name + "'");
    }
    if (e->nullable != a->nullable) {
      return Status::Invalid(where + " '" + e->name + "': nullability mismatch: expected " +
                             (e->nullable ? "nullable" : "non-nullable") + ", actual " +
                             (a->nullable ? "nullable" : "non-nullable"));
    }
    if (!e->type || !a->type || !TypesCompatible(*e->type, *a->type, options)) {
      CompareOptions lenient = options;
      lenient.check_internal_names = false;
      const bool names_only =
          options.check_internal_names && e->type && a->type && TypesCompatible(*e->type, *a->type, lenient);
      return Status::Invalid(where + " '" + e->name + "': type mismatch: expected " + TypeText(e->type) + ", actual " +
                             TypeText(a->type) + (names_only ? " (internal field names differ)" : ""));
    }
    if (options.check_metadata && !MetadataEquals(e->metadata, a->metadata)) {
      return Status::Invalid(where + " '" + e->name + "': metadata mismatch: expected " + e->ToString() + ", actual " +
                             a->ToString());
    }
  }
  if (options.check_metadata && !MetadataEquals(expected.metadata, actual.metadata)) {
    return Status::Invalid("schema metadata mismatch: expected " + std::to_string(expected.metadata.size()) +
                           " entries, actual " + std::to_string(actual.metadata.size()) + " (or different contents)");
  }
  return Status::OK();
}

Status CompareBatches(const RecordBatch& expected, const RecordBatch& actual, const CompareOptions& options) {
  if (expected.schema && actual.schema) {
    QUIVER_RETURN_NOT_OK(CompareSchemas(*expected.schema, *actual.schema, options));
  } else if (expected.schema || actual.schema) {
    return Status::Invalid("batch schema missing on one side");
  }
  if (expected.num_rows != actual.num_rows) {
    return Status::Invalid("batch row count mismatch: expected " + std::to_string(expected.num_rows) + ", actual " +
                           std::to_string(actual.num_rows));
  }
  if (expected.columns.size() != actual.columns.size()) {
    return Status::Invalid("batch column count mismatch: expected " + std::to_string(expected.columns.size()) +
                           ", actual " + std::to_string(actual.columns.size()));
  }
  for (size_t k = 0; k < expected.columns.size(); ++k) {
    std::string path = "column " + std::to_string(k);
    if (expected.schema && k < expected.schema->fields.size() && expected.schema->fields[k]) {
      path = expected.schema->fields[k]->name;
    }
    if (!expected.columns[k] || !actual.columns[k]) {
      if (expected.columns[k] != actual.columns[k]) {
        return Status::Invalid(path + ": column missing on one side");
      }
      continue;
    }
    QUIVER_RETURN_NOT_OK(CompareArrays(*expected.columns[k], *actual.columns[k], options, path));
  }
  return Status::OK();
}

}  // namespace quiver
