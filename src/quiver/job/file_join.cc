// quiver/job/file_join.cc — see file_join.h.
#include "quiver/job/file_join.h"

#include <chrono>
#include <cstdio>
#include <string_view>

#include "quiver/base/byte_size.h"
#include "quiver/compression/codec.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/join/hash_join.h"
#include "quiver/join/long_hashed_relation.h"

namespace quiver::job {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double>(end - begin).count();
}

std::string ColumnNames(const Schema& schema) {
  std::string names;
  for (const auto& f : schema.fields) names += (names.empty() ? "" : ", ") + f->name;
  return names;
}

}  // namespace

Status ResolveJoinKeys(const std::string& spec, const Schema& build, const std::string& build_path, const Schema& probe,
                       const std::string& probe_path, std::vector<int>* build_keys, std::vector<int>* probe_keys) {
  auto malformed = [&] { return Status::Invalid("--on '" + spec + "': expected BUILD_COL=PROBE_COL[,...]"); };
  auto trim = [](std::string_view v) {
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    return std::string(v);
  };
  std::string_view rest = spec;
  while (true) {  // every comma-separated piece, empty ones (",," or a trailing ",") included
    const size_t comma = rest.find(',');
    const std::string_view pair = rest.substr(0, comma);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos || pair.find('=', eq + 1) != std::string_view::npos) return malformed();
    const std::string b = trim(pair.substr(0, eq)), p = trim(pair.substr(eq + 1));
    if (b.empty() || p.empty()) return malformed();
    const int bi = build.FieldIndex(b);
    if (bi < 0) {
      return Status::KeyError("build column '" + b + "' is not in " + build_path + " (columns: " + ColumnNames(build) +
                              ")");
    }
    const int pi = probe.FieldIndex(p);
    if (pi < 0) {
      return Status::KeyError("probe column '" + p + "' is not in " + probe_path + " (columns: " + ColumnNames(probe) +
                              ")");
    }
    build_keys->push_back(bi);
    probe_keys->push_back(pi);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return Status::OK();
}

