// python/src/quiver_module.cc — the `quiver._quiver` extension module
// (pybind11): Arrow tables that cross into pyarrow, polars, DuckDB and
// nanoarrow through the Arrow PyCapsule interface (zero-copy, C Data / C
// Stream Interface), IPC file reading and writing, and numpy columns for
// `Table.to_pandas()` / `quiver.from_pandas()`.
//
// Source: the Arrow "PyCapsule Interface" specification (capsule names
// "arrow_schema", "arrow_array_stream"; the capsule destructor releases a
// struct that no consumer moved out, then frees it).
//
// The GIL is released around file I/O, decoding and compression. Errors are
// raised as quiver.ArrowError (a ValueError subclass) carrying the Status text.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/c_data.h"
#include "quiver/columnar/value_format.h"
#include "quiver/fetch/fetch_result.h"
#include "quiver/fetch/protocol_client.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/memory/memory_pool.h"

namespace py = pybind11;

namespace quiver::python {
namespace {

py::object& ArrowErrorType() {
  static py::object type;
  return type;
}

[[noreturn]] void Raise(const Status& st) {
  PyErr_SetString(ArrowErrorType().ptr(), st.ToString().c_str());
  throw py::error_already_set();
}

void Check(const Status& st) {
  if (!st.ok()) Raise(st);
}

template <typename T>
T Unwrap(Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(r).value();
}

/// The process-wide pool of the Python module (accounting only; no limit).
MemoryPool* ModulePool() {
  static std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({.name = "python"});
  return pool.get();
}

/// An Arrow table held by quiver: a schema and record batches.
struct Table {
  SchemaPtr schema;
  std::vector<RecordBatchPtr> batches;

  int64_t num_rows() const {
    int64_t n = 0;
    for (const auto& b : batches) n += b->num_rows;
    return n;
  }
};

// ---- capsules ---------------------------------------------------------------

void SchemaCapsuleDestructor(PyObject* capsule) {
  auto* s = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule, "arrow_schema"));
  if (s == nullptr) {
    PyErr_Clear();
    return;
  }
  if (s->release != nullptr) s->release(s);
  delete s;
}

void StreamCapsuleDestructor(PyObject* capsule) {
  auto* s = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule, "arrow_array_stream"));
  if (s == nullptr) {
    PyErr_Clear();
    return;
  }
  if (s->release != nullptr) s->release(s);
  delete s;
}

py::capsule SchemaCapsule(const Schema& schema) {
  auto* c = new ArrowSchema{};
  c->release = nullptr;
  Status st = ExportSchema(schema, c);
  if (!st.ok()) {
    delete c;
    Raise(st);
  }
  return py::reinterpret_steal<py::capsule>(PyCapsule_New(c, "arrow_schema", &SchemaCapsuleDestructor));
}

py::capsule StreamCapsule(std::shared_ptr<const Table> table) {
  auto* c = new ArrowArrayStream{};
  c->release = nullptr;
  Status st = ExportRecordBatchStream(std::make_unique<BatchVectorStream>(table->schema, table->batches), c);
  if (!st.ok()) {
    delete c;
    Raise(st);
  }
  return py::reinterpret_steal<py::capsule>(PyCapsule_New(c, "arrow_array_stream", &StreamCapsuleDestructor));
}

