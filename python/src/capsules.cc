// python/src/capsules.cc — Arrow PyCapsules (capsules.h).
#include "capsules.h"

#include "quiver/columnar/c_data.h"

namespace quiver::python {

namespace {

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

}  // namespace

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

}  // namespace quiver::python
