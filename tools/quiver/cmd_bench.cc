// quiver bench ipc: write and read throughput of one Arrow file under a
// codec, measured in memory (no disk), medians over rounds. The output
// sink's memory is reserved once and reused across rounds, and the pool's
// freed blocks are reused by the allocator, so rounds after the warm-up do
// not pay first-touch page faults.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "quiver/bench/measure.h"
#include "quiver/cli.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"

namespace quiver::cli {

using bench::Median;
using bench::Seconds;

void AddBench(CLI::App& app, Context& ctx, Action* action, int* exit_code) {
  auto* bench = app.add_subcommand("bench", "benchmarks (side-by-side comparisons live in bench/)");
  bench->require_subcommand(1);
  AddBenchCompress(bench, ctx, action, exit_code);
  AddBenchFetch(bench, ctx, action);  // --- bench fetch (issue 8) ---
  AddBenchTpch(bench, ctx, action);
  AddBenchTpcds(bench, ctx, action);
  auto* cmd = bench->add_subcommand("ipc", "in-memory IPC write and read throughput of a file under a codec");
  struct Opts {
    std::string path, codec = "zstd", format = "stream";
    int level = Codec::kUseDefaultLevel;
    int rounds = 15;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("FILE", o->path, "Arrow IPC file or stream")->required();
  cmd->add_option("--codec", o->codec, "none|lz4|zstd")->check(ParsedBy(ParseCompressionType, "CODEC"));
  cmd->add_option("--level", o->level, "codec level");
  cmd->add_option("--format", o->format, "stream|file")->check(CLI::IsMember({"stream", "file"}));
  cmd->add_option("--rounds", o->rounds, "measured rounds (after 2 warm-up rounds)")->check(CLI::Range(1, 1000));
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(CompressionType codec, ParseCompressionType(o->codec));
      auto pool = ctx.Child("bench");
      ipc::ReadOptions ro;
      ro.pool = pool.get();
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(o->path, ro));
      QUIVER_ASSIGN_OR_RETURN(auto batches, ipc::ReadAllBatches(reader.get()));
      const ipc::IpcFormat format = o->format == "file" ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream;
      ipc::WriteOptions wo;
      wo.pool = pool.get();
      wo.compression = codec;
      wo.level = o->level;
      ipc::BufferOutputStream sink;
      ipc::WriteStats ws;
      std::vector<double> write_s, read_s;
      int64_t rows = 0;
      for (int round = 0; round < o->rounds + 2; ++round) {
        sink.mutable_bytes().clear();  // keeps its capacity: no new page faults
        auto t0 = std::chrono::steady_clock::now();
        QUIVER_RETURN_NOT_OK(ipc::WriteTable(&sink, reader->schema(), batches, format, wo, 0, &ws));
        auto t1 = std::chrono::steady_clock::now();
        ipc::ReadOptions bo;
        bo.pool = pool.get();
        QUIVER_ASSIGN_OR_RETURN(
            auto back, ipc::RecordBatchReader::Open(Buffer::Unowned(sink.bytes().data(), sink.position()), bo));
        QUIVER_ASSIGN_OR_RETURN(auto got, ipc::ReadAllBatches(back.get()));
        auto t2 = std::chrono::steady_clock::now();
        rows = 0;
        for (const auto& b : got) rows += b->num_rows;
        if (round >= 2) {
          write_s.push_back(Seconds(t0, t1));
          read_s.push_back(Seconds(t1, t2));
        }
      }
      const double mib = static_cast<double>(ws.uncompressed_body_bytes) / (1 << 20);
      const double w = Median(write_s), r = Median(read_s);
      if (o->json) {
        std::printf(
            "{\"impl\": \"quiver\", \"file\": \"%s\", \"codec\": \"%s\", \"format\": \"%s\", \"rows\": %lld, "
            "\"buffer_bytes\": %lld, \"ipc_bytes\": %lld, \"write_median_s\": %.6f, \"read_median_s\": %.6f, "
            "\"write_mib_s\": %.1f, \"read_mib_s\": %.1f, \"rounds\": %d}\n",
            o->path.c_str(), std::string(CompressionTypeName(codec)).c_str(), o->format.c_str(),
            static_cast<long long>(rows), static_cast<long long>(ws.uncompressed_body_bytes),
            static_cast<long long>(ws.total_bytes), w, r, mib / w, mib / r, o->rounds);
      } else {
        std::printf(
            "%s codec %s (%s): %lld rows, %s of buffers -> %lld B IPC; write median %.3f ms (%.0f MiB/s), "
            "read median %.3f ms (%.0f MiB/s) over %d rounds\n",
            o->path.c_str(), std::string(CompressionTypeName(codec)).c_str(), o->format.c_str(),
            static_cast<long long>(rows), FormatBytes(ws.uncompressed_body_bytes).c_str(),
            static_cast<long long>(ws.total_bytes), w * 1e3, mib / w, r * 1e3, mib / r, o->rounds);
      }
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