/// A Table from any object with __arrow_c_stream__ (pyarrow, polars, DuckDB,
/// nanoarrow, quiver itself); the batches view the producer's memory.
std::shared_ptr<Table> TableFromArrow(const py::object& obj) {
  if (!py::hasattr(obj, "__arrow_c_stream__")) {
    throw py::type_error("expected an object implementing the Arrow PyCapsule interface (__arrow_c_stream__), got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  py::object capsule = obj.attr("__arrow_c_stream__")();
  auto* c = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array_stream"));
  if (c == nullptr) throw py::error_already_set();
  auto table = std::make_shared<Table>();
  {
    py::gil_scoped_release nogil;
    auto stream = ImportRecordBatchStream(c);  // moves the struct out of the capsule
    if (!stream.ok()) {
      py::gil_scoped_acquire gil;
      Raise(stream.status());
    }
    table->schema = (*stream)->schema();
    while (true) {
      auto next = (*stream)->Next();
      if (!next.ok()) {
        py::gil_scoped_acquire gil;
        Raise(next.status());
      }
      if (*next == nullptr) break;
      table->batches.push_back(std::move(*next));
    }
  }
  return table;
}

// ---- IPC ----------------------------------------------------------------------

std::shared_ptr<Table> ReadIpc(const std::string& path) {
  auto table = std::make_shared<Table>();
  Status st;
  {
    py::gil_scoped_release nogil;
    st = [&]() -> Status {
      ipc::ReadOptions ro;
      ro.pool = ModulePool();
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(path, ro));
      table->schema = reader->schema();
      QUIVER_ASSIGN_OR_RETURN(table->batches, ipc::ReadAllBatches(reader.get()));
      return Status::OK();
    }();
  }
  Check(st);
  return table;
}

Result<CompressionType> CodecNamed(const std::string& name) {
  if (name == "none" || name.empty()) return CompressionType::kNone;
  if (name == "lz4" || name == "lz4_frame") return CompressionType::kLz4Frame;
  if (name == "zstd") return CompressionType::kZstd;
  return Status::Invalid("unknown compression '" + name + "' (expected none, lz4 or zstd)");
}

void WriteIpc(const py::object& obj, const std::string& path, const std::string& compression,
              const std::string& format) {
  std::shared_ptr<Table> table;
  try {
    table = obj.cast<std::shared_ptr<Table>>();
  } catch (const py::cast_error&) {
    table = TableFromArrow(obj);
  }
  const CompressionType codec = Unwrap(CodecNamed(compression));
  if (format != "file" && format != "stream") {
    Raise(Status::Invalid("unknown format '" + format + "' (expected file or stream)"));
  }
  Status st;
  {
    py::gil_scoped_release nogil;
    st = [&]() -> Status {
      // Written beside the target and renamed on success: a failed write
      // leaves nothing that reads as a valid file.
      const std::string tmp = path + ".quiver-tmp";
      Status s = [&]() -> Status {
        QUIVER_ASSIGN_OR_RETURN(auto out, ipc::OpenOutputStream(tmp));
        ipc::WriteOptions wo;
        wo.pool = ModulePool();
        wo.compression = codec;
        QUIVER_ASSIGN_OR_RETURN(
            auto writer,
            ipc::RecordBatchWriter::Make(out.get(), table->schema,
                                         format == "file" ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream, wo));
        for (const auto& b : table->batches) QUIVER_RETURN_NOT_OK(writer->WriteBatch(*b));
        QUIVER_RETURN_NOT_OK(writer->Close());
        return out->Flush();
      }();
      if (!s.ok()) {
        std::remove(tmp.c_str());
        return s;
      }
      if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        return Status::IOError("rename " + tmp + " -> " + path + ": " + std::strerror(errno));
      }
      return Status::OK();
    }();
  }
  Check(st);
}

// ---- Python values (DB-API rows) -------------------------------------------------

struct PyTypes {
  py::object date, datetime, timedelta, timezone, decimal, zoneinfo;
  static PyTypes& Get() {
    static PyTypes* t = [] {
      auto* x = new PyTypes();
      py::module_ dt = py::module_::import("datetime");
      x->date = dt.attr("date");
      x->datetime = dt.attr("datetime");
      x->timedelta = dt.attr("timedelta");
      x->timezone = dt.attr("timezone");
      x->decimal = py::module_::import("decimal").attr("Decimal");
      x->zoneinfo = py::module_::import("zoneinfo").attr("ZoneInfo");
      return x;
    }();
    return *t;
  }
};

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

// ---- pandas (Table.to_pandas) -----------------------------------------------------
//
// The frame is built by position from one 2-D numpy array per dtype (the
// blocks pandas keeps), each filled column by column in one pass, so that
// no column is copied twice (pandas would stack separate arrays into blocks)
// and repeated names cannot mix columns up.

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

