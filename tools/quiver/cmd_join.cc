// quiver join: a hash join of two Arrow IPC inputs, with the build side in a
// hashed relation in on-heap or off-heap memory, and a memory report.
// quiver bench join: relation build/probe micro-benchmarks and the same
// joins side by side with DuckDB (bench/duckdb_join.mjs), checked by row
// count and checksum.
//
// Memory in the benchmarks: three configurations, rounds interleaved:
// on-heap, off-heap (4 KiB pages) and off-heap with transparent huge pages
// ("off-heap+thp"). Each runs in one task memory manager with pages
// pre-faulted when first acquired (TaskMemoryOptions::prefault: one write
// per 4 KiB on-heap, MADV_POPULATE_WRITE off-heap) and kept for reuse
// between rounds (retain_freed_bytes), as a task running join after join
// would; the first (cold) round pays the faults and is reported apart, the
// measured rounds reuse the pages. DuckDB likewise reuses its own memory
// from round to round.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quiver/cli.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/join/hash_join.h"
#include "quiver/join/long_hashed_relation.h"

#ifndef QUIVER_BENCH_DIR
#define QUIVER_BENCH_DIR "bench"
#endif

namespace quiver::cli {
namespace {

using join::HashJoin;
using join::HashJoinOptions;
using join::JoinType;
using join::MemoryMode;
using join::TaskMemoryManager;
using join::TaskMemoryOptions;

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

std::string Int128ToString(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

// ------------------------------------------------------------- quiver join --

Status ParseOnSpec(const std::string& spec, const ipc::RecordBatchReader& build, const std::string& build_path,
                   const ipc::RecordBatchReader& probe, const std::string& probe_path, std::vector<int>* build_keys,
                   std::vector<int>* probe_keys) {
  std::stringstream ss(spec);
  std::string pair;
  auto columns_of = [](const Schema& s) {
    std::string names;
    for (const auto& f : s.fields) names += (names.empty() ? "" : ", ") + f->name;
    return names;
  };
  while (std::getline(ss, pair, ',')) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
      return Status::Invalid("--on '" + spec + "': expected BUILD_COL=PROBE_COL[,...]");
    }
    const std::string b = pair.substr(0, eq), p = pair.substr(eq + 1);
    const int bi = build.schema()->FieldIndex(b);
    if (bi < 0) {
      return Status::KeyError("build column '" + b + "' is not in " + build_path + " (columns: " +
                              columns_of(*build.schema()) + ")");
    }
    const int pi = probe.schema()->FieldIndex(p);
    if (pi < 0) {
      return Status::KeyError("probe column '" + p + "' is not in " + probe_path + " (columns: " +
                              columns_of(*probe.schema()) + ")");
    }
    build_keys->push_back(bi);
    probe_keys->push_back(pi);
  }
  if (build_keys->empty()) return Status::Invalid("--on names no key columns");
  return Status::OK();
}

void AddJoinCommand(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("join", "hash join of two Arrow IPC inputs (build side in a hashed relation)");
  struct Opts {
    std::string build, probe, on, type = "inner", mode = "on-heap", out = "-", compression = "none",
                                  format = "stream";
    int64_t limit = -1, max_rows = 64 * 1024, max_bytes = int64_t{16} << 20;
    bool huge_pages = false, prefault = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--build", o->build, "build side (right input): Arrow IPC file or stream")->required();
  cmd->add_option("--probe", o->probe, "probe side (left input): Arrow IPC file or stream ('-' = stdin)")->required();
  cmd->add_option("--on", o->on, "key columns BUILD_COL=PROBE_COL[,...]")->required();
  cmd->add_option("--type", o->type, "inner|left|right|full|semi|anti|null-aware-anti (default inner)");
  cmd->add_option("--memory-mode", o->mode, "on-heap|off-heap: where the relation's pages come from");
  cmd->add_option("--memory-limit", o->limit, "byte limit of the join's memory (relation and output)");
  cmd->add_option("-o,--output", o->out, "output path ('-' = stdout, the default)");
  cmd->add_option("--compression", o->compression, "output body compression none|lz4|zstd");
  cmd->add_option("--format", o->format, "output IPC format stream|file")->check(CLI::IsMember({"stream", "file"}));
  cmd->add_option("--max-rows-per-batch", o->max_rows, "output batch bound in rows (default 65536)");
  cmd->add_option("--max-bytes-per-batch", o->max_bytes, "output batch bound in bytes (default 16 MiB)");
  cmd->add_flag("--huge-pages", o->huge_pages, "advise transparent huge pages for off-heap pages");
  cmd->add_flag("--prefault", o->prefault, "fault relation pages in when they are acquired");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      // Everything that can be refused is checked before any work.
      QUIVER_ASSIGN_OR_RETURN(JoinType type, join::ParseJoinType(o->type));
      QUIVER_ASSIGN_OR_RETURN(MemoryMode mode, join::ParseMemoryMode(o->mode));
      QUIVER_ASSIGN_OR_RETURN(CompressionType codec, ParseCompressionType(o->compression));
      if (o->build == "-" && o->probe == "-") return Status::Invalid("--build and --probe cannot both be stdin");
      MemoryPoolOptions jo;
      jo.name = "join";
      jo.limit_bytes = o->limit;
      auto join_pool = ctx.root->MakeChild(jo);
      auto read_pool = ctx.Child("read");
      auto write_pool = ctx.Child("write");
      ipc::ReadOptions ro;
      ro.pool = read_pool.get();
      auto build_reader = ipc::RecordBatchReader::OpenPath(o->build, ro);
      if (!build_reader.ok()) return build_reader.status().WithContext("--build " + o->build);
      auto probe_reader = ipc::RecordBatchReader::OpenPath(o->probe, ro);
      if (!probe_reader.ok()) return probe_reader.status().WithContext("--probe " + o->probe);
      HashJoinOptions jopt;
      jopt.type = type;
      jopt.output_pool = join_pool.get();
      jopt.max_output_rows = o->max_rows;
      jopt.max_output_bytes = o->max_bytes;
      QUIVER_RETURN_NOT_OK(ParseOnSpec(o->on, **build_reader, o->build, **probe_reader, o->probe,
                                       &jopt.build_keys, &jopt.probe_keys));
      QUIVER_ASSIGN_OR_RETURN(auto join, HashJoin::Make((*build_reader)->schema(), (*probe_reader)->schema(), jopt));
      // Build (the output is opened only once the relation stands).
      const auto t0 = Clock::now();
      auto build_batches = ipc::ReadAllBatches(build_reader->get());
      if (!build_batches.ok()) return build_batches.status().WithContext("--build " + o->build);
      TaskMemoryOptions to;
      to.mode = mode;
      to.huge_pages = o->huge_pages;
      to.prefault = o->prefault;
      TaskMemoryManager tmm(join_pool.get(), to);
      QUIVER_ASSIGN_OR_RETURN(auto relation, join->BuildRelation(*build_batches, &tmm));
      build_batches->clear();  // the relation holds the rows now
      const auto t1 = Clock::now();
      const join::RelationStats rs = relation->stats();
      QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(o->out));  // committed on success only
      ipc::WriteOptions wo;
      wo.pool = write_pool.get();
      wo.compression = codec;
      QUIVER_ASSIGN_OR_RETURN(auto writer,
                              ipc::RecordBatchWriter::Make(sink.get(), join->output_schema(),
                                                           o->format == "file" ? ipc::IpcFormat::kFile
                                                                               : ipc::IpcFormat::kStream,
                                                           wo));
      QUIVER_ASSIGN_OR_RETURN(auto probe, join->MakeProbe(relation));
      int64_t probe_rows = 0;
      auto write = [&](RecordBatchPtr b) { return writer->WriteBatch(*b); };
      while (true) {
        auto next = (*probe_reader)->Next();
        if (!next.ok()) return next.status().WithContext("--probe " + o->probe);
        if (!*next) break;
        probe_rows += (*next)->num_rows;
        QUIVER_RETURN_NOT_OK(probe->Probe(**next, write));
      }
      QUIVER_RETURN_NOT_OK(probe->Finish(write));
      QUIVER_RETURN_NOT_OK(writer->Close());
      QUIVER_RETURN_NOT_OK(sink->Commit());
      const auto t2 = Clock::now();
      const int64_t out_rows = probe->output_rows();
      probe.reset();
      const auto ts = tmm.stats();
      const int64_t relation_bytes = relation->used_bytes();
      std::string index_mode = "generic";
      if (auto* lr = dynamic_cast<const join::LongHashedRelation*>(relation.get())) {
        index_mode = lr->dense() ? "dense" : "sparse";
      }
      relation->Close();
      std::fprintf(stderr,
                   "join %s: %lld build rows (%lld keys, %s index %s, %.1f B/key), %lld probe rows -> %lld rows; "
                   "build %.3f s, probe %.3f s\n"
                   "memory (%s): relation %s; join pool held %s, peak %s; mapped %s (peak %s)\n",
                   std::string(join::JoinTypeName(type)).c_str(), static_cast<long long>(rs.input_rows),
                   static_cast<long long>(rs.num_keys), index_mode.c_str(), FormatBytes(rs.index_bytes).c_str(),
                   rs.num_keys ? static_cast<double>(rs.index_bytes) / static_cast<double>(rs.num_keys) : 0.0,
                   static_cast<long long>(probe_rows), static_cast<long long>(out_rows), Seconds(t0, t1),
                   Seconds(t1, t2), std::string(join::MemoryModeName(mode)).c_str(),
                   FormatBytes(relation_bytes).c_str(), FormatBytes(join_pool->held_bytes()).c_str(), FormatBytes(join_pool->peak_bytes()).c_str(),
                   FormatBytes(ts.mapped_bytes).c_str(), FormatBytes(ts.peak_mapped_bytes).c_str());
      return Status::OK();
    };
  });
}

