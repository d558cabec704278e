// quiver demo: the main job on its embedded default. For now (foundation
// issue): for each real-world Arrow file, its schema, the first rows, and a
// ZSTD conversion with its sizes and the memory held and peak of each stage,
// checked by reading the conversion back.
#include <cstdio>
#include <algorithm>
#include <filesystem>

#include "quiver/cli.h"
#include "quiver/columnar/compare.h"
#include "quiver/columnar/value_format.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"

#ifndef QUIVER_DEFAULT_DATA_DIR
#define QUIVER_DEFAULT_DATA_DIR "../shared/data/real-world"
#endif

namespace quiver::cli {
namespace {

Status RunOne(Context& ctx, const std::string& path, int64_t rows_to_show) {
  std::printf("== %s\n", path.c_str());
  auto read_pool = ctx.Child("read");
  ipc::ReadOptions ro;
  ro.pool = read_pool.get();
  QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(path, ro));
  QUIVER_ASSIGN_OR_RETURN(auto batches, ipc::ReadAllBatches(reader.get()));
  int64_t rows = 0;
  for (const auto& b : batches) rows += b->num_rows;
  std::printf("format %s, metadata %s, %zu batches, %lld rows\n",
              std::string(ipc::IpcFormatName(reader->format())).c_str(), reader->metadata_version().c_str(),
              batches.size(), static_cast<long long>(rows));
  std::printf("schema:\n%s\n", reader->schema()->ToString().c_str());
  std::printf("first rows:\n");
  int64_t shown = 0;
  std::string line, v;
  for (const auto& b : batches) {
    for (int64_t r = 0; r < b->num_rows && shown < rows_to_show; ++r, ++shown) {
      line = "  ";
      for (size_t c = 0; c < b->columns.size(); ++c) {
        v.clear();
        FormatValue(*b->columns[c], r, ValueFormat::kText, &v);
        line += (c ? " | " : "") + v;
      }
      std::printf("%s\n", line.c_str());
    }
  }
  const int64_t read_held = read_pool->held_bytes(), read_peak = read_pool->peak_bytes();
  // Convert to ZSTD in memory, then read it back and compare.
  auto write_pool = ctx.Child("write-zstd");
  ipc::WriteOptions wo;
  wo.pool = write_pool.get();
  wo.compression = CompressionType::kZstd;
  ipc::BufferOutputStream sink;
  ipc::WriteStats ws;
  QUIVER_RETURN_NOT_OK(ipc::WriteTable(&sink, reader->schema(), batches, reader->format(), wo, 0, &ws));
  auto back_pool = ctx.Child("read-back");
  ipc::ReadOptions bo;
  bo.pool = back_pool.get();
  QUIVER_ASSIGN_OR_RETURN(auto back_reader,
                          ipc::RecordBatchReader::Open(Buffer::Unowned(sink.bytes().data(), sink.position()), bo));
  QUIVER_ASSIGN_OR_RETURN(auto back, ipc::ReadAllBatches(back_reader.get()));
  Status same = back.size() == batches.size() ? Status::OK() : Status::Invalid("batch count differs");
  for (size_t i = 0; same.ok() && i < back.size(); ++i) same = CompareBatches(*batches[i], *back[i], CompareOptions{});
  std::printf("zstd conversion: %lld B of buffers -> body %lld B (%.2fx), %lld B in all; round trip: %s\n",
              static_cast<long long>(ws.uncompressed_body_bytes), static_cast<long long>(ws.body_bytes),
              static_cast<double>(ws.uncompressed_body_bytes) / std::max<int64_t>(1, ws.body_bytes),
              static_cast<long long>(ws.total_bytes), same.ok() ? "identical" : same.ToString().c_str());
  std::printf("memory (allocator %s): read held %s peak %s | zstd write held %s peak %s | read-back held %s peak %s\n\n",
              std::string(read_pool->allocator()->name()).c_str(), FormatBytes(read_held).c_str(),
              FormatBytes(read_peak).c_str(), FormatBytes(write_pool->held_bytes()).c_str(),
              FormatBytes(write_pool->peak_bytes()).c_str(), FormatBytes(back_pool->held_bytes()).c_str(),
              FormatBytes(back_pool->peak_bytes()).c_str());
  return same;
}

}  // namespace

void AddDemo(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("demo", "the main job: inspect and ZSTD-convert the real-world Arrow files");
  struct Opts {
    std::vector<std::string> paths;
    int64_t rows = 5;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("PATHS", o->paths, "files or folders (default: the shared real-world data)");
  cmd->add_option("--rows", o->rows, "rows to show per file");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      std::vector<std::string> inputs = o->paths;
      if (inputs.empty()) inputs.push_back(QUIVER_DEFAULT_DATA_DIR);
      std::vector<std::string> files;
      for (const auto& p : inputs) {
        std::error_code ec;
        if (std::filesystem::is_directory(p, ec)) {
          for (const auto& e : std::filesystem::recursive_directory_iterator(p, ec)) {
            const auto ext = e.path().extension().string();
            if (e.is_regular_file() && (ext == ".arrow" || ext == ".arrows" || ext == ".stream" || ext == ".arrow_file")) {
              files.push_back(e.path().string());
            }
          }
        } else {
          files.push_back(p);
        }
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) return Status::IOError("no input files found");
      for (const auto& f : files) QUIVER_RETURN_NOT_OK(RunOne(ctx, f, o->rows));
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
