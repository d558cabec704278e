// python/src/capsules.h — Arrow PyCapsules (the Arrow PyCapsule
// Interface: "arrow_schema", "arrow_array_stream") of a Table, and a Table
// from any object that exports them.
#pragma once

#include "module_support.h"

namespace quiver::python {

py::capsule SchemaCapsule(const Schema& schema);

py::capsule StreamCapsule(std::shared_ptr<const Table> table);

/// A Table from any object with __arrow_c_stream__ (pyarrow, polars, DuckDB,
/// nanoarrow, quiver itself); the batches view the producer's memory.
std::shared_ptr<Table> TableFromArrow(const py::object& obj);

}  // namespace quiver::python
