// quiver/formats/parquet/nested_assembly.h — a nested field's Arrow array
// (list, struct, map, any depth) rebuilt from the repetition and
// definition levels of its leaf columns (parquet-format README "Nested
// Encoding", LogicalTypes.md "Nested Types"; the Dremel paper's record
// assembly, done per Arrow array rather than per record).
//
// Each Arrow array of the field's type takes its slots from the levels of
// the first leaf below it: a level entry whose definition level is below
// the level at which the innermost enclosing list has an element belongs
// to no slot (an empty or NULL list above), one whose repetition level is
// deeper than the array's list nesting continues the slot before it, any
// other starts a slot, which is non-NULL when the definition level reaches
// the array's own. A list also counts its elements: an entry at its own
// repetition level adds one to the current slot. The lengths the leaves
// give each array must agree (Invalid otherwise), so a file whose leaf
// columns disagree is an error, never an out-of-bounds read.
//
// Buffers (validity bitmaps, int32 offsets, leaf values compacted where an
// empty list left a slot-less entry) come from the caller's pool and are
// sized by entry counts already decoded (never by a count the file merely
// claims). Nesting is bounded by the schema (schema.h: at most 64 levels).
// Pure over its inputs; thread-safe for distinct inputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/parquet/column_reader.h"
#include "quiver/formats/parquet/schema.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

/// True when top-level field `field` of `schema` needs assembly (a group,
/// a repeated leaf, or a leaf below the top level); false for a flat
/// required or optional primitive (ReadFlatColumnChunk).
bool IsNestedField(const ParquetSchema& schema, int field);

/// The Arrow type of each leaf column of top-level field `field` (in
/// column order), as its place in the field's type gives it: the `type`
/// ReadLeafColumnChunk decodes the leaf into. Errors: Invalid when the
/// schema tree and the field's type disagree.
Result<std::vector<DataTypePtr>> NestedLeafTypes(const ParquetSchema& schema, int field);

/// The array of top-level field `field` of `schema` (of type
/// schema.fields[field]->type) with `num_rows` rows, from `leaves`: the
/// field's leaf column chunks (ReadLeafColumnChunk), in column order,
/// schema.num_leaves[field] of them. Errors: Invalid (levels that do not
/// nest: a repetition level continuing a list that never started, leaves
/// whose slot counts disagree, over 2^31 - 1 list elements in one row
/// group), OutOfMemory.
Result<ArrayDataPtr> AssembleNestedField(const ParquetSchema& schema, int field, std::span<const LeafLevels> leaves,
                                         int64_t num_rows, MemoryPool* pool);

}  // namespace quiver::parquet
