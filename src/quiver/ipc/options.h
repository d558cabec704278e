// quiver/ipc/options.h — options of the IPC reader and writer, with the
// limits that guard untrusted input (cf. Arrow C++ ipc/options.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "quiver/columnar/validate.h"
#include "quiver/compression/body_compressor.h"
#include "quiver/compression/codec.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::ipc {

/// The custom metadata key under which quiver's writer records the codec
/// level of each compressed record batch and dictionary batch message
/// (Message.custom_metadata; value: the level in decimal, e.g. "3"). Not
/// part of the Arrow format: other readers ignore it, other writers do not
/// write it. Written by RecordBatchWriter (ipc/writer.cc); read by nobody in
/// the library — the reader hands message metadata through unparsed
/// (BatchBodyStats::message_metadata) and `quiver stats` parses the level.
inline constexpr std::string_view kCompressionLevelMetadataKey = "quiver.compression.level";

struct ReadOptions {
  /// Pool for every buffer the reader allocates (decompressed or swapped
  /// buffers, copies of misaligned buffers, stream reads). Required.
  MemoryPool* pool = nullptr;
  /// Validation of each decoded batch and dictionary. Data from outside
  /// defaults to full.
  ValidationLevel validation = ValidationLevel::kFull;
  /// Largest metadata flatbuffer accepted, in bytes.
  int64_t max_metadata_bytes = int64_t{64} << 20;
  /// Largest message body accepted, in bytes.
  int64_t max_body_bytes = int64_t{16} << 30;
  /// Deepest field nesting accepted (struct/list levels).
  int max_nesting_depth = 64;
  /// Largest flatbuffer table count the verifier accepts.
  int64_t max_flatbuffer_tables = 1000000;
  /// A compressed buffer may declare at most this uncompressed size
  /// (bytes; also checked against the pool's remaining limit).
  int64_t max_decompressed_bytes = int64_t{4} << 30;
  /// ...and at most this many times its compressed size (a zip-bomb guard;
  /// ZSTD reaches ~30000:1 on constant data, LZ4 ~255:1).
  int64_t max_compression_ratio = 100000;
  /// Copy buffers whose address is not 8-byte aligned (always on for
  /// typed safety; zero-copy is kept for aligned bodies).
  bool ensure_alignment = true;
  /// Fill RecordBatchReader::last_batch_stats() for every record batch
  /// read: stored and uncompressed bytes per buffer and column, column
  /// names and the message's custom metadata (reader.h BatchBodyStats).
  /// Off (default): nothing is recorded (no per-buffer bookkeeping, no
  /// copies) and last_batch_stats() stays empty. Decoding, limits, errors
  /// and memory use of the batches are the same either way.
  bool collect_body_stats = false;
  /// Keep each record batch message's custom metadata (and its index and
  /// row count) in last_batch_stats() even when collect_body_stats is off;
  /// the per-buffer statistics stay empty. For scans that read the column
  /// ranges (ipc/column_ranges.h).
  bool collect_message_metadata = false;
};

struct WriteOptions {
  /// Pool for compressed buffers, compacted slices and encoding scratch.
  /// Required.
  MemoryPool* pool = nullptr;
  /// Body compression for every column unless `column_codecs` names it.
  CompressionType compression = CompressionType::kNone;
  /// Codec level; Codec::kUseDefaultLevel = the codec's default (ZSTD 3).
  int level = Codec::kUseDefaultLevel;
  /// Per-column codec by top-level field name (e.g. {"s": kZstd}). A batch
  /// uses one codec in its BodyCompression, so a column mapped to kNone is
  /// stored raw (-1 prefix) inside a compressed batch, and a column mapped to
  /// another codec than the batch's is an error when the writer is made.
  std::map<std::string, CompressionType> column_codecs;
  /// Store a buffer raw (-1 prefix) unless compression saves at least this
  /// fraction of its size. 0 = any saving (default).
  double min_space_saving = 0.0;
  /// Which memory compressed outputs end up in (compression/body_compressor.h;
  /// default kExact, the reason is documented there).
  OutputPolicy output_policy = kDefaultOutputPolicy;
  /// Record each record batch's integer and DATE32 column ranges in its
  /// message's custom metadata (ipc/column_ranges.h), so that a scan with a
  /// filter on such a column can skip the batch unread. Off by default:
  /// other files keep their bytes.
  bool column_ranges = false;
};

}  // namespace quiver::ipc