// ------------------------------------------------------ generated bench data --
//
// The same generator runs in bench/duckdb_join.mjs (in SQL), so both sides
// join identical data:
//   build row i in [0, N):  p = (i * 2654435761 + 12345) mod N  (a permutation)
//                           bv = i; key = F(p)
//   probe row j in [0, M):  q = splitmix64(j + 24301) mod 2N;  pv = j; key = F(q)
//   F: dense  p -> p
//      sparse p -> (int64) splitmix64(p)
//      dup30  build: p -> (int64) splitmix64(p mod D), D = N - 3N/10 (30% of
//             the build rows repeat a key); probe: q -> (int64) splitmix64(q)
// Result check: count(*) and sum(bv * pv) over the joined pairs.

constexpr uint64_t kPermMul = 2654435761u, kPermAdd = 12345, kProbeSeed = 24301;

constexpr uint64_t SplitMix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

enum class BenchKeys { kDense, kSparse, kDup30 };
const char* BenchKeysName(BenchKeys k) {
  return k == BenchKeys::kDense ? "dense" : k == BenchKeys::kSparse ? "sparse" : "dup30";
}

uint64_t BuildPerm(uint64_t i, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(i) * kPermMul + kPermAdd) % n);
}
int64_t BuildKey(BenchKeys k, uint64_t p, uint64_t n) {
  switch (k) {
    case BenchKeys::kDense: return static_cast<int64_t>(p);
    case BenchKeys::kSparse: return static_cast<int64_t>(SplitMix64(p));
    case BenchKeys::kDup30: return static_cast<int64_t>(SplitMix64(p % (n - 3 * n / 10)));
  }
  return 0;
}
uint64_t ProbeIndex(uint64_t j, uint64_t n) { return SplitMix64(j + kProbeSeed) % (2 * n); }
int64_t ProbeKey(BenchKeys k, uint64_t q) {
  return k == BenchKeys::kDense ? static_cast<int64_t>(q) : static_cast<int64_t>(SplitMix64(q));
}

