// python/src/py_values.h — Arrow values as Python objects (DB-API
// rows, pandas object columns): int, float, bool, str, bytes, Decimal,
// date, datetime (with its zone), timedelta, lists and dicts.
#pragma once

#include "module_support.h"

namespace quiver::python {

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

int64_t IntegerAt(const ArrayData& a, int64_t i);

py::object PyValue(const ArrayData& a, int64_t i);

py::list TableToPylist(const Table& table);

}  // namespace quiver::python
