// quiver/columnar/c_data.h — the Arrow C Data Interface and C Stream
// Interface: hand schemas, arrays, record batches and batch streams to any
// Arrow implementation in the same process (pyarrow, polars, DuckDB,
// nanoarrow, Arrow C++) and take theirs, without copying buffers.
//
// Source: the Arrow specification, "The Arrow C data interface" and "The
// Arrow C stream interface" (docs/source/format/CDataInterface.rst,
// CStreamInterface.rst). The three structs below are the ABI the
// specification defines; they are declared here from the specification's
// text, guarded by the macros it names so that a program that also includes
// another implementation's copy compiles.
//
// Ownership (the specification's "release callback semantics"):
//  - Export*: on success the caller owns the filled struct and must call its
//    `release` exactly once (directly, or by handing it to a consumer that
//    does). quiver's release callbacks keep the exported buffers alive until
//    then (they hold references to quiver's Buffers), release every child
//    and dictionary that has not been moved out (release != nullptr), and
//    set `release` to nullptr. Children may be moved out and released in any
//    order, before or after the parent. On failure nothing is written to
//    `out` (its `release` is left as it was).
//  - Import*: the struct is moved into quiver (its `release` is set to
//    nullptr on return, on success and on failure alike); the imported
//    Buffers view the producer's memory and the producer's release callback
//    runs once, when the last quiver object that references any of it goes.
//
// Buffer sizes are not carried by the ABI: on import they are derived from
// the type, length and offset (offsets buffers give the data sizes; view
// types carry their variadic sizes in their last buffer). Imported arrays
// are checked structurally (ValidateArray kStructural) so that a producer's
// inconsistent lengths are an Invalid error, not an out-of-bounds read.
//
// Thread safety: the Export*/Import* functions are pure over their inputs.
// An exported struct may be released from any thread; a stream's callbacks
// must not be called concurrently (the specification's rule).
#pragma once

#include <cstdint>
#include <memory>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/columnar/record_batch_stream.h"

extern "C" {

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

/// A type, field or schema: `format` is the type's format string, `name` the
/// field name, `metadata` the binary-encoded custom metadata (int32 count,
/// then per pair int32 length + key bytes, int32 length + value bytes; native
/// endianness), `flags` the ARROW_FLAG_* bits.
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

/// One array: `length` and `offset` in elements, `null_count` (-1 = not
/// computed), the buffers in the type's layout order (no sizes), children,
/// and the dictionary of a dictionary-encoded array.
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

/// A pull-based stream of struct arrays (record batches). Callbacks return 0
/// or an errno-compatible code; get_next sets out->release to nullptr at the
/// end of the stream; get_last_error describes the last error (valid until
/// the next call or release).
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE

}  // extern "C"

namespace quiver {

// ---- export -----------------------------------------------------------------

/// The format string of `type` ("i", "+l", "d:38,10", "tsu:UTC", ...; for a
/// dictionary type, its index type's). Errors: NotImplemented for a type the
/// specification has no format for (none today).
Result<std::string> CDataFormatOf(const DataType& type);

/// Exports a field (name, type, nullability, metadata; a dictionary-encoded
/// field's value type as `dictionary`).
Status ExportField(const Field& field, ArrowSchema* out);

/// Exports a type as an unnamed, nullable field.
Status ExportType(const DataType& type, ArrowSchema* out);

/// Exports a schema as a struct type ("+s") whose children are its fields;
/// the schema's metadata goes to the struct's metadata.
Status ExportSchema(const Schema& schema, ArrowSchema* out);

/// Exports an array zero-copy (its buffers, children and dictionary). Errors:
/// Invalid when the array's buffer or child count does not match its type.
Status ExportArray(const ArrayDataPtr& array, ArrowArray* out);

/// Exports a record batch as a struct array of num_rows rows (no validity
/// bitmap, offset 0), and its schema when `out_schema` is not null. On
/// failure neither struct is written.
Status ExportRecordBatch(const RecordBatch& batch, ArrowArray* out, ArrowSchema* out_schema = nullptr);

/// Exports a batch stream: get_schema exports stream->schema(), get_next
/// exports each batch (ExportRecordBatch) and the end as release == nullptr,
/// and a failing Next returns EINVAL (Invalid), ENOMEM (OutOfMemory),
/// ENOSYS (NotImplemented), ECANCELED (Cancelled) or EIO (others), with the
/// Status text from get_last_error. `out` owns the stream from then on.
Status ExportRecordBatchStream(std::unique_ptr<RecordBatchStream> stream, ArrowArrayStream* out);

// ---- import -----------------------------------------------------------------

/// Imports a field (moves `schema`; see the ownership notes above). Errors:
/// Invalid for a malformed or unknown format string, a child count that
/// does not fit the format, or malformed metadata.
Result<FieldPtr> ImportField(ArrowSchema* schema);

/// Imports a type (the field's type; the name and flags are dropped).
Result<DataTypePtr> ImportType(ArrowSchema* schema);

/// Imports a schema from a struct type ("+s"): its children are the fields,
/// its metadata the schema's. Invalid when the format is not "+s".
Result<SchemaPtr> ImportSchema(ArrowSchema* schema);

/// Imports an array of `type` (moves `array`). Errors: Invalid when counts
/// or lengths do not fit the type, a required buffer is null, or the
/// structural validation of the result fails.
Result<ArrayDataPtr> ImportArray(ArrowArray* array, const DataTypePtr& type);

/// Imports a record batch from a struct array whose children match
/// `schema`'s fields (moves `array`). Invalid when the struct has top-level
/// nulls or its child count differs from the schema's.
Result<RecordBatchPtr> ImportRecordBatch(ArrowArray* array, const SchemaPtr& schema);

/// Imports a batch stream (moves `stream`): the schema is read at once; each
/// Next() calls get_next and imports the batch. A failing callback becomes
/// IOError (Invalid for EINVAL, OutOfMemory for ENOMEM) carrying
/// get_last_error's text. The stream is released with the returned object.
Result<std::unique_ptr<RecordBatchStream>> ImportRecordBatchStream(ArrowArrayStream* stream);

}  // namespace quiver
