#include "quiver/formats/parquet/file_writer.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "quiver/formats/parquet/column_values.h"
#include "quiver/formats/parquet/compress.h"
#include "quiver/formats/parquet/metadata_writer.h"

namespace quiver::parquet {
namespace {

constexpr uint8_t kMagic[4] = {'P', 'A', 'R', '1'};

int64_t BatchBytes(const RecordBatch& b) {
  int64_t bytes = 0;
  for (const auto& c : b.columns) bytes += c->TotalBufferBytes();
  return bytes;
}

}  // namespace

Status ValidateWriterOptions(const WriterOptions& o) {
  if (o.pool == nullptr) return Status::Invalid("Parquet writer: no memory pool given");
  if (!WriterSupportsCodec(o.codec)) {
    return Status::Invalid("Parquet writer: codec " + CodecName(o.codec) + " (expected snappy, zstd or none)");
  }
  if (o.codec == static_cast<int32_t>(Codec::kZstd) && (o.zstd_level < 1 || o.zstd_level > 22)) {
    return Status::Invalid("Parquet writer: zstd level " + std::to_string(o.zstd_level) + " (expected 1..22)");
  }
  auto positive = [](int64_t v, const char* name) -> Status {
    if (v < 1)
      return Status::Invalid(std::string("Parquet writer: ") + name + " " + std::to_string(v) + " (expected >= 1)");
    return Status::OK();
  };
  QUIVER_RETURN_NOT_OK(positive(o.row_group_rows, "row_group_rows"));
  QUIVER_RETURN_NOT_OK(positive(o.row_group_bytes, "row_group_bytes"));
  QUIVER_RETURN_NOT_OK(positive(o.data_page_bytes, "data_page_bytes"));
  QUIVER_RETURN_NOT_OK(positive(o.data_page_max_rows, "data_page_max_rows"));
  QUIVER_RETURN_NOT_OK(positive(o.dictionary_page_limit_bytes, "dictionary_page_limit_bytes"));
  if (o.data_page_max_rows > std::numeric_limits<int32_t>::max()) {
    return Status::Invalid("Parquet writer: data_page_max_rows " + std::to_string(o.data_page_max_rows) +
                           " (at most 2147483647)");
  }
  return Status::OK();
}

Result<int32_t> ParseWriterCodec(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "snappy") return static_cast<int32_t>(Codec::kSnappy);
  if (n == "zstd") return static_cast<int32_t>(Codec::kZstd);
  if (n == "none" || n == "uncompressed") return static_cast<int32_t>(Codec::kUncompressed);
  return Status::Invalid("Parquet compression '" + name + "' (expected snappy, zstd or none)");
}

Result<std::unique_ptr<FileWriter>> FileWriter::Make(SchemaPtr schema, formats::OutputSink* sink,
                                                     WriterOptions options) {
  QUIVER_RETURN_NOT_OK(ValidateWriterOptions(options));
  std::unique_ptr<FileWriter> w(new FileWriter());
  w->schema_ = std::move(schema);
  w->sink_ = sink;
  w->options_ = std::move(options);
  ColumnWriteOptions& co = w->column_options_;
  co.codec = w->options_.codec;
  co.zstd_level = w->options_.zstd_level;
  co.data_page_bytes = w->options_.data_page_bytes;
  co.data_page_max_rows = w->options_.data_page_max_rows;
  co.dictionary = w->options_.dictionary;
  co.dictionary_page_limit_bytes = w->options_.dictionary_page_limit_bytes;
  FileMetaData& md = w->metadata_;
  md.version = 2;
  md.created_by = w->options_.created_by;
  md.key_value_metadata = w->schema_->metadata;
  SchemaElement root;
  root.name = "schema";
  root.num_children = w->schema_->num_fields();
  md.schema.push_back(root);
  for (const FieldPtr& f : w->schema_->fields) {
    QUIVER_ASSIGN_OR_RETURN(LeafMapping m, MapArrowField(*f));
    md.schema.push_back(m.element);
    w->leaves_.push_back(std::move(m));
  }
  return w;
}

Status FileWriter::WriteMagic() {
  if (started_) return Status::OK();
  started_ = true;
  return sink_->Write(kMagic);
}

Status FileWriter::WriteBatch(const RecordBatchPtr& batch) {
  if (closed_) return Status::Invalid("Parquet writer: WriteBatch after Close");
  if (batch->columns.size() != leaves_.size()) {
    return Status::Invalid("Parquet writer: a batch of " + std::to_string(batch->columns.size()) +
                           " columns for a schema of " + std::to_string(leaves_.size()));
  }
  for (size_t c = 0; c < leaves_.size(); ++c) {
    if (!batch->columns[c]->type->Equals(*schema_->fields[c]->type)) {
      return Status::Invalid("Parquet writer: column '" + schema_->fields[c]->name + "' is " +
                             batch->columns[c]->type->ToString() + " in a batch, " +
                             schema_->fields[c]->type->ToString() + " in the schema");
    }
  }
  QUIVER_RETURN_NOT_OK(WriteMagic());
  if (batch->num_rows == 0) return Status::OK();
  const int64_t batch_bytes = BatchBytes(*batch);
  int64_t offset = 0;
  while (offset < batch->num_rows) {
    // Rows that still fit the current row group, by count and by bytes.
    int64_t take = std::min(batch->num_rows - offset, options_.row_group_rows - pending_rows_);
    const int64_t per_row = std::max<int64_t>(1, batch_bytes / batch->num_rows);
    const int64_t room_bytes = options_.row_group_bytes - pending_bytes_;
    take = std::max<int64_t>(1, std::min(take, room_bytes / per_row));
    RecordBatchPtr piece = batch;
    if (offset != 0 || take != batch->num_rows) {
      QUIVER_ASSIGN_OR_RETURN(piece, SliceBatch(batch, offset, take));
    }
    pending_.push_back(std::move(piece));
    pending_rows_ += take;
    pending_bytes_ += take * per_row;
    offset += take;
    if (pending_rows_ >= options_.row_group_rows || pending_bytes_ >= options_.row_group_bytes) {
      QUIVER_RETURN_NOT_OK(FlushRowGroup());
    }
  }
  return Status::OK();
}

