// quiver join: a hash join of two Arrow IPC inputs, with the build side in a
// hashed relation in on-heap or off-heap memory, and a memory report.
// quiver bench join: the options of the join benchmark
// (quiver/bench/join_bench.h), which runs it.
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "quiver/bench/join_bench.h"
#include "quiver/bench/measure.h"
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

using bench::Clock;
using bench::Seconds;

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
      return Status::KeyError("build column '" + b + "' is not in " + build_path +
                              " (columns: " + columns_of(*build.schema()) + ")");
    }
    const int pi = probe.schema()->FieldIndex(p);
    if (pi < 0) {
      return Status::KeyError("probe column '" + p + "' is not in " + probe_path +
                              " (columns: " + columns_of(*probe.schema()) + ")");
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
    std::string build, probe, on, type = "inner", mode = "on-heap", out = "-", compression = "none", format = "stream";
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
      QUIVER_ASSIGN_OR_RETURN(join::JoinType type, join::ParseJoinType(o->type));
      QUIVER_ASSIGN_OR_RETURN(join::MemoryMode mode, join::ParseMemoryMode(o->mode));
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
      join::HashJoinOptions jopt;
      jopt.type = type;
      jopt.output_pool = join_pool.get();
      jopt.max_output_rows = o->max_rows;
      jopt.max_output_bytes = o->max_bytes;
      QUIVER_RETURN_NOT_OK(
          ParseOnSpec(o->on, **build_reader, o->build, **probe_reader, o->probe, &jopt.build_keys, &jopt.probe_keys));
      QUIVER_ASSIGN_OR_RETURN(auto join,
                              join::HashJoin::Make((*build_reader)->schema(), (*probe_reader)->schema(), jopt));
      // Build (the output is opened only once the relation stands).
      const auto t0 = Clock::now();
      auto build_batches = ipc::ReadAllBatches(build_reader->get());
      if (!build_batches.ok()) return build_batches.status().WithContext("--build " + o->build);
      join::TaskMemoryOptions to;
      to.mode = mode;
      to.huge_pages = o->huge_pages;
      to.prefault = o->prefault;
      join::TaskMemoryManager tmm(join_pool.get(), to);
      QUIVER_ASSIGN_OR_RETURN(auto relation, join->BuildRelation(*build_batches, &tmm));
      build_batches->clear();  // the relation holds the rows now
      const auto t1 = Clock::now();
      const join::RelationStats rs = relation->stats();
      QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(o->out));  // committed on success only
      ipc::WriteOptions wo;
      wo.pool = write_pool.get();
      wo.compression = codec;
      QUIVER_ASSIGN_OR_RETURN(
          auto writer,
          ipc::RecordBatchWriter::Make(sink.get(), join->output_schema(),
                                       o->format == "file" ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream, wo));
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
                   FormatBytes(relation_bytes).c_str(), FormatBytes(join_pool->held_bytes()).c_str(),
                   FormatBytes(join_pool->peak_bytes()).c_str(), FormatBytes(ts.mapped_bytes).c_str(),
                   FormatBytes(ts.peak_mapped_bytes).c_str());
      return Status::OK();
    };
  });
}

void AddBenchJoinCommand(CLI::App* bench, Context& ctx, Action* action, int* exit_code) {
  auto* cmd =
      bench->add_subcommand("join", "hashed relation build/probe and hash joins, side by side with DuckDB (threads=1)");
  struct Opts {
    std::string scale = "small", duckdb_script = std::string(QUIVER_BENCH_DIR) + "/duckdb_join.mjs";
    bool json = false, no_duckdb = false, require_duckdb = false, skip_micro = false, verbose = false;
    int rounds = 0;
    std::vector<std::string> cases;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--scale", o->scale,
                  "small (tests: 50K/200K keys, 200K x 400K joins) or full (500K/10M keys, "
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
      bench::JoinBenchOptions bo;
      bo.full = o->scale == "full";
      bo.rounds = o->rounds;
      bo.json = o->json;
      bo.cases = o->cases;
      bo.no_duckdb = o->no_duckdb;
      bo.require_duckdb = o->require_duckdb;
      bo.skip_micro = o->skip_micro;
      bo.verbose = o->verbose;
      bo.duckdb_script = o->duckdb_script;
      return bench::RunJoinBench(bo, ctx.root, stdout);
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