/// The frame's blocks: ([(2-D array, [column positions])], [(position, time
/// zone)]). Row j of a block's array is the column at positions[j].
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

// ---- from_pandas / from_numpy: numpy columns -> a Table ------------------------------

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

/// A Table of one batch from parallel lists of names, 1-D numpy arrays of
/// equal length and time zones ("" for none). Values are copied into the
/// module's pool.
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

/// PEP 249 description fields of one column: (name, type name as the
/// Databricks connector reports it, precision, scale, nullable).
py::tuple FieldDescription(const Field& f) {
  const DataType& t = f.type->id == TypeId::kDictionary ? *f.type->value_type : *f.type;
  std::string name;
  py::object precision = py::none(), scale = py::none();
  switch (t.id) {
    case TypeId::kBool: name = "boolean"; break;
    case TypeId::kInt8: name = "tinyint"; break;
    case TypeId::kInt16:
    case TypeId::kUInt8: name = "smallint"; break;
    case TypeId::kInt32:
    case TypeId::kUInt16: name = "int"; break;
    case TypeId::kInt64:
    case TypeId::kUInt32:
    case TypeId::kUInt64: name = "bigint"; break;
    case TypeId::kFloat16:
    case TypeId::kFloat32: name = "float"; break;
    case TypeId::kFloat64: name = "double"; break;
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kUtf8View: name = "string"; break;
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kBinaryView:
    case TypeId::kFixedSizeBinary: name = "binary"; break;
    case TypeId::kDate32:
    case TypeId::kDate64: name = "date"; break;
    case TypeId::kTimestamp: name = "timestamp"; break;
    case TypeId::kDecimal:
      name = "decimal";
      precision = py::int_(t.precision);
      scale = py::int_(t.scale);
      break;
    case TypeId::kList:
    case TypeId::kLargeList:
    case TypeId::kFixedSizeList:
    case TypeId::kListView:
    case TypeId::kLargeListView: name = "array"; break;
    case TypeId::kMap: name = "map"; break;
    case TypeId::kStruct: name = "struct"; break;
    case TypeId::kNull: name = "void"; break;
    default: name = "string"; break;
  }
  return py::make_tuple(f.name, name, precision, scale, f.nullable);
}

// ---- DB-API: connections and statement results ------------------------------------

struct Connection {
  std::shared_ptr<fetch::ProtocolClient> client;
  std::shared_ptr<MemoryPool> pool;
  fetch::FetchOptions options;
  std::mutex mu;  // one RPC sequence at a time per session
};

/// The result of one statement, fetched as the caller pulls.
struct PyStatement {
  std::shared_ptr<Connection> connection;
  std::unique_ptr<fetch::FetchResult> result;
  RecordBatchPtr pending;
  int64_t pending_offset = 0;
  bool done = false;
  int64_t rows_returned = 0;

  /// Up to `max_rows` rows (all remaining when < 0) as a Table. GIL released.
  std::shared_ptr<Table> Fetch(int64_t max_rows) {
    CheckOpen();
    auto out = std::make_shared<Table>();
    out->schema = result->schema();
    Status st;
    {
      py::gil_scoped_release nogil;
      st = [&]() -> Status {
        int64_t want = max_rows;
        while (!done && (want < 0 || want > 0)) {
          if (!pending || pending_offset >= pending->num_rows) {
            QUIVER_ASSIGN_OR_RETURN(pending, result->Next());
            pending_offset = 0;
            if (!pending) {
              done = true;
              break;
            }
            continue;
          }
          const int64_t available = pending->num_rows - pending_offset;
          const int64_t take = want < 0 ? available : std::min(available, want);
          QUIVER_ASSIGN_OR_RETURN(auto piece, SliceBatch(pending, pending_offset, take));
          out->batches.push_back(std::move(piece));
          pending_offset += take;
          if (want > 0) want -= take;
        }
        return Status::OK();
      }();
    }
    Check(st);
    rows_returned += out->num_rows();
    return out;
  }

  void CheckOpen() const {
    if (!result) Raise(Status::Invalid("the statement's result is closed"));
  }

