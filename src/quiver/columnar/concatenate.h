// quiver/columnar/concatenate.h — appends arrays of one type into a new
// array (used for IPC dictionary deltas; cf. Arrow C++ Concatenate).
#pragma once

#include <vector>

#include "quiver/columnar/array_data.h"

namespace quiver {

/// Concatenates `arrays` (all of the same type, at least one) into one new
/// array whose buffers come from `pool`. Supported: null, bool, fixed-width
/// types (numbers, decimals, temporal, intervals, fixed_size_binary),
/// binary/utf8 and their large variants, list, large_list, map,
/// fixed_size_list and struct (recursively), dictionary arrays sharing one
/// dictionary. Others: NotImplemented. Invalid for mismatched types or an
/// offset overflow (32-bit offsets past INT32_MAX). Thread safety: pure.
Result<ArrayDataPtr> ConcatenateArrays(const std::vector<ArrayDataPtr>& arrays, MemoryPool* pool);

}  // namespace quiver