SchemaPtr TwoInt64(const char* key, const char* value) {
  auto s = std::make_shared<Schema>();
  s->fields = {field(key, int64(), false), field(value, int64(), false)};
  return s;
}

// Batches of (key, value) generated by fn(row) -> {key, value}.
template <typename Fn>
Result<std::vector<RecordBatchPtr>> Generate(const SchemaPtr& schema, int64_t rows, int64_t batch_rows,
                                             MemoryPool* pool, Fn fn) {
  std::vector<RecordBatchPtr> out;
  for (int64_t begin = 0; begin < rows; begin += batch_rows) {
    const int64_t n = std::min(batch_rows, rows - begin);
    QUIVER_ASSIGN_OR_RETURN(auto kb, Buffer::Allocate(pool, std::max<int64_t>(8, n * 8)));
    QUIVER_ASSIGN_OR_RETURN(auto vb, Buffer::Allocate(pool, std::max<int64_t>(8, n * 8)));
    auto* k = reinterpret_cast<int64_t*>(kb->mutable_data());
    auto* v = reinterpret_cast<int64_t*>(vb->mutable_data());
    for (int64_t i = 0; i < n; ++i) {
      const auto kv = fn(begin + i);
      k[i] = kv.first;
      v[i] = kv.second;
    }
    auto b = std::make_shared<RecordBatch>();
    b->schema = schema;
    b->num_rows = n;
    for (auto& buf : {kb, vb}) {
      auto a = std::make_shared<ArrayData>();
      a->type = int64();
      a->length = n;
      a->buffers = {nullptr, buf};
      b->columns.push_back(a);
    }
    out.push_back(b);
  }
  return out;
}

// ------------------------------------------------- relation micro-benchmark --

// A memory configuration of the benchmarks.
struct BenchMemory {
  MemoryMode mode;
  bool huge_pages;
  const char* name;
};
const std::vector<BenchMemory>& BenchMemories() {
  static const std::vector<BenchMemory> all = {{MemoryMode::kOnHeap, false, "on-heap"},
                                               {MemoryMode::kOffHeap, false, "off-heap"},
                                               {MemoryMode::kOffHeap, true, "off-heap+thp"}};
  return all;
}

struct MicroResult {
  std::string name;
  BenchKeys keys;
  int64_t n;
  BenchMemory memory;
  bool dense;
  double build_ns_per_row, cold_build_ns_per_row, prefault_ns_per_row, probe_ns_per_lookup, index_bytes_per_key,
      total_bytes_per_key;
};

