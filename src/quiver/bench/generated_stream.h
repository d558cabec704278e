// quiver/bench/generated_stream.h — generated tables written as Arrow IPC
// stream files, the input of the end-to-end benchmarks (bench fetch, bench
// serve) that serve a file.
//
// Thread safety: one call per output path at a time.
#pragma once

#include <cstdint>
#include <string>

#include "quiver/base/result.h"
#include "quiver/datagen/batch_generator.h"

namespace quiver::bench {

/// Writes the batches of a datagen generator (`gen`, whose pool also serves
/// the writer) to an IPC stream file at `path` (created or truncated), until
/// the generator ends or, when `stop_at_bytes` > 0, once at least that many
/// stream bytes are written (the batch that crosses it is kept). Returns the
/// rows written. Errors: those of the generator, of opening or writing
/// `path` (IOError naming it) and of the pool (OutOfMemory); a partly
/// written file is left in place.
Result<int64_t> WriteGeneratedStream(const datagen::GenOptions& gen, const std::string& path, int64_t stop_at_bytes);

}  // namespace quiver::bench
