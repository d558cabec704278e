// quiver/columnar/record_batch_stream.h — a pull-based stream of record batches.
//
// The one interface every producer of batches implements (the IPC readers,
// the SQL operators, the fetch client's result) and every consumer takes
// (the IPC writers, the CloudFetch chunk writer). Modelled on Arrow C++'s
// RecordBatchReader and the C Stream Interface's get_schema/get_next.
#pragma once

#include <utility>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"

namespace quiver {

class RecordBatchStream {
 public:
  virtual ~RecordBatchStream() = default;

  /// The schema every batch of the stream has. Valid for the stream's life.
  virtual const SchemaPtr& schema() const = 0;

  /// The next record batch, or nullptr at the end of the stream. Batches are
  /// immutable and may outlive the stream (they keep their buffers alive).
  /// Errors are the producer's (Invalid, IOError, OutOfMemory, Cancelled, ...);
  /// after an error the stream should not be used again.
  /// Thread safety: one thread at a time.
  virtual Result<RecordBatchPtr> Next() = 0;
};

/// A stream over batches already in memory, returned in order (shared, not
/// copied; each should have `schema`'s shape — not checked here). Never fails.
class BatchVectorStream final : public RecordBatchStream {
 public:
  BatchVectorStream(SchemaPtr schema, std::vector<RecordBatchPtr> batches)
      : schema_(std::move(schema)), batches_(std::move(batches)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (next_ >= batches_.size()) return RecordBatchPtr();
    return batches_[next_++];
  }

 private:
  SchemaPtr schema_;
  std::vector<RecordBatchPtr> batches_;
  size_t next_ = 0;
};

}  // namespace quiver
