// quiver/sql/csv_scan.cc — see csv_scan.h.
#include "quiver/sql/csv_scan.h"

#include <algorithm>

#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_frames.h"
#include "quiver/formats/csv/csv_ranges.h"
#include "quiver/formats/csv/csv_stream.h"
#include "quiver/sql/file_scan.h"

namespace quiver::sql {

namespace fcsv = formats::csv;

Result<CsvTableSource::File> CsvTableSource::OpenFile(std::shared_ptr<formats::RandomAccessSource> source,
                                                      const fcsv::CsvOptions& options, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto stream, fcsv::OpenCsvByteStream(source, pool));
  QUIVER_ASSIGN_OR_RETURN(auto reader, fcsv::CsvStreamReader::Open(std::move(stream), options, pool));
  File f;
  f.source = std::move(source);
  f.layout = reader->layout();
  return f;
}

Result<std::shared_ptr<CsvTableSource>> CsvTableSource::Make(SchemaPtr schema, size_t num_file_fields,
                                                             std::vector<File> files, fcsv::CsvOptions options,
                                                             int64_t range_bytes) {
  std::shared_ptr<CsvTableSource> s(new CsvTableSource());
  const size_t keys = schema->fields.size() - std::min(num_file_fields, schema->fields.size());
  double rows = 0;
  for (const File& f : files) {
    if (f.partition_values.size() != keys) {
      return Status::Invalid(f.source->name() + ": " + std::to_string(f.partition_values.size()) +
                             " partition values for " + std::to_string(keys) + " partition columns");
    }
    if (f.layout.row_bytes > 0) {
      const bool compressed = fcsv::CsvCompressionOf(f.source->name()) != fcsv::CsvCompression::kNone;
      const double bytes = static_cast<double>(f.source->size()) * (compressed ? 4.0 : 1.0);
      rows += bytes / f.layout.row_bytes;
    }
  }
  s->schema_ = std::move(schema);
  s->num_file_fields_ = num_file_fields;
  s->files_ = std::move(files);
  s->options_ = std::move(options);
  s->range_bytes_ = range_bytes;
  s->estimated_rows_ = static_cast<int64_t>(std::min(rows, 9.0e18));
  return s;
}

CsvScan::CsvScan(std::shared_ptr<const CsvTableSource> source, std::vector<int> columns, MemoryPool* pool)
    : source_(std::move(source)), columns_(std::move(columns)), pool_(pool) {
  for (int c : columns_) {
    if (c >= 0 && static_cast<size_t>(c) < source_->num_file_fields_) file_columns_.push_back(c);
  }
}

CsvScan::~CsvScan() = default;

Result<RecordBatchPtr> CsvScan::Finish(RecordBatchPtr batch, size_t file) {
  // The file's batch, widened to the table: partition columns after the file's.
  auto out = std::make_shared<RecordBatch>();
  out->schema = source_->schema_;
  out->num_rows = batch->num_rows;
  out->columns = batch->columns;
  out->columns.resize(source_->schema_->fields.size());
  for (int c : columns_) {
    const size_t k = static_cast<size_t>(c);
    if (k < source_->num_file_fields_) continue;
    const size_t key = k - source_->num_file_fields_;
    QUIVER_ASSIGN_OR_RETURN(
        out->columns[k], PartitionColumn(source_->schema_->fields[k]->type, source_->files_[file].partition_values[key],
                                         out->num_rows, pool_));
  }
  return RecordBatchPtr(std::move(out));
}

Result<RecordBatchPtr> CsvScan::Next(int64_t* sequence) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (!error_.ok()) return error_;
    if (file_ >= source_->files_.size()) {
      *sequence = handed_out_;
      return RecordBatchPtr{};
    }
    const size_t file = file_;
    const CsvTableSource::File& f = source_->files_[file];
    if (f.layout.schema == nullptr || f.layout.empty_text) {  // an empty file: no rows
      ++file_;
      continue;
    }
    const fcsv::CsvCompression compression = fcsv::CsvCompressionOf(f.source->name());
    if (compression == fcsv::CsvCompression::kZstd && !frames_checked_) {
      // Several zstd frames: ranges of frames decompressed and parsed on
      // every thread (nullptr: one frame, read serially below).
      frames_checked_ = true;
      auto frames = fcsv::CsvFrameScan::Open(f.source, f.layout, source_->options_, file_columns_, pool_);
      if (!frames.ok()) {
        error_ = frames.status();
        return error_;
      }
      frames_ = std::move(*frames);
      next_range_ = 0;
    }
    if (frames_) {
      if (next_range_ >= frames_->num_ranges()) {
        frames_.reset();
        frames_checked_ = false;
        ++file_;
        continue;
      }
      return ParseNextRange(frames_, file, &lock, sequence);
    }
    if (compression != fcsv::CsvCompression::kNone) {
      // Decompressed and parsed under the lock, a block at a time.
      Status st;
      RecordBatchPtr batch;
      if (!stream_) {
        auto stream = fcsv::OpenCsvByteStream(f.source, pool_);
        if (stream.ok()) {
          auto reader = fcsv::CsvStreamReader::Open(std::move(*stream), source_->options_, pool_, {}, file_columns_);
          if (reader.ok()) {
            stream_ = std::move(*reader);
          } else {
            st = reader.status();
          }
        } else {
          st = stream.status();
        }
      }
      if (st.ok()) {
        auto r = stream_->Next();
        if (r.ok()) {
          batch = std::move(*r);
        } else {
          st = r.status();
        }
      }
      if (!st.ok()) {
        error_ = st;
        return st;
      }
      if (!batch) {
        stream_.reset();
        frames_checked_ = false;
        ++file_;
        continue;
      }
      *sequence = handed_out_++;
      lock.unlock();
      return Finish(std::move(batch), file);
    }
    if (!ranges_) {
      ranges_ = std::make_shared<fcsv::CsvRangeScan>(f.source, f.layout, source_->options_, file_columns_,
                                                     source_->range_bytes_);
      next_range_ = 0;
    }
    if (next_range_ >= ranges_->num_ranges()) {
      ranges_.reset();
      ++file_;
      continue;
    }
    return ParseNextRange(ranges_, file, &lock, sequence);
  }
}

template <typename Ranges>
Result<RecordBatchPtr> CsvScan::ParseNextRange(std::shared_ptr<Ranges> ranges, size_t file,
                                               std::unique_lock<std::mutex>* lock, int64_t* sequence) {
  const int64_t k = next_range_++;
  *sequence = handed_out_++;
  lock->unlock();
  auto r = ranges->ParseRange(k, pool_);
  if (!r.ok()) {
    lock->lock();
    if (error_.ok()) error_ = r.status();
    return r.status();
  }
  return Finish(std::move(*r), file);
}

}  // namespace quiver::sql