// Both memory modes on the same data, rounds interleaved (on-heap,
// off-heap, on-heap, ...); round 0 of each is the cold one.
Result<std::vector<MicroResult>> RunMicro(BenchKeys keys, int64_t n, int rounds, MemoryPool* data_pool,
                                          const std::shared_ptr<MemoryPool>& root) {
  const uint64_t un = static_cast<uint64_t>(n);
  auto schema = TwoInt64("k", "v");
  // Payload = the key index p, so each lookup can be checked on its own.
  QUIVER_ASSIGN_OR_RETURN(auto batches, Generate(schema, n, 1 << 20, data_pool, [&](int64_t i) {
                            const uint64_t p = BuildPerm(static_cast<uint64_t>(i), un);
                            return std::make_pair(BuildKey(keys == BenchKeys::kDup30 ? BenchKeys::kSparse : keys, p, un),
                                                  static_cast<int64_t>(p));
                          }));
  // Lookups in random order (with replacement), all hits.
  std::vector<int64_t> lookup_keys(static_cast<size_t>(n));
  int64_t want_sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t q = SplitMix64(static_cast<uint64_t>(j) ^ 0xABCDEF) % un;
    lookup_keys[j] = keys == BenchKeys::kDense ? static_cast<int64_t>(q) : static_cast<int64_t>(SplitMix64(q));
    want_sum += static_cast<int64_t>(q);
  }
  join::HashedRelationOptions ro;
  ro.key_columns = {0};
  ro.payload_columns = std::vector<int>{1};
  std::vector<const uint8_t*> found(join::HashedRelation::kLookupChunk * 64);
  const std::vector<BenchMemory>& modes = BenchMemories();
  std::vector<MicroResult> results(modes.size());
  std::vector<std::vector<double>> build_s(modes.size()), probe_s(modes.size());
  std::vector<std::shared_ptr<MemoryPool>> pools;
  std::vector<std::unique_ptr<TaskMemoryManager>> tmms;
  for (const BenchMemory& mem : modes) {
    pools.push_back(root->MakeChild({.name = std::string("bench-relation-") + mem.name}));
    TaskMemoryOptions to;
    to.mode = mem.mode;
    to.prefault = true;
    to.retain_freed_bytes = int64_t{8} << 30;
    to.huge_pages = mem.huge_pages;
    tmms.push_back(std::make_unique<TaskMemoryManager>(pools.back().get(), to));
  }
  for (int round = 0; round <= rounds; ++round) {  // round 0: cold
    for (size_t m = 0; m < modes.size(); ++m) {
      TaskMemoryManager& tmm = *tmms[m];
      MicroResult& r = results[m];
      const int64_t fault_before = tmm.stats().prefault_ns;
      const auto t0 = Clock::now();
      QUIVER_ASSIGN_OR_RETURN(auto rel, join::LongHashedRelation::Build(*schema, batches, ro, &tmm));
      const auto t1 = Clock::now();
      const double fault = static_cast<double>(tmm.stats().prefault_ns - fault_before) * 1e-9;
      // Probe: find each key, read its payload.
      int64_t sum = 0, hits = 0;
      const int32_t slot = rel->layout().fields()[0].slot_offset;
      const int64_t step = static_cast<int64_t>(found.size());
      for (int64_t begin = 0; begin < n; begin += step) {
        const int64_t count = std::min(step, n - begin);
        rel->FindBatch(lookup_keys.data() + begin, nullptr, count, found.data());
        for (int64_t j = 0; j < count; ++j) {
          if (found[j]) {
            int64_t v;
            std::memcpy(&v, found[j] + slot, 8);
            sum += v;
            ++hits;
          }
        }
      }
      const auto t2 = Clock::now();
      if (hits != n || sum != want_sum) {
        return Status::Invalid(std::string("bench join: relation lookups found ") + std::to_string(hits) + " of " +
                               std::to_string(n) + " keys (payload sum " + std::to_string(sum) + ", expected " +
                               std::to_string(want_sum) + ")");
      }
      if (round == 0) {
        r.cold_build_ns_per_row = Seconds(t0, t1) * 1e9 / static_cast<double>(n);
        r.prefault_ns_per_row = fault * 1e9 / static_cast<double>(n);
      } else {
        build_s[m].push_back(Seconds(t0, t1) - fault);
        probe_s[m].push_back(Seconds(t1, t2));
      }
      r.dense = rel->dense();
      r.index_bytes_per_key = static_cast<double>(rel->stats().index_bytes) / static_cast<double>(rel->stats().num_keys);
      r.total_bytes_per_key = static_cast<double>(rel->stats().index_bytes + rel->stats().row_bytes) /
                              static_cast<double>(rel->stats().num_keys);
      rel->Close();
    }
  }
  for (size_t m = 0; m < modes.size(); ++m) {
    MicroResult& r = results[m];
    r.keys = keys;
    r.n = n;
    r.memory = modes[m];
    r.build_ns_per_row = Median(build_s[m]) * 1e9 / static_cast<double>(n);
    r.probe_ns_per_lookup = Median(probe_s[m]) * 1e9 / static_cast<double>(n);
    r.name = std::string("relation/") + BenchKeysName(keys) + "/" + std::to_string(n) + "/" + modes[m].name;
  }
  return results;
}

