// quiver/columnar/dictionary.h — decoding dictionary-encoded arrays and
// record batches to their value type (Arrow C++: compute::Cast of a
// dictionary to its value type; DuckDB decodes dictionary vectors the same
// way before hashing). Used where an operator wants plain values: the hash
// join's keys and payload, the SQL scan.
//
// Decoded arrays come from Take (take.h): value types must be gatherable
// (IsGatherable), buffers are new and come from the caller's pool.
//
// Thread safety: pure functions over immutable inputs; safe from any thread
// (the pool must be thread-safe if shared).
#pragma once

#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/memory/memory_pool.h"

namespace quiver {

/// The values of dictionary-typed `array` (dictionary[index] per row, null
/// where the index is null) as a new array of the dictionary's value type
/// with array.length rows; the array's offset is applied.
/// `what` names the array in errors (e.g. "column 'x'").
/// Errors: Invalid "<what> is not dictionary-encoded" for another type;
/// Invalid "<what> has no dictionary"; Invalid "<what>: index <i> at row
/// <r> is outside its dictionary of <n>" for an index out of range;
/// NotImplemented (Take) for a value type Take cannot gather; OutOfMemory.
Result<ArrayDataPtr> DecodeDictionary(const ArrayData& array, MemoryPool* pool, const std::string& what);

/// The dictionary index of each row of dictionary-typed `array` (-1 where
/// the index is null), checked against the dictionary's length; the
/// array's offset is applied. Errors: as DecodeDictionary (not encoded, no
/// dictionary, index out of range).
Result<std::vector<int64_t>> DictionaryIndices(const ArrayData& array, const std::string& what);

/// `schema` with each dictionary field replaced by a field of the same name,
/// nullability and metadata with the dictionary's value type; `*any` is set
/// to whether there was one (when not, the result is an equal copy).
/// Errors: NotImplemented "column '<name>' is a dictionary of dictionaries"
/// (or without a value type).
Result<SchemaPtr> DecodedSchema(const SchemaPtr& schema, bool* any);

/// `batch` with its dictionary-encoded columns decoded (DecodeDictionary,
/// what = "column '<name>'") and its schema as DecodedSchema gives; other
/// columns are shared. Returns `batch` itself when no column is a
/// dictionary. Errors: as DecodeDictionary and DecodedSchema.
Result<RecordBatchPtr> DecodeDictionaries(const RecordBatchPtr& batch, MemoryPool* pool);

}  // namespace quiver
