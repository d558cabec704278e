// quiver/formats/parquet/metadata_writer.h — the Thrift compact encoding of
// the Parquet footer and page headers (parquet-format parquet.thrift:
// FileMetaData, SchemaElement, LogicalType, RowGroup, ColumnChunk,
// ColumnMetaData, Statistics, KeyValue, ColumnOrder; PageHeader,
// DataPageHeader, DictionaryPageHeader), the writing side of metadata.h
// and page_reader.h, over the same structs.
//
// Optional fields are written when set (std::optional) or, for plain
// members, when they differ from the reader's defaults as documented per
// function. Pure; thread-safe.
#pragma once

#include <string>

#include "quiver/formats/parquet/metadata.h"
#include "quiver/formats/parquet/page_index.h"
#include "quiver/formats/parquet/page_reader.h"

namespace quiver::parquet {

/// FileMetaData as bytes (the footer before its length and "PAR1").
/// Writes version, schema (each element's logical type when its kind is not
/// kNone; converted type, scale and precision when converted_type is set),
/// num_rows, row groups (columns with their metadata and statistics,
/// the page index locations when set, total_byte_size, num_rows, file_offset, total_compressed_size, ordinal),
/// key-value metadata when non-empty, created_by when non-empty, and, when
/// `type_defined_column_orders`, one TypeDefinedOrder ColumnOrder per leaf
/// (so readers use min_value / max_value).
std::string EncodeFileMetaData(const FileMetaData& md, bool type_defined_column_orders);

/// The page index structs as bytes (PageIndex.md; stored between the
/// last column chunk and the footer): every field of each (null_counts when
/// set).
std::string EncodeOffsetIndex(const OffsetIndex& oi);
std::string EncodeColumnIndex(const ColumnIndex& ci);

/// A PageHeader as bytes: a DATA_PAGE header (num_values, encoding and the
/// level encodings) or a DICTIONARY_PAGE header (num_values, encoding), by
/// `h.type`; crc when set. Other page types are a programmer error.
std::string EncodePageHeader(const PageHeader& h);

}  // namespace quiver::parquet
