// quiver/formats/parquet/column_values.h — one column chunk's Arrow arrays
// turned into what the Parquet encoders consume: a definition level per
// row (OPTIONAL columns: 1 = a value, 0 = NULL) and the non-null values
// densely in their physical form (writer_schema.h ValueConversion), fixed
// width little-endian (FIXED_LEN_BYTE_ARRAY: as stored) or string views
// into the arrays (BYTE_ARRAY).
//
// Every buffer comes from the caller's pool, sized exactly (rows and
// non-null values are known before anything is converted). The views stay
// valid while `keep_alive` holds the arrays. Not thread-safe while built;
// immutable after.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/parquet/writer_schema.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

struct ColumnValues {
  int64_t num_rows = 0;
  int64_t num_values = 0;                ///< non-null values
  std::shared_ptr<Buffer> def_levels;    ///< num_rows bytes (0/1); nullptr for REQUIRED columns
  std::shared_ptr<Buffer> fixed;         ///< num_values * width_bytes (fixed-width physical types)
  std::shared_ptr<Buffer> views;         ///< num_values std::string_view (BYTE_ARRAY)
  std::vector<ArrayDataPtr> keep_alive;  ///< the arrays the views point into

  const uint8_t* fixed_data() const { return fixed ? fixed->data() : nullptr; }
  const std::string_view* view_data() const {
    return views ? reinterpret_cast<const std::string_view*>(views->data()) : nullptr;
  }
};

/// Converts `pieces` (arrays of the field's type, in row order; dictionary
/// arrays are decoded first, into buffers from `pool`) by `m`. A NULL in a
/// REQUIRED (non-nullable) field is Invalid naming the column and row.
/// Errors: Invalid (a seconds value whose milliseconds overflow, naming
/// the row), OutOfMemory from `pool`.
Result<ColumnValues> MaterializeColumn(std::span<const ArrayDataPtr> pieces, const LeafMapping& m, MemoryPool* pool);

}  // namespace quiver::parquet