  py::dict Stats() const {
    CheckOpen();
    py::dict d;
    d["rows_delivered"] = result->rows_delivered();
    d["rows_dropped"] = result->rows_dropped();
    d["chunks_consumed"] = result->chunks_consumed();
    if (const fetch::DownloadStats* s = result->download_stats()) {
      d["bytes_downloaded"] = s->bytes_downloaded.load();
      d["chunks_done"] = s->chunks_done.load();
    }
    d["pool_held_bytes"] = connection->pool->held_bytes();
    d["pool_peak_bytes"] = connection->pool->peak_bytes();
    return d;
  }
};

std::shared_ptr<Connection> Connect(const std::string& url, const std::string& token, const std::string& ca_cert,
                                    bool insecure, int64_t window_bytes, int parallel, const std::string& policy,
                                    int64_t connect_timeout_ms) {
  auto c = std::make_shared<Connection>();
  fetch::ConnectionOptions co;
  co.server_url = url;
  co.token = token;
  co.ca_cert_path = ca_cert;
  co.insecure = insecure;
  co.connect_timeout_ms = connect_timeout_ms;
  c->options.download.policy = Unwrap(fetch::ParseChunkPolicy(policy));
  if (window_bytes <= 0) Raise(Status::Invalid("window_bytes must be > 0, got " + std::to_string(window_bytes)));
  if (parallel < 1) Raise(Status::Invalid("parallel must be >= 1, got " + std::to_string(parallel)));
  c->options.download.window_bytes = window_bytes;
  c->options.download.parallel = parallel;
  c->pool = std::static_pointer_cast<MemoryPool>(ModulePool()->MakeChild({.name = "connection"}));
  c->options.download.pool = c->pool.get();
  Result<std::unique_ptr<fetch::ProtocolClient>> client = Status::OK();
  {
    py::gil_scoped_release nogil;
    client = fetch::ProtocolClient::Connect(co);
  }
  c->client = Unwrap(std::move(client));
  return c;
}

std::shared_ptr<PyStatement> Execute(const std::shared_ptr<Connection>& c, const std::string& sql) {
  if (!c->client) Raise(Status::Invalid("the connection is closed"));
  auto out = std::make_shared<PyStatement>();
  out->connection = c;
  Status st;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(c->mu);
    st = [&]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(auto statement, c->client->Execute(sql, c->options.direct_max_rows));
      QUIVER_ASSIGN_OR_RETURN(out->result, fetch::FetchResult::Open(c->client, std::move(statement), c->options));
      return Status::OK();
    }();
  }
  Check(st);
  return out;
}
}  // namespace
}  // namespace quiver::python

