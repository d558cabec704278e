// python/src/to_pandas.h — Table.to_pandas(): one 2-D numpy
// array per dtype (the blocks pandas keeps), each column written once.
#pragma once

#include "module_support.h"

namespace quiver::python {

/// The frame's blocks: ([(2-D array, [column positions])], [(position, time
/// zone)]). Row j of a block's array is the column at positions[j].
py::tuple PandasBlocks(const Table& table);

}  // namespace quiver::python