Result<FileJoinResult> RunFileJoin(const FileJoinOptions& o, const std::shared_ptr<MemoryPool>& root) {
  // Everything that can be refused is checked before any work.
  QUIVER_ASSIGN_OR_RETURN(join::JoinType type, join::ParseJoinType(o.type));
  QUIVER_ASSIGN_OR_RETURN(join::MemoryMode mode, join::ParseMemoryMode(o.memory_mode));
  QUIVER_ASSIGN_OR_RETURN(CompressionType codec, ParseCompressionType(o.compression));
  if (o.build_path == "-" && o.probe_path == "-") return Status::Invalid("--build and --probe cannot both be stdin");
  auto join_pool = root->MakeChild({.name = "join", .limit_bytes = o.memory_limit_bytes});
  auto read_pool = root->MakeChild({.name = "read"});
  auto write_pool = root->MakeChild({.name = "write"});
  ipc::ReadOptions ro;
  ro.pool = read_pool.get();
  auto build_reader = ipc::RecordBatchReader::OpenPath(o.build_path, ro);
  if (!build_reader.ok()) return build_reader.status().WithContext("--build " + o.build_path);
  auto probe_reader = ipc::RecordBatchReader::OpenPath(o.probe_path, ro);
  if (!probe_reader.ok()) return probe_reader.status().WithContext("--probe " + o.probe_path);
  join::HashJoinOptions jopt;
  jopt.type = type;
  jopt.output_pool = join_pool.get();
  jopt.max_output_rows = o.max_output_rows;
  jopt.max_output_bytes = o.max_output_bytes;
  QUIVER_RETURN_NOT_OK(ResolveJoinKeys(o.on, *(*build_reader)->schema(), o.build_path, *(*probe_reader)->schema(),
                                       o.probe_path, &jopt.build_keys, &jopt.probe_keys));
  QUIVER_ASSIGN_OR_RETURN(auto join, join::HashJoin::Make((*build_reader)->schema(), (*probe_reader)->schema(), jopt));

  // Build (the output is opened only once the relation stands).
  const auto t0 = Clock::now();
  auto build_batches = ipc::ReadAllBatches(build_reader->get());
  if (!build_batches.ok()) return build_batches.status().WithContext("--build " + o.build_path);
  join::TaskMemoryOptions to;
  to.mode = mode;
  to.huge_pages = o.huge_pages;
  to.prefault = o.prefault;
  join::TaskMemoryManager tmm(join_pool.get(), to);
  QUIVER_ASSIGN_OR_RETURN(auto relation, join->BuildRelation(*build_batches, &tmm));
  build_batches->clear();  // the relation holds the rows now
  const auto t1 = Clock::now();

  // Probe, writing each output batch; committed only on success.
  QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(o.output_path));
  ipc::WriteOptions wo;
  wo.pool = write_pool.get();
  wo.compression = codec;
  QUIVER_ASSIGN_OR_RETURN(
      auto writer, ipc::RecordBatchWriter::Make(sink.get(), join->output_schema(),
                                                o.file_format ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream, wo));
  QUIVER_ASSIGN_OR_RETURN(auto probe, join->MakeProbe(relation));
  FileJoinResult r;
  auto write = [&](RecordBatchPtr b) { return writer->WriteBatch(*b); };
  while (true) {
    auto next = (*probe_reader)->Next();
    if (!next.ok()) return next.status().WithContext("--probe " + o.probe_path);
    if (!*next) break;
    r.probe_rows += (*next)->num_rows;
    QUIVER_RETURN_NOT_OK(probe->Probe(**next, write));
  }
  QUIVER_RETURN_NOT_OK(probe->Finish(write));
  QUIVER_RETURN_NOT_OK(writer->Close());
  QUIVER_RETURN_NOT_OK(sink->Commit());
  const auto t2 = Clock::now();

  r.type = std::string(join::JoinTypeName(type));
  r.memory_mode = std::string(join::MemoryModeName(mode));
  r.output_rows = probe->output_rows();
  probe.reset();
  const join::RelationStats rs = relation->stats();
  r.build_rows = rs.input_rows;
  r.num_keys = rs.num_keys;
  r.index_bytes = rs.index_bytes;
  r.index_mode = "generic";
  if (auto* lr = dynamic_cast<const join::LongHashedRelation*>(relation.get())) {
    r.index_mode = lr->dense() ? "dense" : "sparse";
  }
  r.build_seconds = Seconds(t0, t1);
  r.probe_seconds = Seconds(t1, t2);
  r.relation_bytes = relation->used_bytes();
  const auto ts = tmm.stats();
  r.mapped_bytes = ts.mapped_bytes;
  r.peak_mapped_bytes = ts.peak_mapped_bytes;
  relation->Close();
  r.join_held_bytes = join_pool->held_bytes();
  r.join_peak_bytes = join_pool->peak_bytes();
  return r;
}

std::string FormatFileJoinReport(const FileJoinResult& r) {
  const double per_key = r.num_keys ? static_cast<double>(r.index_bytes) / static_cast<double>(r.num_keys) : 0.0;
  char line[1024];
  std::snprintf(line, sizeof line,
                "join %s: %lld build rows (%lld keys, %s index %s, %.1f B/key), %lld probe rows -> %lld rows; "
                "build %.3f s, probe %.3f s\n",
                r.type.c_str(), static_cast<long long>(r.build_rows), static_cast<long long>(r.num_keys),
                r.index_mode.c_str(), FormatBytes(r.index_bytes).c_str(), per_key, static_cast<long long>(r.probe_rows),
                static_cast<long long>(r.output_rows), r.build_seconds, r.probe_seconds);
  std::string out = line;
  out += "memory (" + r.memory_mode + "): relation " + FormatBytes(r.relation_bytes) + "; join pool held " +
         FormatBytes(r.join_held_bytes) + ", peak " + FormatBytes(r.join_peak_bytes) + "; mapped " +
         FormatBytes(r.mapped_bytes) + " (peak " + FormatBytes(r.peak_mapped_bytes) + ")\n";
  return out;
}

}  // namespace quiver::job
