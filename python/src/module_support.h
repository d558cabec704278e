// python/src/module_support.h — what every part of the `quiver._quiver`
// extension module shares: the quiver.ArrowError type and the helpers that
// raise it from a Status, the module's memory pool, and Table (an Arrow
// table held by quiver). Internal to the module.
//
// Thread safety: call with the GIL held (Raise, Check and Unwrap set a
// Python error); ModulePool is thread-safe.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "quiver/columnar/array_data.h"
#include "quiver/memory/memory_pool.h"

namespace py = pybind11;

namespace quiver::python {

/// The quiver.ArrowError exception type (set once when the module loads).
inline py::object& ArrowErrorType() {
  static py::object type;
  return type;
}

/// Raises quiver.ArrowError with the Status text.
[[noreturn]] inline void Raise(const Status& st) {
  PyErr_SetString(ArrowErrorType().ptr(), st.ToString().c_str());
  throw py::error_already_set();
}

/// Raises unless `st` is OK.
inline void Check(const Status& st) {
  if (!st.ok()) Raise(st);
}

template <typename T>
/// The value of `r`, or raises its error.
T Unwrap(Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(r).value();
}

/// The process-wide pool of the Python module (accounting only; no limit).
inline MemoryPool* ModulePool() {
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

}  // namespace quiver::python
