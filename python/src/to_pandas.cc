// python/src/to_pandas.cc — Table.to_pandas() (to_pandas.h).
//
// The frame is built by position from one 2-D numpy array per dtype (the
// blocks pandas keeps), each filled column by column in one pass, so that
// no column is copied twice (pandas would stack separate arrays into blocks)
// and repeated names cannot mix columns up.
#include "to_pandas.h"

#include <pybind11/numpy.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "py_values.h"
#include "quiver/base/bit_util.h"

namespace quiver::python {

namespace {

const char* NumpyDtypeOf(TypeId id) {
  switch (id) {
    case TypeId::kInt8: return "int8";
    case TypeId::kInt16: return "int16";
    case TypeId::kInt32: return "int32";
    case TypeId::kInt64: return "int64";
    case TypeId::kUInt8: return "uint8";
    case TypeId::kUInt16: return "uint16";
    case TypeId::kUInt32: return "uint32";
    case TypeId::kUInt64: return "uint64";
    case TypeId::kFloat32: return "float32";
    case TypeId::kFloat64: return "float64";
    default: return nullptr;
  }
}

/// How one column becomes a pandas column.
enum class PdKind {
  kCopy,          ///< numbers in their own dtype (floats: NaN for nulls)
  kIntToFloat,    ///< integers with nulls -> float64 with NaN (as pandas does)
  kBool,          ///< booleans without nulls -> bool
  kDatetimeNs,    ///< date32 / date64 / timestamp -> datetime64[ns], NaT for nulls
  kDecimalFloat,  ///< decimal of precision <= 15 -> float64 (the nearest double; NaN)
  kString,        ///< utf8 / large_utf8 (dictionary-encoded too) -> str / None, equal values shared
  kObject,        ///< anything else -> Python values (bool/None, bytes, Decimal, date, text)
};

struct PdPlan {
  PdKind kind = PdKind::kObject;
  std::string dtype = "object";
  int64_t ns_per_unit = 1;  ///< kDatetimeNs
  bool tz = false;          ///< kDatetimeNs: a timestamp with a time zone
};

bool IsUtf8(const DataType& t) { return t.id == TypeId::kUtf8 || t.id == TypeId::kLargeUtf8; }

/// The bytes of string value i of a utf8 / large_utf8 array.
std::string_view Utf8At(const ArrayData& a, int64_t i) {
  const int64_t k = a.offset + i;
  const char* data = a.GetValues<char>(2);
  if (a.type->id == TypeId::kUtf8) {
    const int32_t* o = a.GetValues<int32_t>(1) + k;
    return {data + o[0], static_cast<size_t>(o[1] - o[0])};
  }
  const int64_t* o = a.GetValues<int64_t>(1) + k;
  return {data + o[0], static_cast<size_t>(o[1] - o[0])};
}

PdPlan PlanColumn(const Table& table, int col) {
  const DataType& type = *table.schema->fields[static_cast<size_t>(col)]->type;
  int64_t nulls = 0;
  for (const auto& b : table.batches) nulls += b->columns[static_cast<size_t>(col)]->null_count;
  PdPlan p;
  if (const char* dtype = NumpyDtypeOf(type.id)) {
    const bool is_float = type.id == TypeId::kFloat32 || type.id == TypeId::kFloat64;
    p.kind = nulls > 0 && !is_float ? PdKind::kIntToFloat : PdKind::kCopy;
    p.dtype = p.kind == PdKind::kIntToFloat ? "float64" : dtype;
    return p;
  }
  if (type.id == TypeId::kBool && nulls == 0) {
    p.kind = PdKind::kBool;
    p.dtype = "bool";
    return p;
  }
  if (type.id == TypeId::kDate32 || type.id == TypeId::kDate64 || type.id == TypeId::kTimestamp) {
    int64_t mult = 1;
    if (type.id == TypeId::kDate32) mult = int64_t{86400} * 1000000000;
    if (type.id == TypeId::kDate64) mult = 1000000;
    if (type.id == TypeId::kTimestamp) {
      switch (type.unit) {
        case TimeUnit::kSecond: mult = 1000000000; break;
        case TimeUnit::kMilli: mult = 1000000; break;
        case TimeUnit::kMicro: mult = 1000; break;
        case TimeUnit::kNano: mult = 1; break;
      }
    }
    // pandas (1.x) holds nanoseconds: values past them become Python objects.
    const int64_t limit = std::numeric_limits<int64_t>::max() / mult;
    bool fits = true;
    for (const auto& b : table.batches) {
      const ArrayData& a = *b->columns[static_cast<size_t>(col)];
      for (int64_t i = 0; i < a.length && fits; ++i) {
        if (!a.IsValid(i)) continue;
        const int64_t v =
            type.id == TypeId::kDate32 ? a.GetValues<int32_t>(1)[a.offset + i] : a.GetValues<int64_t>(1)[a.offset + i];
        fits = v <= limit && v >= -limit;
      }
    }
    if (fits) {
      p.kind = PdKind::kDatetimeNs;
      p.dtype = "datetime64[ns]";
      p.ns_per_unit = mult;
      p.tz = type.id == TypeId::kTimestamp && !type.timezone.empty();
    }
    return p;
  }
  if (type.id == TypeId::kDecimal && type.precision <= 15 && type.scale >= -15 && type.scale <= 22) {
    p.kind = PdKind::kDecimalFloat;
    p.dtype = "float64";
    return p;
  }
  if (IsUtf8(type) || (type.id == TypeId::kDictionary && type.value_type && IsUtf8(*type.value_type))) {
    p.kind = PdKind::kString;
  }
  return p;
}

/// Python str objects for the values of one column, with equal values
/// sharing one object while that pays (low-cardinality columns: flags,
/// modes, categories), as pyarrow's deduplicate_objects does. Holds a
/// reference to every cached object until destroyed.
class StringCache {
 public:
  ~StringCache() { Clear(); }
  /// A new reference to a str of `text` (UTF-8; invalid bytes replaced).
  PyObject* Get(std::string_view text) {
    if (enabled_) {
      ++lookups_;
      auto it = cache_.find(text);
      if (it != cache_.end()) {
        ++hits_;
        Py_INCREF(it->second);
        return it->second;
      }
      // Mostly distinct values (comments, keys): stop hashing them.
      if (cache_.size() >= kMaxEntries || (lookups_ >= 4096 && hits_ * 2 < lookups_)) {
        enabled_ = false;
        Clear();
      }
    }
    PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
    if (s == nullptr) throw py::error_already_set();
    if (enabled_) {
      Py_INCREF(s);
      cache_.emplace(text, s);
    }
    return s;
  }

