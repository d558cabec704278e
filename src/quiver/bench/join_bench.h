// quiver/bench/join_bench.h — the join benchmark behind `quiver bench join`:
// LongHashedRelation build/probe micro-benchmarks, and inner hash joins on
// generated int64 data side by side with DuckDB (at JoinBenchOptions::threads, driven through
// bench/duckdb_join.mjs under node), each checked by row count and checksum.
//
// Data: three key cases (dense, sparse, dup30) from splitmix64
// (quiver/datagen/splitmix64.h); the same generator runs in SQL in
// bench/duckdb_join.mjs, so both sides join identical data. Memory: on-heap,
// off-heap and off-heap with transparent huge pages, rounds interleaved,
// pages pre-faulted in a cold first round and reused (reported apart).
//
// Thread safety: one run at a time per root pool.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::bench {

/// The key distributions of the join cases.
enum class BenchKeys { kDense, kSparse, kDup30 };

/// "dense", "sparse", "dup30".
const char* BenchKeysName(BenchKeys keys);

/// Decimal text of a 128-bit integer (the join checksums).
std::string Int128ToString(__int128 value);

struct JoinBenchOptions {
  /// false: small (tests: 50K/200K-key relations, 200K x 400K joins);
  /// true: full (500K/10M keys, 10M x 20M joins).
  bool full = false;
  /// Measured rounds per case after the cold one; 0: small 1, full 3.
  int rounds = 0;
  /// One JSON object per case and line on `out` instead of the tables.
  bool json = false;
  /// Only these join cases (BenchKeysName); empty: all three.
  std::vector<std::string> cases;
  bool no_duckdb = false;       ///< skip the DuckDB side
  bool require_duckdb = false;  ///< IOError when the DuckDB side cannot run
  bool skip_micro = false;      ///< skip the relation micro-benchmarks
  bool verbose = false;         ///< per-round phase times on stderr
  /// Path of bench/duckdb_join.mjs (run as `node <script> ...`).
  std::string duckdb_script;
  /// Threads of both engines in the joins (>= 1): DuckDB's SET threads;
  /// quiver probes the one relation from this many threads (probe batches
  /// dealt round-robin, a HashJoinProbe each); the build is one thread.
  int threads = 1;
};

/// Runs the benchmark, writing its tables (or JSON lines) to `out` as each
/// case finishes. Generated data and the task memory managers are charged
/// to children of `root` ("bench-data", "bench-relation-<memory>",
/// "bench-join-<memory>"). Errors: Invalid when a result check fails
/// (quiver's or DuckDB's rows or checksum differ from the expected join,
/// naming the case and both values), OutOfMemory from the pools, IOError
/// when require_duckdb is set and DuckDB could not run.
Status RunJoinBench(const JoinBenchOptions& options, const std::shared_ptr<MemoryPool>& root, std::FILE* out);

}  // namespace quiver::bench
