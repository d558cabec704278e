// python/src/from_numpy.cc — numpy columns into a Table (from_numpy.h).
#include "from_numpy.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "py_values.h"
#include "quiver/base/bit_util.h"

namespace quiver::python {

namespace {

bool IsMissing(PyObject* o) {
  if (o == Py_None) return true;
  if (PyFloat_Check(o)) return std::isnan(PyFloat_AS_DOUBLE(o));
  const char* name = Py_TYPE(o)->tp_name;
  return std::strcmp(name, "NAType") == 0 || std::strcmp(name, "NaTType") == 0;
}

/// A validity bitmap of `n` bits from `valid(i)`; nullptr when every value is valid.
template <typename Valid>
std::shared_ptr<Buffer> MakeValidity(int64_t n, Valid valid, int64_t* null_count) {
  *null_count = 0;
  for (int64_t i = 0; i < n; ++i) *null_count += valid(i) ? 0 : 1;
  if (*null_count == 0) return nullptr;
  auto bits = Unwrap(Buffer::AllocateZeroed(ModulePool(), (n + 7) / 8));
  for (int64_t i = 0; i < n; ++i) {
    if (valid(i)) bit_util::SetBit(bits->mutable_data(), i);
  }
  return bits;
}

[[noreturn]] void ColumnTypeError(const std::string& name, const std::string& what) {
  throw py::type_error("column '" + name + "': " + what);
}

/// One column from an object array: str -> utf8 (large_utf8 past 2 GiB),
/// bytes -> binary, bool -> bool, int -> int64, float -> float64,
/// datetime.date -> date32, by the first value that is not missing (None,
/// NaN, pd.NA, NaT are nulls); a column of nulls only -> utf8.
ArrayDataPtr ObjectColumn(const std::string& name, py::array arr) {
  const int64_t n = arr.shape(0);
  // `arr` is a C-contiguous array of dtype object (NumpyColumn): PyObject* slots.
  PyObject* const* v = static_cast<PyObject* const*>(arr.data());
  PyObject* first = nullptr;
  for (int64_t i = 0; i < n && first == nullptr; ++i) {
    if (!IsMissing(v[i])) first = v[i];
  }
  auto out = std::make_shared<ArrayData>();
  out->length = n;
  auto valid = [&](int64_t i) { return !IsMissing(v[i]); };
  auto check = [&](int64_t i, auto pred, const char* want) {
    if (!pred(v[i])) {
      ColumnTypeError(name, std::string("value ") + std::to_string(i) + " is a " + Py_TYPE(v[i])->tp_name +
                                ", expected " + want + " like the column's first value");
    }
  };
  if (first == nullptr || PyUnicode_Check(first) || PyBytes_Check(first)) {
    const bool text = first == nullptr || PyUnicode_Check(first);
    int64_t total = 0;
    std::vector<std::pair<const char*, Py_ssize_t>> views(static_cast<size_t>(n), {nullptr, 0});
    for (int64_t i = 0; i < n; ++i) {
      if (!valid(i)) continue;
      const char* p = nullptr;
      Py_ssize_t len = 0;
      if (text) {
        check(
            i, [](PyObject* o) { return PyUnicode_Check(o) != 0; }, "str");
        p = PyUnicode_AsUTF8AndSize(v[i], &len);
        if (p == nullptr) throw py::error_already_set();
      } else {
        check(
            i, [](PyObject* o) { return PyBytes_Check(o) != 0; }, "bytes");
        p = PyBytes_AS_STRING(v[i]);
        len = PyBytes_GET_SIZE(v[i]);
      }
      views[static_cast<size_t>(i)] = {p, len};
      total += len;
    }
    const bool large = total > std::numeric_limits<int32_t>::max();
    out->type = text ? (large ? large_utf8() : utf8()) : (large ? large_binary() : binary());
    const int width = large ? 8 : 4;
    auto offsets = Unwrap(Buffer::Allocate(ModulePool(), (n + 1) * width));
    auto data = Unwrap(Buffer::Allocate(ModulePool(), std::max<int64_t>(total, 1)));
    int64_t at = 0;
    for (int64_t i = 0; i <= n; ++i) {
      if (large) {
        reinterpret_cast<int64_t*>(offsets->mutable_data())[i] = at;
      } else {
        reinterpret_cast<int32_t*>(offsets->mutable_data())[i] = static_cast<int32_t>(at);
      }
      if (i == n) break;
      const auto& [p, len] = views[static_cast<size_t>(i)];
      if (len > 0) std::memcpy(data->mutable_data() + at, p, static_cast<size_t>(len));
      at += len;
    }
    out->buffers = {MakeValidity(n, valid, &out->null_count), offsets, data};
    return out;
  }
  if (PyBool_Check(first)) {
    out->type = boolean();
    auto bits = Unwrap(Buffer::AllocateZeroed(ModulePool(), (n + 7) / 8));
    for (int64_t i = 0; i < n; ++i) {
      if (!valid(i)) continue;
      check(
          i, [](PyObject* o) { return PyBool_Check(o) != 0; }, "bool");
      if (v[i] == Py_True) bit_util::SetBit(bits->mutable_data(), i);
    }
    out->buffers = {MakeValidity(n, valid, &out->null_count), bits};
    return out;
  }
  if (PyLong_Check(first) || PyFloat_Check(first)) {
    // Integers stay int64 unless a float appears (then float64, as pandas would).
    bool floats = false;
    for (int64_t i = 0; i < n; ++i) {
      if (!valid(i)) continue;
      check(
          i, [](PyObject* o) { return (PyLong_Check(o) && !PyBool_Check(o)) || PyFloat_Check(o); }, "number");
      floats = floats || PyFloat_Check(v[i]);
    }
    out->type = floats ? float64() : int64();
    auto values = Unwrap(Buffer::AllocateZeroed(ModulePool(), n * 8));
    for (int64_t i = 0; i < n; ++i) {
      if (!valid(i)) continue;
      if (floats) {
        reinterpret_cast<double*>(values->mutable_data())[i] = PyFloat_AsDouble(v[i]);
      } else {
        int overflow = 0;
        const long long x = PyLong_AsLongLongAndOverflow(v[i], &overflow);
        if (overflow != 0) ColumnTypeError(name, "value " + std::to_string(i) + " does not fit int64");
        reinterpret_cast<int64_t*>(values->mutable_data())[i] = x;
      }
      if (PyErr_Occurred()) throw py::error_already_set();
    }
    out->buffers = {MakeValidity(n, valid, &out->null_count), values};
    return out;
  }
  py::object date_type = PyTypes::Get().date, datetime_type = PyTypes::Get().datetime;
  if (PyObject_IsInstance(first, date_type.ptr()) == 1 && PyObject_IsInstance(first, datetime_type.ptr()) == 0) {
    out->type = date32();
    auto values = Unwrap(Buffer::AllocateZeroed(ModulePool(), n * 4));
    for (int64_t i = 0; i < n; ++i) {
      if (!valid(i)) continue;
      check(
          i,
          [&](PyObject* o) {
            return PyObject_IsInstance(o, date_type.ptr()) == 1 && PyObject_IsInstance(o, datetime_type.ptr()) == 0;
          },
          "datetime.date");
      const int64_t ordinal = py::reinterpret_borrow<py::object>(v[i]).attr("toordinal")().cast<int64_t>();
      reinterpret_cast<int32_t*>(values->mutable_data())[i] = static_cast<int32_t>(ordinal - 719163);
    }
    out->buffers = {MakeValidity(n, valid, &out->null_count), values};
    return out;
  }
  ColumnTypeError(name, std::string("cannot store Python ") + Py_TYPE(first)->tp_name +
                            " values (expected str, bytes, bool, int, float or datetime.date)");
}

/// One column from a 1-D numpy array (see from_numpy in python/quiver/__init__.py).
ArrayDataPtr NumpyColumn(const std::string& name, py::array arr, const std::string& tz) {
  if (arr.ndim() != 1) ColumnTypeError(name, "expected a 1-D array, got " + std::to_string(arr.ndim()) + " dimensions");
  arr = py::array::ensure(arr, py::array::c_style);
  const int64_t n = arr.shape(0);
  const py::dtype dt = arr.dtype();
  const char kind = dt.kind();
  const int64_t item = dt.itemsize();
  auto out = std::make_shared<ArrayData>();
  out->length = n;
  const auto* raw = static_cast<const uint8_t*>(arr.data());
  auto copy_values = [&](int64_t width) {
    auto values = Unwrap(Buffer::Allocate(ModulePool(), std::max<int64_t>(n * width, 1)));
    if (n > 0) std::memcpy(values->mutable_data(), raw, static_cast<size_t>(n * width));
    return values;
  };
  if (kind == 'i' || kind == 'u') {
    static const std::map<std::pair<char, int64_t>, DataTypePtr (*)()> types = {
        {{'i', 1}, int8},  {{'i', 2}, int16},  {{'i', 4}, int32},  {{'i', 8}, int64},
        {{'u', 1}, uint8}, {{'u', 2}, uint16}, {{'u', 4}, uint32}, {{'u', 8}, uint64}};
    out->type = types.at({kind, item})();
    out->buffers = {nullptr, copy_values(item)};
    return out;
  }
  if (kind == 'f' && (item == 4 || item == 8)) {
    // NaN is pandas' missing value: it becomes a null.
    out->type = item == 4 ? float32() : float64();
    auto valid = [&](int64_t i) {
      return item == 4 ? !std::isnan(reinterpret_cast<const float*>(raw)[i])
                       : !std::isnan(reinterpret_cast<const double*>(raw)[i]);
    };
    out->buffers = {MakeValidity(n, valid, &out->null_count), copy_values(item)};
    return out;
  }
  if (kind == 'b') {
    out->type = boolean();
    auto bits = Unwrap(Buffer::AllocateZeroed(ModulePool(), (n + 7) / 8));
    for (int64_t i = 0; i < n; ++i) {
      if (raw[i] != 0) bit_util::SetBit(bits->mutable_data(), i);
    }
    out->buffers = {nullptr, bits};
    return out;
  }
  if (kind == 'M' || kind == 'm') {
    // datetime64 / timedelta64: the unit from the dtype ("<M8[ns]"); NaT is a null.
    const std::string str = py::str(dt.attr("str"));
    const size_t lb = str.find('['), rb = str.find(']');
    const std::string unit = lb == std::string::npos ? "" : str.substr(lb + 1, rb - lb - 1);
    const auto* v = reinterpret_cast<const int64_t*>(raw);
    const int64_t nat = std::numeric_limits<int64_t>::min();
    auto valid = [&](int64_t i) { return v[i] != nat; };
    if (kind == 'M' && unit == "D") {
      out->type = date32();
      auto values = Unwrap(Buffer::AllocateZeroed(ModulePool(), std::max<int64_t>(n * 4, 1)));
      for (int64_t i = 0; i < n; ++i) {
        if (!valid(i)) continue;
        if (v[i] > std::numeric_limits<int32_t>::max() || v[i] < std::numeric_limits<int32_t>::min()) {
          ColumnTypeError(name, "date value " + std::to_string(i) + " is out of date32's range");
        }
        reinterpret_cast<int32_t*>(values->mutable_data())[i] = static_cast<int32_t>(v[i]);
      }
      out->buffers = {MakeValidity(n, valid, &out->null_count), values};
      return out;
    }
    TimeUnit u;
    if (unit == "s") {
      u = TimeUnit::kSecond;
    } else if (unit == "ms") {
      u = TimeUnit::kMilli;
    } else if (unit == "us") {
      u = TimeUnit::kMicro;
    } else if (unit == "ns") {
      u = TimeUnit::kNano;
    } else {
      ColumnTypeError(name, "unsupported unit in " + str + " (use D, s, ms, us or ns)");
    }
    out->type = kind == 'M' ? timestamp(u, tz) : duration(u);
    out->buffers = {MakeValidity(n, valid, &out->null_count), copy_values(8)};
    return out;
  }
  if (kind == 'O') return ObjectColumn(name, arr);
  ColumnTypeError(name, "unsupported numpy dtype " + std::string(py::str(static_cast<const py::handle&>(dt))));
}

}  // namespace

std::shared_ptr<Table> TableFromColumns(const std::vector<std::string>& names, const std::vector<py::array>& arrays,
                                        const std::vector<std::string>& zones) {
  if (names.size() != arrays.size() || zones.size() != arrays.size()) {
    Raise(Status::Invalid("from_columns: names, arrays and time zones differ in length"));
  }
  auto schema = std::make_shared<Schema>();
  auto batch = std::make_shared<RecordBatch>();
  int64_t rows = -1;
  for (size_t c = 0; c < arrays.size(); ++c) {
    ArrayDataPtr col = NumpyColumn(names[c], arrays[c], zones[c]);
    if (rows >= 0 && col->length != rows) {
      throw py::value_error("column '" + names[c] + "' has " + std::to_string(col->length) + " rows, expected " +
                            std::to_string(rows) + " like the first column");
    }
    rows = col->length;
    schema->fields.push_back(field(names[c], col->type, true));
    batch->columns.push_back(std::move(col));
  }
  batch->schema = schema;
  batch->num_rows = std::max<int64_t>(rows, 0);
  Check(batch->CheckShape());
  auto table = std::make_shared<Table>();
  table->schema = schema;
  if (!arrays.empty()) table->batches.push_back(std::move(batch));
  return table;
}

}  // namespace quiver::python
