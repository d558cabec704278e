// quiver/sql/ipc_batch_pruning.h — whether an Arrow IPC record batch can
// hold a row that passes a scan's pruning predicates, from the column
// ranges quiver's writer records in the batch's message metadata
// (ipc/column_ranges.h; `quiver gen tpch|tpcds` and the benches write
// them). The IPC counterpart of a Parquet row group's statistics
// (formats/parquet/row_group_filter.h): the scan of an IPC table drops the
// batches this says no to before any of their columns is read, e.g. the
// inventory batches outside a join filter's inv_date_sk range.
//
// Pure function; thread-safe.
#pragma once

#include <span>

#include "quiver/columnar/data_type.h"
#include "quiver/formats/parquet/row_group_filter.h"

namespace quiver::sql {

/// False only when the column ranges in `message_metadata` (a record batch
/// message's custom metadata) prove that no row of the batch passes every
/// one of `predicates` (a conjunction; fields are top-level column
/// indices). True otherwise: no or malformed ranges, a predicate on a
/// column without a range, a constant that is not an integer.
bool BatchRangesMayMatch(const KeyValueMetadata& message_metadata, std::span<const parquet::StatsPredicate> predicates);

}  // namespace quiver::sql