PYBIND11_MODULE(_quiver, m) {
  using namespace quiver;
  using namespace quiver::python;
  m.doc() = "quiver native module: Arrow tables (PyCapsule interface), IPC read/write";

  ArrowErrorType() = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "quiver.ArrowError", "A quiver error: invalid Arrow data, I/O, out of memory.", PyExc_ValueError, nullptr));
  m.attr("ArrowError") = ArrowErrorType();

  py::class_<Table, std::shared_ptr<Table>>(m, "Table", R"doc(
An Arrow table held by quiver: a schema and record batches (immutable).

Implements the Arrow PyCapsule interface, so pyarrow.table(t),
polars.from_arrow(t), duckdb and nanoarrow take it without copying buffers.
)doc")
      .def_property_readonly("num_rows", &Table::num_rows, "Total rows (int).")
      .def_property_readonly("num_columns", [](const Table& t) { return t.schema->num_fields(); })
      .def_property_readonly("num_batches", [](const Table& t) { return t.batches.size(); })
      .def_property_readonly("column_names",
                             [](const Table& t) {
                               std::vector<std::string> names;
                               for (const auto& f : t.schema->fields) names.push_back(f->name);
                               return names;
                             })
      .def_property_readonly(
          "schema_text", [](const Table& t) { return t.schema->ToString(); }, "The schema as text, one field per line.")
      .def(
          "__arrow_c_schema__", [](const Table& t) { return SchemaCapsule(*t.schema); },
          "PyCapsule 'arrow_schema' holding the schema (C Data Interface).")
      .def(
          "__arrow_c_stream__",
          [](std::shared_ptr<Table> t, py::object requested_schema) {
            if (!requested_schema.is_none()) {
              // Casting is not offered: the stream always has the table's own schema.
            }
            return StreamCapsule(std::move(t));
          },
          py::arg("requested_schema") = py::none(),
          "PyCapsule 'arrow_array_stream' over the batches (C Stream Interface, zero-copy).")
      .def("_pandas_blocks", &PandasBlocks,
           "([(2-D numpy array, [column positions])], [(position, time zone)]): the blocks of to_pandas().")
      .def(
          "to_pylist", [](const Table& t) { return TableToPylist(t); },
          "Rows as a list of tuples of Python values (int, float, str, bytes, bool, "
          "datetime.date, datetime.datetime, decimal.Decimal; None for nulls).")
      .def("__len__", &Table::num_rows)
      .def("__repr__", [](const Table& t) {
        return "quiver.Table(" + std::to_string(t.num_rows()) + " rows, " + std::to_string(t.batches.size()) +
               " batches)\n" + t.schema->ToString();
      });

  py::class_<Connection, std::shared_ptr<Connection>>(m, "_Connection")
      .def("close",
           [](Connection& c) {
             py::gil_scoped_release nogil;
             std::lock_guard<std::mutex> lock(c.mu);
             if (c.client) {
               (void)c.client->Close();
               c.client.reset();
             }
           })
      .def_property_readonly("closed", [](const Connection& c) { return !c.client; })
      .def_property_readonly("pool_held_bytes", [](const Connection& c) { return c.pool->held_bytes(); })
      .def_property_readonly("pool_peak_bytes", [](const Connection& c) { return c.pool->peak_bytes(); });
  py::class_<PyStatement, std::shared_ptr<PyStatement>>(m, "_StatementResult")
      .def("fetch", &PyStatement::Fetch, py::arg("max_rows"),
           "Up to max_rows rows (all remaining when < 0) as a Table; GIL released while fetching.")
      .def("description",
           [](const PyStatement& r) {
             r.CheckOpen();
             py::list out;
             for (const auto& f : r.result->schema()->fields) out.append(FieldDescription(*f));
             return out;
           })
      .def_property_readonly("done", [](const PyStatement& r) { return r.done; })
      .def_property_readonly("rows_returned", [](const PyStatement& r) { return r.rows_returned; })
      .def("cancel",
           [](PyStatement& r) {
             if (r.result) r.result->Cancel();
           })
      .def("stats", &PyStatement::Stats)
      .def("close", [](PyStatement& r) {
        py::gil_scoped_release nogil;
        r.pending.reset();
        r.result.reset();
      });
  m.def("_connect", &Connect, py::arg("url"), py::arg("token"), py::arg("ca_cert"), py::arg("insecure"),
        py::arg("window_bytes"), py::arg("parallel"), py::arg("policy"), py::arg("connect_timeout_ms"));
  m.def("_execute", &Execute, py::arg("connection"), py::arg("sql"));
  m.def("_table_to_pylist", [](const Table& t) { return TableToPylist(t); });
  m.def("read_ipc", &ReadIpc, py::arg("path"),
        "Reads an Arrow IPC file or stream (format detected; memory-mapped, zero-copy).");
  m.def("write_ipc", &WriteIpc, py::arg("obj"), py::arg("path"), py::arg("compression") = "none",
        py::arg("format") = "file",
        "Writes a quiver.Table or any __arrow_c_stream__ object as an Arrow IPC file/stream.");
  m.def("_from_columns", &TableFromColumns, py::arg("names"), py::arg("arrays"), py::arg("time_zones"),
        "A Table of one batch from names, 1-D numpy arrays and time zones (values copied).");
  m.def("from_arrow", &TableFromArrow, py::arg("obj"),
        "A quiver.Table from any object implementing __arrow_c_stream__ (zero-copy).");
  m.def(
      "pool_held_bytes", []() { return ModulePool()->held_bytes(); },
      "Bytes the module's pool holds now (decoded buffers not mapped from files).");
}
