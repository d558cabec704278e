// quiver/server/hive_types.h — how Arrow results look in the Databricks SQL
// protocol: Arrow types as Hive type ids and names (TTableSchema,
// GetColumns), TIME columns served as text, and the IPC schema message of a
// result (TGetResultSetMetadataResp.arrowSchema).
//
// Internal to the server layer (includes the generated TCLIService types).
// Thread safety: every function is pure; a TimeAsText stream is used by one
// thread at a time, as any RecordBatchStream.
#pragma once

#include <memory>
#include <string>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/server/catalog_results.h"
#include "quiver/tcli/TCLIService.h"

namespace quiver::server {
namespace t = ::quiver::tcli;

/// The Hive type id of an Arrow type (run-end encoded and dictionary types
/// by their value type; TIME as STRING_TYPE, see WithTimeAsText).
t::TTypeId::type HiveTypeId(const DataType& type);

/// The TTableSchema of a result schema: one column each, position from 1,
/// decimal precision and scale as type qualifiers.
t::TTableSchema HiveSchema(const Schema& schema);

/// A column's type as GetColumns describes it (Hive name without "_TYPE",
/// DECIMAL(p,s), the java.sql.Types code).
ColumnTypeInfo HiveTypeInfo(const DataType& type);

/// The protocol has no TIME type (TTypeId: no TIME_TYPE; Hive and Databricks
/// SQL have none), so a time32 / time64 column is announced as STRING_TYPE
/// and, so that what is announced is what is sent, served as a utf8 column
/// of its text "HH:MM:SS[.fraction]" (the fraction's digits those of the
/// unit: 3 ms, 6 us, 9 ns; the same text `quiver cat` prints). Top-level
/// columns only: a time inside a list or struct is sent as Arrow time.
/// Returns `in` itself when it has no TIME column; the text buffers are
/// charged to `pool` (not owned, outlives the stream).
std::unique_ptr<RecordBatchStream> WithTimeAsText(std::unique_ptr<RecordBatchStream> in, MemoryPool* pool);

/// The IPC schema message of `schema` (encapsulated, no end-of-stream).
/// Errors: those of the IPC writer (OutOfMemory from `pool`).
Result<std::string> SchemaMessage(const SchemaPtr& schema, MemoryPool* pool);

}  // namespace quiver::server