Status FileWriter::FlushRowGroup() {
  if (pending_rows_ == 0) return Status::OK();
  RowGroup g;
  g.num_rows = pending_rows_;
  g.file_offset = sink_->position();
  g.ordinal = static_cast<int32_t>(std::min<int64_t>(metadata_.row_groups.size(), INT32_MAX));
  int64_t compressed = 0;
  std::vector<ArrayDataPtr> pieces;
  std::vector<ChunkPageIndex> indexes(leaves_.size());
  for (size_t c = 0; c < leaves_.size(); ++c) {
    pieces.clear();
    for (const RecordBatchPtr& b : pending_) pieces.push_back(b->columns[c]);
    const std::string where = "Parquet writer: row group " + std::to_string(metadata_.row_groups.size()) +
                              ", column '" + leaves_[c].element.name + "'";
    ColumnChunk chunk;
    {
      QUIVER_ASSIGN_OR_RETURN(ColumnValues values, MaterializeColumn(pieces, leaves_[c], options_.pool));
      auto written = WriteColumnChunk(values, leaves_[c], column_options_, sink_, options_.pool,
                                      options_.page_index ? &indexes[c] : nullptr);
      if (!written.ok()) return written.status().WithContext(where);
      chunk = std::move(*written);
    }  // the chunk's values go back to the pool here
    g.total_byte_size += chunk.meta_data->total_uncompressed_size;
    compressed += chunk.meta_data->total_compressed_size;
    g.columns.push_back(std::move(chunk));
  }
  g.total_compressed_size = compressed;
  metadata_.num_rows += g.num_rows;
  metadata_.row_groups.push_back(std::move(g));
  if (options_.page_index) page_indexes_.push_back(std::move(indexes));
  stats_.num_rows += pending_rows_;
  stats_.num_row_groups += 1;
  pending_.clear();
  pending_rows_ = 0;
  pending_bytes_ = 0;
  return Status::OK();
}

Status FileWriter::Close() {
  if (closed_) return Status::Invalid("Parquet writer: Close called twice");
  QUIVER_RETURN_NOT_OK(WriteMagic());
  QUIVER_RETURN_NOT_OK(FlushRowGroup());
  closed_ = true;
  QUIVER_RETURN_NOT_OK(WritePageIndexes());
  const std::string footer = EncodeFileMetaData(metadata_, /*type_defined_column_orders=*/true);
  QUIVER_RETURN_NOT_OK(
      sink_->Write(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(footer.data()), footer.size())));
  const uint32_t len = static_cast<uint32_t>(footer.size());
  const uint8_t trailer[8] = {static_cast<uint8_t>(len & 0xFF),
                              static_cast<uint8_t>((len >> 8) & 0xFF),
                              static_cast<uint8_t>((len >> 16) & 0xFF),
                              static_cast<uint8_t>((len >> 24) & 0xFF),
                              'P',
                              'A',
                              'R',
                              '1'};
  QUIVER_RETURN_NOT_OK(sink_->Write(trailer));
  stats_.file_bytes = sink_->position();
  return Status::OK();
}

Status FileWriter::WritePageIndexes() {
  auto write = [&](const std::string& bytes, std::optional<int64_t>* offset, std::optional<int32_t>* length) -> Status {
    if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
      return Status::Invalid("Parquet writer: a page index of " + std::to_string(bytes.size()) + " bytes");
    }
    *offset = sink_->position();
    *length = static_cast<int32_t>(bytes.size());
    return sink_->Write(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  };
  for (size_t g = 0; g < page_indexes_.size(); ++g) {
    for (size_t c = 0; c < page_indexes_[g].size(); ++c) {
      const auto& ci = page_indexes_[g][c].column_index;
      if (!ci) continue;
      ColumnChunk& cc = metadata_.row_groups[g].columns[c];
      QUIVER_RETURN_NOT_OK(write(EncodeColumnIndex(*ci), &cc.column_index_offset, &cc.column_index_length));
    }
  }
  for (size_t g = 0; g < page_indexes_.size(); ++g) {
    for (size_t c = 0; c < page_indexes_[g].size(); ++c) {
      const auto& oi = page_indexes_[g][c].offset_index;
      if (!oi) continue;
      ColumnChunk& cc = metadata_.row_groups[g].columns[c];
      QUIVER_RETURN_NOT_OK(write(EncodeOffsetIndex(*oi), &cc.offset_index_offset, &cc.offset_index_length));
    }
  }
  page_indexes_.clear();
  return Status::OK();
}

Result<WriterStats> WriteParquetFile(const std::string& path, const SchemaPtr& schema,
                                     const std::vector<RecordBatchPtr>& batches, const WriterOptions& options) {
  QUIVER_ASSIGN_OR_RETURN(auto sink, formats::LocalFileSink::Open(path));
  QUIVER_ASSIGN_OR_RETURN(auto writer, FileWriter::Make(schema, sink.get(), options));
  for (const auto& b : batches) QUIVER_RETURN_NOT_OK(writer->WriteBatch(b));
  QUIVER_RETURN_NOT_OK(writer->Close());
  QUIVER_RETURN_NOT_OK(sink->Close());
  return writer->stats();
}

}  // namespace quiver::parquet
