// python/src/quiver_module.cc — the `quiver._quiver` extension module
// (pybind11): Arrow tables that cross into pyarrow, polars, DuckDB and
// nanoarrow through the Arrow PyCapsule interface (zero-copy, C Data / C
// Stream Interface), IPC file reading and writing, and numpy columns for
// `Table.to_pandas()`.
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

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
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

// ---- numpy columns (for to_pandas) -----------------------------------------------

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

template <typename T>
void CopyFixed(const ArrayData& a, T* out) {
  const T* values = a.GetValues<T>(1) + a.offset;
  std::memcpy(out, values, static_cast<size_t>(a.length) * sizeof(T));
}

/// One column of the table as a numpy array: numbers in their dtype (float64
/// with NaN where an integer column has nulls, as pandas does), booleans as
/// bool (object with None when nulls), strings/binary as object (str/bytes or
/// None), dates as datetime64[D], timestamps as datetime64[unit] (NaT for
/// nulls; the time zone is applied by the Python side), anything else as
/// object arrays of the formatted value. Returns (array, timezone or None).
py::tuple ColumnToNumpy(const Table& table, int col) {
  const Field& f = *table.schema->fields[static_cast<size_t>(col)];
  const DataType& type = *f.type;
  const int64_t n = table.num_rows();
  int64_t nulls = 0;
  for (const auto& b : table.batches) nulls += b->columns[static_cast<size_t>(col)]->null_count;
  auto each = [&](auto&& fn) {
    int64_t row = 0;
    for (const auto& b : table.batches) {
      const ArrayData& a = *b->columns[static_cast<size_t>(col)];
      fn(a, row);
      row += a.length;
    }
  };

  if (const char* dtype = NumpyDtypeOf(type.id)) {
    const bool to_float = nulls > 0 && type.id != TypeId::kFloat32 && type.id != TypeId::kFloat64;
    py::array out(py::dtype(to_float ? "float64" : dtype), std::vector<py::ssize_t>{n});
    auto* base = static_cast<uint8_t*>(out.mutable_data());
    each([&](const ArrayData& a, int64_t row) {
      const int width = FixedBitWidth(type) / 8;
      if (!to_float) {
        std::memcpy(base + row * width, a.GetValues<uint8_t>(1) + a.offset * width,
                    static_cast<size_t>(a.length * width));
        if (a.null_count > 0) {  // float columns: NaN for nulls
          for (int64_t i = 0; i < a.length; ++i) {
            if (!a.IsValid(i)) {
              if (type.id == TypeId::kFloat32)
                reinterpret_cast<float*>(base)[row + i] = std::numeric_limits<float>::quiet_NaN();
              else
                reinterpret_cast<double*>(base)[row + i] = std::numeric_limits<double>::quiet_NaN();
            }
          }
        }
      } else {
        auto* d = reinterpret_cast<double*>(base);
        for (int64_t i = 0; i < a.length; ++i) {
          if (!a.IsValid(i)) {
            d[row + i] = std::numeric_limits<double>::quiet_NaN();
            continue;
          }
          const uint8_t* p = a.GetValues<uint8_t>(1) + (a.offset + i) * width;
          switch (type.id) {
            case TypeId::kInt8: d[row + i] = *reinterpret_cast<const int8_t*>(p); break;
            case TypeId::kInt16: d[row + i] = bit_util::LoadLE<int16_t>(p); break;
            case TypeId::kInt32: d[row + i] = bit_util::LoadLE<int32_t>(p); break;
            case TypeId::kInt64: d[row + i] = static_cast<double>(bit_util::LoadLE<int64_t>(p)); break;
            case TypeId::kUInt8: d[row + i] = *p; break;
            case TypeId::kUInt16: d[row + i] = bit_util::LoadLE<uint16_t>(p); break;
            case TypeId::kUInt32: d[row + i] = bit_util::LoadLE<uint32_t>(p); break;
            default: d[row + i] = static_cast<double>(bit_util::LoadLE<uint64_t>(p)); break;
          }
        }
      }
    });
    return py::make_tuple(out, py::none());
  }
  if (type.id == TypeId::kBool && nulls == 0) {
    py::array out(py::dtype("bool"), std::vector<py::ssize_t>{n});
    auto* base = static_cast<bool*>(out.mutable_data());
    each([&](const ArrayData& a, int64_t row) {
      for (int64_t i = 0; i < a.length; ++i) base[row + i] = bit_util::GetBit(a.GetValues<uint8_t>(1), a.offset + i);
    });
    return py::make_tuple(out, py::none());
  }
  if (type.id == TypeId::kDate32 || type.id == TypeId::kTimestamp || type.id == TypeId::kDate64) {
    std::string unit = "D";
    if (type.id == TypeId::kDate64) unit = "ms";
    if (type.id == TypeId::kTimestamp) unit = std::string(TimeUnitName(type.unit));
    py::array out(py::dtype("datetime64[" + unit + "]"), std::vector<py::ssize_t>{n});
    auto* base = static_cast<int64_t*>(out.mutable_data());
    const int64_t nat = std::numeric_limits<int64_t>::min();
    each([&](const ArrayData& a, int64_t row) {
      for (int64_t i = 0; i < a.length; ++i) {
        if (!a.IsValid(i)) {
          base[row + i] = nat;
        } else if (type.id == TypeId::kDate32) {
          base[row + i] = a.GetValues<int32_t>(1)[a.offset + i];
        } else {
          base[row + i] = a.GetValues<int64_t>(1)[a.offset + i];
        }
      }
    });
    py::object tz =
        type.id == TypeId::kTimestamp && !type.timezone.empty() ? py::object(py::str(type.timezone)) : py::none();
    return py::make_tuple(out, tz);
  }
  // Object columns: str / bytes / bool / None, or the formatted value.
  py::list values;
  std::string text;
  const bool is_string = type.id == TypeId::kUtf8 || type.id == TypeId::kLargeUtf8 || type.id == TypeId::kUtf8View ||
                         (type.id == TypeId::kDictionary && type.value_type &&
                          (type.value_type->id == TypeId::kUtf8 || type.value_type->id == TypeId::kLargeUtf8));
  const bool is_binary =
      type.id == TypeId::kBinary || type.id == TypeId::kLargeBinary || type.id == TypeId::kBinaryView;
  each([&](const ArrayData& a, int64_t) {
    for (int64_t i = 0; i < a.length; ++i) {
      if (!a.IsValid(i) && type.id != TypeId::kDictionary) {
        values.append(py::none());
        continue;
      }
      if (type.id == TypeId::kBool) {
        values.append(py::bool_(bit_util::GetBit(a.GetValues<uint8_t>(1), a.offset + i)));
        continue;
      }
      if (is_binary) {
        // The value bytes, from the offsets (views: through FormatValue's hex is not wanted).
        if (type.id == TypeId::kBinary) {
          const int32_t* o = a.GetValues<int32_t>(1) + a.offset + i;
          values.append(py::bytes(reinterpret_cast<const char*>(a.GetValues<uint8_t>(2) + o[0]),
                                  static_cast<size_t>(o[1] - o[0])));
          continue;
        }
        if (type.id == TypeId::kLargeBinary) {
          const int64_t* o = a.GetValues<int64_t>(1) + a.offset + i;
          values.append(py::bytes(reinterpret_cast<const char*>(a.GetValues<uint8_t>(2) + o[0]),
                                  static_cast<size_t>(o[1] - o[0])));
          continue;
        }
      }
      text.clear();
      FormatValue(a, i, ValueFormat::kText, &text);
      if (type.id == TypeId::kDictionary && text == "null" && !is_string) {
        values.append(py::none());
      } else if (type.id == TypeId::kDictionary && is_string && !a.IsValid(i)) {
        values.append(py::none());
      } else {
        values.append(py::str(text));
      }
    }
  });
  py::array out = py::module_::import("numpy").attr("array")(values, py::arg("dtype") = "object");
  return py::make_tuple(out, py::none());
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
      .def("_column_numpy", &ColumnToNumpy, py::arg("index"),
           "(numpy array, time zone or None) for one column; used by to_pandas().")
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
  m.def("from_arrow", &TableFromArrow, py::arg("obj"),
        "A quiver.Table from any object implementing __arrow_c_stream__ (zero-copy).");
  m.def(
      "pool_held_bytes", []() { return ModulePool()->held_bytes(); },
      "Bytes the module's pool holds now (decoded buffers not mapped from files).");
}
