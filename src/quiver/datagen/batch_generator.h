// quiver/datagen/batch_generator.h — deterministic generated record batches
// for benchmarks and memory tables: the batch kinds of the Spark
// BoundedZstdCompressionCodec measurements (reference seed 000): sequential
// and random BIGINT, UUID strings, ~8 KB JSON-like text rows, and TPC-H-like
// `lineitem` and `orders` tables.
//
// Determinism: every value is a pure function of (seed, kind, row or order
// index), computed with splitmix64 (Steele, Lea, Flood 2014; constants below
// in batch_generator.cc) — no std::random distributions, whose output is
// implementation-defined. The same options give byte-identical buffers on
// every run, compiler and machine; a row's values do not depend on how the
// rows are cut into batches.
//
// Layout: every column is nullable (Field::nullable = true) and carries a
// present, all-valid validity bitmap (null_count 0), mirroring Arrow Java
// vectors, which always allocate a validity buffer. So `lineitem` has 16
// validity + 16 data + 5 offsets = 37 buffers, as in the reference. Buffers
// are exactly sized (validity ceil(n/8) bytes, offsets (n+1)*4 bytes, data
// the bytes used); they come from options.pool.
//
// Batch cutting: with max_bytes_per_batch > 0 each batch holds as many rows
// as fit in that many buffer bytes (the sum of ArrayData::TotalBufferBytes
// over the columns, exact sizes as above), at least one row. With 0, the
// whole num_rows is one batch.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::datagen {

/// The kinds of generated batch.
enum class GenKind {
  kBigintSeq,     ///< "id": int64 = global row index 0..num_rows-1
  kBigintRandom,  ///< "value": int64, uniformly random 64-bit (incompressible)
  kUuid,          ///< "uuid": utf8, 36-char lowercase UUID v4 text
  kText,          ///< "text": utf8, ~8 KB (7,600..8,470 chars) of JSON-like text per row
  kLineitem,      ///< the 16 TPC-H lineitem columns (scale factor 1 key ranges)
  kOrders,        ///< the 9 TPC-H orders columns, consistent with kLineitem for a seed
};

/// "bigint-seq", "bigint-random", "uuid", "text", "lineitem", "orders".
std::string_view GenKindName(GenKind kind);

/// Parses a name of GenKindName (exact, lowercase). Invalid lists the choices.
Result<GenKind> ParseGenKind(std::string_view name);

/// The schema of a kind's batches (all fields nullable). Pure; thread-safe.
SchemaPtr GenSchema(GenKind kind);

struct GenOptions {
  GenKind kind = GenKind::kBigintSeq;
  /// Total rows over all batches; >= 0. For lineitem, rows are order lines,
  /// so the last order may be cut short.
  int64_t num_rows = 0;
  /// Buffer byte cap per batch; 0 = one batch of num_rows rows. A single row
  /// larger than the cap still makes a batch of one row.
  int64_t max_bytes_per_batch = 0;
  /// Seed of every value; documented stable across versions of this file.
  uint64_t seed = 42;
  /// Pool of every buffer of the batches. Required; must outlive them.
  MemoryPool* pool = nullptr;
};

/// Yields the batches of one GenOptions, one by one.
///
/// Thread safety: one generator per thread; the batches it returns are
/// immutable and may be read from any thread.
class BatchGenerator {
 public:
  /// Checks the options: Invalid when pool is null, num_rows < 0 or
  /// max_bytes_per_batch < 0.
  static Result<std::unique_ptr<BatchGenerator>> Make(const GenOptions& options);
  virtual ~BatchGenerator() = default;

  /// The schema of every batch (GenSchema(options.kind)).
  virtual const SchemaPtr& schema() const = 0;

  /// The next batch, or nullptr once num_rows rows have been returned (an
  /// empty generator, num_rows 0, returns nullptr at once). Every batch
  /// passes ValidateBatch(kFull). Errors: OutOfMemory from the pool (the
  /// generator then stays at the same row, and nothing of the failed batch
  /// stays charged).
  virtual Result<RecordBatchPtr> Next() = 0;

  /// Rows returned so far.
  virtual int64_t rows_generated() const = 0;
};

/// All batches of `options` (convenience over BatchGenerator).
Result<std::vector<RecordBatchPtr>> GenerateBatches(const GenOptions& options);

/// Sum of TotalBufferBytes over a batch's columns (the unit of
/// max_bytes_per_batch).
int64_t BatchBufferBytes(const RecordBatch& batch);

}  // namespace quiver::datagen
