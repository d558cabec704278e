// python/src/py_values.cc — Arrow values as Python objects (py_values.h).
#include "py_values.h"

#include "quiver/base/bit_util.h"
#include "quiver/columnar/value_format.h"

namespace quiver::python {

int64_t IntegerAt(const ArrayData& a, int64_t i) {
  const uint8_t* p = a.GetValues<uint8_t>(1);
  const int64_t k = a.offset + i;
  switch (a.type->id) {
    case TypeId::kInt8: return reinterpret_cast<const int8_t*>(p)[k];
    case TypeId::kUInt8: return p[k];
    case TypeId::kInt16: return bit_util::LoadLE<int16_t>(p + 2 * k);
    case TypeId::kUInt16: return bit_util::LoadLE<uint16_t>(p + 2 * k);
    case TypeId::kInt32: return bit_util::LoadLE<int32_t>(p + 4 * k);
    case TypeId::kUInt32: return bit_util::LoadLE<uint32_t>(p + 4 * k);
    default: return bit_util::LoadLE<int64_t>(p + 8 * k);
  }
}

py::object PyValue(const ArrayData& a, int64_t i) {
  const DataType& t = *a.type;
  if (t.id == TypeId::kDictionary) {
    if (!a.IsValid(i)) return py::none();
    ArrayData indices = a;
    indices.type = t.index_type;
    const int64_t idx = IntegerAt(indices, i);
    if (!a.dictionary || idx < 0 || idx >= a.dictionary->length) return py::none();
    return PyValue(*a.dictionary, idx);
  }
  if (!a.IsValid(i)) return py::none();
  const int64_t k = a.offset + i;
  switch (t.id) {
    case TypeId::kNull: return py::none();
    case TypeId::kBool: return py::bool_(bit_util::GetBit(a.GetValues<uint8_t>(1), k));
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32: return py::int_(IntegerAt(a, i));
    case TypeId::kUInt64:
      return py::reinterpret_steal<py::object>(
          PyLong_FromUnsignedLongLong(bit_util::LoadLE<uint64_t>(a.GetValues<uint8_t>(1) + 8 * k)));
    case TypeId::kFloat32: return py::float_(a.GetValues<float>(1)[k]);
    case TypeId::kFloat64: return py::float_(a.GetValues<double>(1)[k]);
    case TypeId::kBinary: {
      const int32_t* o = a.GetValues<int32_t>(1) + k;
      return py::bytes(reinterpret_cast<const char*>(a.GetValues<uint8_t>(2) + o[0]), static_cast<size_t>(o[1] - o[0]));
    }
    case TypeId::kLargeBinary: {
      const int64_t* o = a.GetValues<int64_t>(1) + k;
      return py::bytes(reinterpret_cast<const char*>(a.GetValues<uint8_t>(2) + o[0]), static_cast<size_t>(o[1] - o[0]));
    }
    case TypeId::kDate32: {
      const int32_t days = a.GetValues<int32_t>(1)[k];
      return PyTypes::Get().date.attr("fromordinal")(719163 + static_cast<int64_t>(days));
    }
    case TypeId::kDate64: {
      const int64_t ms = a.GetValues<int64_t>(1)[k];
      const int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
      return PyTypes::Get().date.attr("fromordinal")(719163 + days);
    }
    case TypeId::kTimestamp: {
      const int64_t v = a.GetValues<int64_t>(1)[k];
      int64_t micros = v;
      switch (t.unit) {
        case TimeUnit::kSecond: micros = v * 1000000; break;
        case TimeUnit::kMilli: micros = v * 1000; break;
        case TimeUnit::kMicro: break;
        case TimeUnit::kNano: micros = v / 1000; break;
      }
      auto& T = PyTypes::Get();
      py::object utc = T.timezone.attr("utc");
      py::object epoch = T.datetime(1970, 1, 1, py::arg("tzinfo") = utc);
      py::object value = epoch + T.timedelta(py::arg("microseconds") = micros);
      if (t.timezone.empty()) return value.attr("replace")(py::arg("tzinfo") = py::none());
      if (t.timezone == "UTC" || t.timezone == "Z" || t.timezone == "+00:00") return value;
      if (t.timezone[0] == '+' || t.timezone[0] == '-') {
        const int sign = t.timezone[0] == '-' ? -1 : 1;
        const int hh = std::atoi(t.timezone.substr(1, 2).c_str());
        const int mm = t.timezone.size() >= 6 ? std::atoi(t.timezone.substr(4, 2).c_str()) : 0;
        return value.attr("astimezone")(T.timezone(T.timedelta(py::arg("minutes") = sign * (hh * 60 + mm))));
      }
      try {
        return value.attr("astimezone")(T.zoneinfo(t.timezone));
      } catch (const py::error_already_set&) {
        return value;
      }
    }
    default: break;
  }
  std::string text;
  FormatValue(a, i, ValueFormat::kText, &text);
  if (t.id == TypeId::kDecimal) return PyTypes::Get().decimal(text);
  return py::str(text);
}

py::list TableToPylist(const Table& table) {
  py::list rows;
  const size_t ncols = table.schema->fields.size();
  for (const auto& b : table.batches) {
    for (int64_t r = 0; r < b->num_rows; ++r) {
      py::tuple row(ncols);
      for (size_t c = 0; c < ncols; ++c) row[c] = PyValue(*b->columns[c], r);
      rows.append(std::move(row));
    }
  }
  return rows;
}

}  // namespace quiver::python