 private:
  static constexpr size_t kMaxEntries = 1 << 16;
  void Clear() {
    for (auto& [k, v] : cache_) Py_DECREF(v);
    cache_.clear();
  }
  std::unordered_map<std::string_view, PyObject*> cache_;
  bool enabled_ = true;
  int64_t lookups_ = 0, hits_ = 0;
};

/// Fills `n` slots (one column of a block) from column `col`.
void FillColumn(const Table& table, int col, const PdPlan& plan, uint8_t* out) {
  const DataType& type = *table.schema->fields[static_cast<size_t>(col)]->type;
  int64_t row = 0;
  StringCache strings;
  auto** slots = reinterpret_cast<PyObject**>(out);
  for (const auto& b : table.batches) {
    const ArrayData& a = *b->columns[static_cast<size_t>(col)];
    switch (plan.kind) {
      case PdKind::kCopy: {
        const int width = FixedBitWidth(type) / 8;
        std::memcpy(out + row * width, a.GetValues<uint8_t>(1) + a.offset * width,
                    static_cast<size_t>(a.length * width));
        if (a.null_count > 0) {  // float columns: NaN for nulls
          for (int64_t i = 0; i < a.length; ++i) {
            if (a.IsValid(i)) continue;
            if (type.id == TypeId::kFloat32) {
              reinterpret_cast<float*>(out)[row + i] = std::numeric_limits<float>::quiet_NaN();
            } else {
              reinterpret_cast<double*>(out)[row + i] = std::numeric_limits<double>::quiet_NaN();
            }
          }
        }
        break;
      }
      case PdKind::kIntToFloat: {
        auto* d = reinterpret_cast<double*>(out) + row;
        for (int64_t i = 0; i < a.length; ++i) {
          if (!a.IsValid(i)) {
            d[i] = std::numeric_limits<double>::quiet_NaN();
          } else if (type.id == TypeId::kUInt64) {
            d[i] = static_cast<double>(a.GetValues<uint64_t>(1)[a.offset + i]);
          } else {
            d[i] = static_cast<double>(IntegerAt(a, i));
          }
        }
        break;
      }
      case PdKind::kBool: {
        auto* d = reinterpret_cast<bool*>(out) + row;
        const uint8_t* bits = a.GetValues<uint8_t>(1);
        for (int64_t i = 0; i < a.length; ++i) d[i] = bit_util::GetBit(bits, a.offset + i);
        break;
      }
      case PdKind::kDatetimeNs: {
        auto* d = reinterpret_cast<int64_t*>(out) + row;
        const int64_t nat = std::numeric_limits<int64_t>::min();
        const int64_t mult = plan.ns_per_unit;
        if (type.id == TypeId::kDate32) {
          const int32_t* v = a.GetValues<int32_t>(1) + a.offset;
          for (int64_t i = 0; i < a.length; ++i) d[i] = static_cast<int64_t>(v[i]) * mult;
        } else {
          const int64_t* v = a.GetValues<int64_t>(1) + a.offset;
          for (int64_t i = 0; i < a.length; ++i) d[i] = v[i] * mult;
        }
        if (a.null_count > 0) {
          for (int64_t i = 0; i < a.length; ++i) {
            if (!a.IsValid(i)) d[i] = nat;
          }
        }
        break;
      }
      case PdKind::kDecimalFloat: {
        auto* d = reinterpret_cast<double*>(out) + row;
        const int width = type.bit_width / 8;
        const uint8_t* v = a.GetValues<uint8_t>(1) + a.offset * width;
        double pow10 = 1;
        for (int k = 0; k < (type.scale >= 0 ? type.scale : -type.scale); ++k) pow10 *= 10;
        for (int64_t i = 0; i < a.length; ++i) {
          if (!a.IsValid(i)) {
            d[i] = std::numeric_limits<double>::quiet_NaN();
            continue;
          }
          // Precision <= 15: the value fits the low 64 bits (two's complement, little-endian),
          // and |unscaled| < 2^53, so one division gives the nearest double.
          const int64_t unscaled =
              width == 4 ? bit_util::LoadLE<int32_t>(v + i * width) : bit_util::LoadLE<int64_t>(v + i * width);
          d[i] = type.scale >= 0 ? static_cast<double>(unscaled) / pow10 : static_cast<double>(unscaled) * pow10;
        }
        break;
      }
      case PdKind::kString: {
        const bool dict = type.id == TypeId::kDictionary;
        ArrayData indices;
        if (dict) {
          indices = a;
          indices.type = type.index_type;
        }
        for (int64_t i = 0; i < a.length; ++i) {
          PyObject* o = nullptr;
          if (!a.IsValid(i)) {
            o = Py_None;
            Py_INCREF(o);
          } else if (!dict) {
            o = strings.Get(Utf8At(a, i));
          } else {
            const int64_t idx = IntegerAt(indices, i);
            if (!a.dictionary || idx < 0 || idx >= a.dictionary->length || !a.dictionary->IsValid(idx)) {
              o = Py_None;
              Py_INCREF(o);
            } else {
              o = strings.Get(Utf8At(*a.dictionary, idx));
            }
          }
          slots[row + i] = o;
        }
        break;
      }
      case PdKind::kObject: {
        for (int64_t i = 0; i < a.length; ++i) slots[row + i] = PyValue(a, i).release().ptr();
        break;
      }
    }
    row += a.length;
  }
}

}  // namespace

py::tuple PandasBlocks(const Table& table) {
  const int ncols = table.schema->num_fields();
  const int64_t n = table.num_rows();
  std::vector<PdPlan> plans;
  for (int c = 0; c < ncols; ++c) plans.push_back(PlanColumn(table, c));
  std::vector<std::string> dtypes;
  std::vector<std::vector<int>> members;
  for (int c = 0; c < ncols; ++c) {
    auto it = std::find(dtypes.begin(), dtypes.end(), plans[static_cast<size_t>(c)].dtype);
    if (it == dtypes.end()) {
      dtypes.push_back(plans[static_cast<size_t>(c)].dtype);
      members.emplace_back();
      it = dtypes.end() - 1;
    }
    members[static_cast<size_t>(it - dtypes.begin())].push_back(c);
  }
  py::list blocks;
  py::list zones;
  for (size_t g = 0; g < dtypes.size(); ++g) {
    const auto& cols = members[g];
    py::array values(py::dtype(dtypes[g]), std::vector<py::ssize_t>{static_cast<py::ssize_t>(cols.size()), n});
    auto* base = static_cast<uint8_t*>(values.mutable_data());
    const int64_t item = values.itemsize();
    py::list positions;
    for (size_t j = 0; j < cols.size(); ++j) {
      FillColumn(table, cols[j], plans[static_cast<size_t>(cols[j])], base + static_cast<int64_t>(j) * n * item);
      positions.append(cols[j]);
      if (plans[static_cast<size_t>(cols[j])].tz) {
        zones.append(py::make_tuple(cols[j], table.schema->fields[static_cast<size_t>(cols[j])]->type->timezone));
      }
    }
    blocks.append(py::make_tuple(values, positions));
  }
  return py::make_tuple(blocks, zones);
}

}  // namespace quiver::python