// ----------------------------------------------------- joins vs DuckDB --

struct JoinCheck {
  int64_t rows = 0;
  __int128 checksum = 0;
};

// The expected result, computed without hashing: inverse permutation.
JoinCheck ExpectedJoin(BenchKeys keys, uint64_t n, uint64_t m) {
  // i = (p - B) * A^-1 mod n.
  auto inv_mod = [](int64_t a, int64_t mod) {
    int64_t t = 0, nt = 1, r = mod, nr = a % mod;
    while (nr != 0) {
      const int64_t q = r / nr;
      std::tie(t, nt) = std::make_pair(nt, t - q * nt);
      std::tie(r, nr) = std::make_pair(nr, r - q * nr);
    }
    return t < 0 ? t + mod : t;
  };
  const auto ainv = static_cast<unsigned __int128>(inv_mod(static_cast<int64_t>(kPermMul % n), static_cast<int64_t>(n)));
  auto row_of = [&](uint64_t p) {
    return static_cast<uint64_t>(((static_cast<unsigned __int128>((p + n - kPermAdd % n) % n)) * ainv) % n);
  };
  const uint64_t d = n - 3 * n / 10;
  JoinCheck c;
  for (uint64_t j = 0; j < m; ++j) {
    const uint64_t q = ProbeIndex(j, n);
    if (keys == BenchKeys::kDup30) {
      if (q >= d) continue;
      for (uint64_t p : {q, q + d}) {
        if (p >= n) continue;
        ++c.rows;
        c.checksum += static_cast<__int128>(row_of(p)) * static_cast<__int128>(j);
      }
    } else if (q < n) {
      ++c.rows;
      c.checksum += static_cast<__int128>(row_of(q)) * static_cast<__int128>(j);
    }
  }
  return c;
}

struct JoinTimes {
  double median_s = 0;  // over the measured (warm) rounds
  double cold_s = 0;    // the first round, faulting its pages in
  std::vector<double> warm_s;
};

struct CompareResult {
  std::string name;
  std::vector<JoinTimes> quiver;  // BenchMemories order: on-heap, off-heap, off-heap+thp
  double duckdb_s = -1;
  JoinCheck result;
  std::string duckdb_note;
};

struct BenchKnobs {
  bool verbose = false;  // per-round phase times to stderr
};

// One memory mode's side of a join case: a task memory manager kept across
// rounds (pages pre-faulted once, then reused), the join plan, the check.
class JoinRunner {
 public:
  JoinRunner(BenchKeys keys, const BenchMemory& memory, const std::vector<RecordBatchPtr>& build,
             const std::vector<RecordBatchPtr>& probe, const std::shared_ptr<MemoryPool>& root, const JoinCheck& want,
             const BenchKnobs& knobs)
      : keys_(keys), memory_(memory), build_(build), probe_(probe), want_(want), knobs_(knobs) {
    pool_ = root->MakeChild({.name = std::string("bench-join-") + memory.name});
    TaskMemoryOptions to;
    to.mode = memory.mode;
    to.prefault = true;
    to.retain_freed_bytes = int64_t{8} << 30;
    to.huge_pages = memory.huge_pages;
    tmm_ = std::make_unique<TaskMemoryManager>(pool_.get(), to);
  }

  // One inner join: build, probe every batch into a checksum consumer,
  // close the relation. Returns its wall time in seconds.
  Result<double> Round(int round) {
    if (!join_) {
      HashJoinOptions o;
      o.type = JoinType::kInner;
      o.build_keys = {0};
      o.probe_keys = {0};
      o.build_output = std::vector<int>{1};
      o.probe_output = std::vector<int>{1};
      o.output_pool = pool_.get();
      QUIVER_ASSIGN_OR_RETURN(join_, HashJoin::Make(build_[0]->schema, probe_[0]->schema, o));
    }
    const int64_t fault_before = tmm_->stats().prefault_ns;
    JoinCheck got;
    // The consumer: count and checksum (pv, bv are columns 0 and 1).
    auto sink = [&](RecordBatchPtr b) {
      const auto* pv = reinterpret_cast<const int64_t*>(b->columns[0]->buffers[1]->data()) + b->columns[0]->offset;
      const auto* bv = reinterpret_cast<const int64_t*>(b->columns[1]->buffers[1]->data()) + b->columns[1]->offset;
      __int128 s = 0;
      for (int64_t i = 0; i < b->num_rows; ++i) s += static_cast<__int128>(pv[i] * bv[i]);
      got.checksum += s;
      got.rows += b->num_rows;
      return Status::OK();
    };
    const auto t0 = Clock::now();
    QUIVER_ASSIGN_OR_RETURN(auto relation, join_->BuildRelation(build_, tmm_.get()));
    const auto tb = Clock::now();
    {
      QUIVER_ASSIGN_OR_RETURN(auto prober, join_->MakeProbe(relation));
      for (const auto& b : probe_) QUIVER_RETURN_NOT_OK(prober->Probe(*b, sink));
      QUIVER_RETURN_NOT_OK(prober->Finish(sink));
    }
    const auto tp = Clock::now();
    relation->Close();
    relation.reset();
    const auto t1 = Clock::now();
    if (knobs_.verbose) {
      std::fprintf(stderr, "  %s %s round %d: build %.3f s (prefault %.3f s), probe %.3f s, close %.3f s\n",
                   BenchKeysName(keys_), memory_.name, round, Seconds(t0, tb),
                   static_cast<double>(tmm_->stats().prefault_ns - fault_before) * 1e-9, Seconds(tb, tp),
                   Seconds(tp, t1));
    }
    if (got.rows != want_.rows || got.checksum != want_.checksum) {
      return Status::Invalid(std::string("bench join ") + BenchKeysName(keys_) + ": quiver produced " +
                             std::to_string(got.rows) + " rows, checksum " + Int128ToString(got.checksum) +
                             "; expected " + std::to_string(want_.rows) + ", " + Int128ToString(want_.checksum));
    }
    return Seconds(t0, t1);
  }

