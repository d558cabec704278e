// python/src/from_numpy.h — from_pandas / from_numpy: numpy
// columns (numbers, datetime64, object arrays of str, bytes, bool, int,
// float, Decimal, date, datetime) into a Table.
#pragma once

#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "module_support.h"

namespace quiver::python {

/// A Table of one batch from parallel lists of names, 1-D numpy arrays of
/// equal length and time zones ("" for none). Values are copied into the
/// module's pool.
std::shared_ptr<Table> TableFromColumns(const std::vector<std::string>& names, const std::vector<py::array>& arrays,
                                        const std::vector<std::string>& zones);

}  // namespace quiver::python
