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

#include "capsules.h"
#include "dbapi.h"
#include "from_numpy.h"
#include "ipc_files.h"
#include "module_support.h"
#include "py_values.h"
#include "to_pandas.h"

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