 private:
  BenchKeys keys_;
  BenchMemory memory_;
  const std::vector<RecordBatchPtr>& build_;
  const std::vector<RecordBatchPtr>& probe_;
  JoinCheck want_;
  BenchKnobs knobs_;
  std::shared_ptr<MemoryPool> pool_;
  std::unique_ptr<TaskMemoryManager> tmm_;
  std::shared_ptr<const HashJoin> join_;
};

// Every memory configuration (BenchMemories order), rounds interleaved so
// that machine drift hits them alike. Round 0 of each is the cold one.
Result<std::vector<JoinTimes>> TimeQuiverJoins(BenchKeys keys, const std::vector<RecordBatchPtr>& build,
                                               const std::vector<RecordBatchPtr>& probe, int rounds,
                                               const std::shared_ptr<MemoryPool>& root, const JoinCheck& want,
                                               const BenchKnobs& knobs) {
  std::vector<std::unique_ptr<JoinRunner>> runners;
  for (const BenchMemory& mem : BenchMemories()) {
    runners.push_back(std::make_unique<JoinRunner>(keys, mem, build, probe, root, want, knobs));
  }
  std::vector<JoinTimes> times(runners.size());
  for (int round = 0; round <= rounds; ++round) {
    for (size_t i = 0; i < runners.size(); ++i) {
      QUIVER_ASSIGN_OR_RETURN(double s, runners[i]->Round(round));
      if (round == 0) {
        times[i].cold_s = s;
      } else {
        times[i].warm_s.push_back(s);
      }
    }
  }
  for (auto& t : times) t.median_s = Median(t.warm_s);
  return times;
}

// Runs bench/duckdb_join.mjs; returns its JSON, or a note why it could not.
Result<nlohmann::json> RunDuckDb(const std::string& script, BenchKeys keys, int64_t n, int64_t m, int rounds,
                                 std::string* note) {
  const std::string cmd = "node '" + script + "' --case " + BenchKeysName(keys) + " --build-rows " +
                          std::to_string(n) + " --probe-rows " + std::to_string(m) + " --rounds " +
                          std::to_string(rounds) + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) {
    *note = "could not start node";
    return nlohmann::json();
  }
  std::string out;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
  const int rc = pclose(f);
  const auto last = out.find_last_of('{');
  if (rc != 0 || last == std::string::npos) {
    std::string tail = out.substr(out.size() > 300 ? out.size() - 300 : 0);
    for (char& c : tail) {
      if (c == '\n') c = ' ';
    }
    *note = "duckdb side failed (exit " + std::to_string(rc) + "): " + tail;
    return nlohmann::json();
  }
  auto j = nlohmann::json::parse(out.substr(out.rfind("\n{") == std::string::npos ? 0 : out.rfind("\n{") + 1),
                                 nullptr, false);
  if (j.is_discarded()) {
    *note = "duckdb side printed no JSON";
    return nlohmann::json();
  }
  return j;
}

