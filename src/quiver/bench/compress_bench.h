// quiver/bench/compress_bench.h — the write-path memory study behind
// `quiver bench compress` (Spark BoundedZstdCompressionCodec change): for
// each reference batch (datagen kinds) and each output policy, the memory
// the unloaded batch holds and peaks at (pool counters, MiB), whether the
// serialized bytes are identical across policies, the thread CPU time of
// unload + release relative to `keep` (1 and 2 threads), and the codec's
// throughput against libzstd / liblz4 called directly on the same buffers.
//
// Thread safety: one run at a time per root pool; the run starts two
// threads of its own for the 2-thread CPU ratios.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/compression/codec.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::bench {

struct CompressBenchOptions {
  std::string codec = "zstd";           ///< "zstd" or "lz4" (ParseCompressionType)
  int level = Codec::kUseDefaultLevel;  ///< codec level (zstd default 3)
  bool small = false;                   ///< 1/100 of the reference batch sizes
  std::string rounding = "exact";       ///< pool rounding: "exact" or "power-of-two"
  int rounds = 7;                       ///< CPU rounds per policy (medians)
  bool json = false;                    ///< one JSON object per batch on `out`
  std::string only;                     ///< only batches whose name contains this text
};

/// Runs the study, writing a table (or JSON lines) to `out` as each batch
/// finishes; memory is charged to children of `root` ("vectors",
/// "unload-<policy>..."). `violations` gets one line per broken invariant
/// (bytes differ across policies, default held > 1.02 x compressed, default
/// peak > compressed + the largest compress bound, memory left after
/// release); the caller decides whether they fail the run. Errors: Invalid
/// for an unknown codec or kNone ("bench compress needs --codec zstd or
/// lz4") or a bad level, OutOfMemory from the pools.
Status RunCompressBench(const CompressBenchOptions& options, const std::shared_ptr<MemoryPool>& root, std::FILE* out,
                        std::vector<std::string>* violations);

}  // namespace quiver::bench
