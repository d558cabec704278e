// quiver/columnar/take.h — gathering rows of an array by index into a new
// array, and the all-null array of a type (Arrow C++ compute::Take and
// MakeArrayOfNull, for the flat types below).
//
// Supported types ("gatherable"): null, bool, the fixed-width types whose
// width is a whole number of bytes (integers, floats, float16, decimals,
// date, time, timestamp, duration, intervals, fixed_size_binary), binary,
// utf8, large_binary and large_utf8. Nested, dictionary, view, union and
// run-end encoded types are not (NotImplemented).
//
// Output arrays have offset 0 and freshly allocated buffers from the
// caller's pool (nothing is shared with the input); a validity bitmap is
// present exactly when the output has a null, except that the null type
// has no buffers at all. The rows of negative indices hold zero (fixed
// width, bool) or nothing (variable width); a null row taken from the input
// holds whatever the input held under it (fixed width, bool) or nothing.
//
// Thread safety: pure functions over immutable inputs; safe from any thread
// (the pool must be thread-safe if shared).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/memory/memory_pool.h"

namespace quiver {

/// The physical layouts Take distinguishes.
enum class GatherKind : uint8_t {
  kNull,         ///< the null type: no buffers
  kBool,         ///< a bitmap of values
  kFixed,        ///< fixed-width values of a whole number of bytes
  kVar32,        ///< binary / utf8 (int32 offsets)
  kVar64,        ///< large_binary / large_utf8 (int64 offsets)
  kUnsupported,  ///< anything else (nested, dictionary, view, ...)
};

/// The gather layout of `type`; `*width_bytes` receives the value width for
/// kFixed and 0 otherwise. Pure.
GatherKind GatherKindOf(const DataType& type, int32_t* width_bytes);

/// True when Take and MakeArrayOfNull support `type` (see the file comment).
bool IsGatherable(const DataType& type);

/// Options of Take (Arrow C++ compute::TakeOptions).
struct TakeOptions {
  /// Check every index against values.length (Invalid when one is past
  /// the end). Callers whose indices are in range by construction (the
  /// hash join's own probe row numbers) may turn it off to save a pass;
  /// an index out of range is then undefined behaviour.
  bool boundscheck = true;
};

/// The rows `indices` of `values` (logical rows: `values.offset` applied),
/// in index order, as a new array of `values.type` with
/// `indices.size()` rows. A negative index gives a null row; a valid index
/// of a null row gives a null row. Buffers come from `pool`.
///
/// `what` names the input in error messages (e.g. "column 'x'").
/// Errors: NotImplemented "<what> has type <t>, which Take cannot gather
/// (supported: ...)" for a type that is not gatherable; Invalid "<what>:
/// index <i> at position <j> is outside the array of <n> rows" for an index
/// >= values.length (with options.boundscheck); Invalid "<what>: <b> bytes of output values overflow
/// 32-bit offsets" when binary/utf8 output would pass INT32_MAX bytes;
/// OutOfMemory from `pool`. Nothing is allocated when an index is out of
/// range or the type is not supported.
/// Preconditions: `values` is a valid array (ValidateArray) and `pool` is
/// not null.
Result<ArrayDataPtr> Take(const ArrayData& values, std::span<const int64_t> indices, MemoryPool* pool,
                          const std::string& what, const TakeOptions& options = {});

/// One row of one of several arrays: Interleave's index.
struct SourceRow {
  int32_t source = 0;  ///< position in the `sources` span
  int64_t row = 0;     ///< logical row of that array (its offset applied)
};

/// Row j of the output is row `rows[j].row` of `*sources[rows[j].source]`
/// (Arrow Rust's arrow_select::interleave): a gather from several arrays
/// of one type at once, as a k-way merge of sorted runs needs. The output
/// has `rows.size()` rows, offset 0, fresh buffers from `pool`, and a
/// validity bitmap exactly when it has a null.
/// Errors: Invalid "<what>: ..." when `sources` is empty, a source's type
/// differs from the first's, or a row names a source or row out of range
/// (nothing allocated); NotImplemented as Take for a type that is not
/// gatherable; Invalid as Take when binary/utf8 output passes INT32_MAX
/// bytes; OutOfMemory from `pool`.
/// Preconditions: every source is a valid array; `pool` is not null.
Result<ArrayDataPtr> Interleave(std::span<const ArrayData* const> sources, std::span<const SourceRow> rows,
                                MemoryPool* pool, const std::string& what);

/// An array of `length` nulls of `type` (the missing side of an outer
/// join's rows): what Take gives for `length` negative indices. Buffers
/// (validity bitmap, zeroed values / offsets, one data byte for the
/// variable-width types) come from `pool`; `length` 0 gives an array
/// without a validity bitmap. `what` names the array in errors.
/// Errors: NotImplemented as Take for a type that is not gatherable;
/// Invalid for a negative length; OutOfMemory from `pool`.
Result<ArrayDataPtr> MakeArrayOfNull(const DataTypePtr& type, int64_t length, MemoryPool* pool,
                                     const std::string& what);

}  // namespace quiver