void AddBenchJoinCommand(CLI::App* bench, Context& ctx, Action* action, int* exit_code) {
  auto* cmd = bench->add_subcommand(
      "join", "hashed relation build/probe and hash joins, side by side with DuckDB (threads=1)");
  struct Opts {
    std::string scale = "small", duckdb_script = std::string(QUIVER_BENCH_DIR) + "/duckdb_join.mjs";
    bool json = false, no_duckdb = false, require_duckdb = false, skip_micro = false, verbose = false;
    int rounds = 0;
    std::vector<std::string> cases;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--scale", o->scale, "small (tests: 50K/200K keys, 200K x 400K joins) or full (500K/10M keys, "
                                       "10M x 20M joins)")
      ->check(CLI::IsMember({"small", "full"}));
  cmd->add_flag("--json", o->json, "one JSON object per case and line");
  cmd->add_option("--rounds", o->rounds, "measured rounds per case (default: small 1, full 3); medians")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--case", o->cases, "only these join cases: dense, sparse, dup30 (repeatable)");
  cmd->add_flag("--no-duckdb", o->no_duckdb, "skip the DuckDB side");
  cmd->add_flag("--require-duckdb", o->require_duckdb, "fail when the DuckDB side cannot run");
  cmd->add_flag("--skip-micro", o->skip_micro, "skip the relation micro-benchmarks");
  cmd->add_option("--duckdb-script", o->duckdb_script, "path of duckdb_join.mjs");
  cmd->add_flag("--verbose", o->verbose, "per-round build/prefault/probe times on stderr");
  cmd->callback([&ctx, o, action, exit_code] {
    *action = [&ctx, o, exit_code]() -> Status {
      (void)exit_code;
      const bool full = o->scale == "full";
      const int rounds = o->rounds > 0 ? o->rounds : (full ? 3 : 1);
      auto data_pool = ctx.Child("bench-data");
      auto emit = [&](const nlohmann::json& j) {
        if (o->json) std::printf("%s\n", j.dump().c_str());
        std::fflush(stdout);
      };
      // 1. Relation micro-benchmarks.
      if (!o->skip_micro) {
        if (!o->json) {
          std::printf("relation build and probe: a cold round pre-faults the pages (a write per 4 KiB on-heap, "
                      "MADV_POPULATE_WRITE off-heap; +thp: transparent huge pages), then %d measured round%s reuse "
                      "them (medians); build ns/row excludes the faults, cold ns/row includes them\n",
                      rounds, rounds > 1 ? "s" : "");
          std::printf("%-8s %10s %-12s %-6s %12s %12s %12s %14s %12s %12s\n", "keys", "n", "memory", "index",
                      "build ns/row", "cold ns/row", "fault ns/row", "probe ns/look", "index B/key", "total B/key");
        }
        const std::vector<int64_t> sizes = full ? std::vector<int64_t>{500000, 10000000}
                                                : std::vector<int64_t>{50000, 200000};
        for (int64_t n : sizes) {
          for (BenchKeys k : {BenchKeys::kDense, BenchKeys::kSparse}) {
            auto data = ctx.Child("bench-micro-data");
            QUIVER_ASSIGN_OR_RETURN(auto all, RunMicro(k, n, rounds, data.get(), ctx.root));
            for (const MicroResult& r : all) {
              const MemoryMode mode = r.memory.mode;
              if (!o->json) {
                std::printf("%-8s %10lld %-12s %-6s %12.1f %12.1f %12.1f %14.1f %12.1f %12.1f\n", BenchKeysName(k),
                            static_cast<long long>(n), r.memory.name,
                            r.dense ? "dense" : "sparse", r.build_ns_per_row, r.cold_build_ns_per_row,
                            r.prefault_ns_per_row, r.probe_ns_per_lookup, r.index_bytes_per_key,
                            r.total_bytes_per_key);
              }
              emit({{"case", r.name},
                    {"keys", BenchKeysName(k)},
                    {"n", n},
                    {"memory_mode", join::MemoryModeName(mode)},
                    {"huge_pages", r.memory.huge_pages},
                    {"index", r.dense ? "dense" : "sparse"},
                    {"build_ns_per_row", r.build_ns_per_row},
                    {"cold_build_ns_per_row", r.cold_build_ns_per_row},
                    {"prefault_ns_per_row", r.prefault_ns_per_row},
                    {"probe_ns_per_lookup", r.probe_ns_per_lookup},
                    {"index_bytes_per_key", r.index_bytes_per_key},
                    {"total_bytes_per_key", r.total_bytes_per_key},
                    {"prefault", mode == MemoryMode::kOnHeap ? "touch per 4 KiB, reused"
                                 : r.memory.huge_pages     ? "MADV_POPULATE_WRITE with THP, reused"
                                                           : "MADV_POPULATE_WRITE, reused"}});
            }
          }
        }
      }
      // 2. The same joins as DuckDB, side by side.
      const int64_t n = full ? 10000000 : 200000;
      const int64_t m = 2 * n;
      std::vector<BenchKeys> cases;
      for (BenchKeys k : {BenchKeys::kDense, BenchKeys::kSparse, BenchKeys::kDup30}) {
        if (o->cases.empty() || std::find(o->cases.begin(), o->cases.end(), BenchKeysName(k)) != o->cases.end()) {
          cases.push_back(k);
        }
      }
      if (!o->json) {
        std::printf("\ninner joins, %lld-row build x %lld-row probe, quiver (1 thread; warm medians, cold first "
                    "rounds) vs DuckDB (threads=1, median); same data and result (row count, sum(bv*pv)); "
                    "quiver_s = off-heap, ratio = duckdb_s / quiver_s\n",
                    static_cast<long long>(n), static_cast<long long>(m));
        std::printf("%-6s %9s %22s %9s %9s %9s %9s %9s %9s %9s %7s\n", "case", "rows", "checksum", "quiver_s",
                    "on-heap_s", "thp_s", "cold_s", "on-cold_s", "thp-cold", "duckdb_s", "ratio");
      }
      bool duckdb_failed = false;
      for (BenchKeys k : cases) {
        CompareResult c;
        c.name = std::string("join/") + BenchKeysName(k);
        nlohmann::json duck;
        if (!o->no_duckdb) {
          QUIVER_ASSIGN_OR_RETURN(duck, RunDuckDb(o->duckdb_script, k, n, m, rounds, &c.duckdb_note));
        } else {
          c.duckdb_note = "skipped (--no-duckdb)";
        }
        const uint64_t un = static_cast<uint64_t>(n);
        QUIVER_ASSIGN_OR_RETURN(auto build, Generate(TwoInt64("k", "bv"), n, 1 << 16, data_pool.get(), [&](int64_t i) {
                                  const uint64_t p = BuildPerm(static_cast<uint64_t>(i), un);
                                  return std::make_pair(BuildKey(k, p, un), i);
                                }));
        QUIVER_ASSIGN_OR_RETURN(auto probe, Generate(TwoInt64("k", "pv"), m, 1 << 16, data_pool.get(), [&](int64_t j) {
                                  return std::make_pair(ProbeKey(k, ProbeIndex(static_cast<uint64_t>(j), un)), j);
                                }));
        c.result = ExpectedJoin(k, un, static_cast<uint64_t>(m));
        const BenchKnobs knobs{o->verbose};
        QUIVER_ASSIGN_OR_RETURN(c.quiver, TimeQuiverJoins(k, build, probe, rounds, ctx.root, c.result, knobs));
        const JoinTimes& on = c.quiver[0];
        const JoinTimes& off = c.quiver[1];
        const JoinTimes& thp = c.quiver[2];
        if (!duck.is_null()) {
          const std::string drows = duck.value("rows", std::string("?"));
          const std::string dsum = duck.value("checksum", std::string("?"));
          if (drows != std::to_string(c.result.rows) || dsum != Int128ToString(c.result.checksum)) {
            return Status::Invalid("bench join " + c.name + ": DuckDB produced " + drows + " rows, checksum " + dsum +
                                   "; quiver " + std::to_string(c.result.rows) + ", " +
                                   Int128ToString(c.result.checksum));
          }
          c.duckdb_s = duck.value("median_s", -1.0);
        } else {
          duckdb_failed = !o->no_duckdb;
        }
        const double ratio = c.duckdb_s > 0 ? c.duckdb_s / off.median_s : 0;
        if (!o->json) {
          std::printf("%-6s %9lld %22s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9s %7s\n", BenchKeysName(k),
                      static_cast<long long>(c.result.rows), Int128ToString(c.result.checksum).c_str(), off.median_s,
                      on.median_s, thp.median_s, off.cold_s, on.cold_s, thp.cold_s,
                      c.duckdb_s > 0 ? std::to_string(c.duckdb_s).substr(0, 6).c_str() : "-",
                      c.duckdb_s > 0 ? std::to_string(ratio).substr(0, 5).c_str() : "-");
          if (c.duckdb_s <= 0) std::printf("         duckdb: %s\n", c.duckdb_note.c_str());
        }
        nlohmann::json j = {{"case", c.name},
                            {"quiver_s", off.median_s},
                            {"quiver_on_heap_s", on.median_s},
                            {"quiver_thp_s", thp.median_s},
                            {"quiver_cold_s", off.cold_s},
                            {"quiver_on_heap_cold_s", on.cold_s},
                            {"quiver_thp_cold_s", thp.cold_s},
                            {"rows", c.result.rows},
                            {"checksum", Int128ToString(c.result.checksum)},
                            {"build_rows", n},
                            {"probe_rows", m}};
        if (c.duckdb_s > 0) {
          j["duckdb_s"] = c.duckdb_s;
          j["ratio"] = ratio;
        } else {
          j["duckdb_s"] = nullptr;
          j["ratio"] = nullptr;
          j["duckdb_note"] = c.duckdb_note;
        }
        emit(j);
      }
      if (duckdb_failed && o->require_duckdb) return Status::IOError("the DuckDB side could not run (see above)");
      return Status::OK();
    };
  });
}

}  // namespace

void AddJoin(CLI::App& app, Context& ctx, Action* action, int* exit_code) {
  AddJoinCommand(app, ctx, action);
  CLI::App* bench = nullptr;
  try {
    bench = app.get_subcommand("bench");
  } catch (const CLI::Error&) {
    bench = nullptr;
  }
  if (bench != nullptr) AddBenchJoinCommand(bench, ctx, action, exit_code);
}

}  // namespace quiver::cli
