// quiver/bench/compress_bench.cc — `quiver bench compress`: the memory study
// of the write path (Spark BoundedZstdCompressionCodec change). For each
// batch of the reference change and each output policy: vectors,
// compressed, held (what the unloaded batch holds on top of its vectors
// until it is serialized) and peak (the highest point during unloading)
// from the pool counters; a check that the serialized bytes are identical
// across policies; the thread CPU time of unloading plus releasing relative
// to `keep` (1 and 2 threads); and the codec throughput against calling
// libzstd / liblz4 directly on the same buffers. Memory is reused between
// rounds (the allocator gets back the same blocks), so rounds after the
// first do not measure page faults.
#include "quiver/bench/compress_bench.h"

#include <lz4frame.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "quiver/bench/measure.h"
#include "quiver/datagen/batch_generator.h"
#include "quiver/ipc/batch_unloader.h"
#include "quiver/ipc/writer.h"

namespace quiver::bench {
namespace {

constexpr OutputPolicy kPolicies[] = {OutputPolicy::kKeep, OutputPolicy::kShrinkIfHalves, OutputPolicy::kExact};
constexpr double kMiB = 1 << 20;

struct BatchSpec {
  std::string name;
  datagen::GenKind kind;
  int64_t rows;
  int64_t max_bytes;  // 0 = no cap
};

std::vector<BatchSpec> Specs(bool small) {
  const int64_t d = small ? 100 : 1;
  return {
      {"bigint-seq 10,000 rows", datagen::GenKind::kBigintSeq, 10000 / d, 0},
      {"lineitem 10,000 rows", datagen::GenKind::kLineitem, 10000 / d, 0},
      {"lineitem 1,000,000 rows", datagen::GenKind::kLineitem, 1000000 / d, 0},
      {"lineitem 64 MB limit", datagen::GenKind::kLineitem, 10000000 / d, (int64_t{64} << 20) / d},
      {"text 64 MB limit", datagen::GenKind::kText, 1000000 / d, (int64_t{64} << 20) / d},
      {"uuid 1,000,000 rows", datagen::GenKind::kUuid, 1000000 / d, 0},
      {"bigint-random 1,000,000 rows", datagen::GenKind::kBigintRandom, 1000000 / d, 0},
  };
}

/// One policy's unloading machinery: pools and a compressor, reused across rounds.
struct PolicyRig {
  std::shared_ptr<MemoryPool> parent, outputs, scratch;
  std::unique_ptr<BufferCompressor> compressor;
};

Result<PolicyRig> MakeRig(MemoryPool* root, OutputPolicy policy, const BodyCompressionOptions& base,
                          RoundingPolicy rounding, const std::string& tag) {
  PolicyRig rig;
  rig.parent = root->MakeChild({"unload-" + std::string(OutputPolicyName(policy)) + tag, -1, rounding});
  rig.outputs = rig.parent->MakeChild({"outputs", -1, rounding});
  rig.scratch = rig.parent->MakeChild({"scratch", -1, rounding});
  BodyCompressionOptions o = base;
  o.output_policy = policy;
  QUIVER_ASSIGN_OR_RETURN(rig.compressor, BufferCompressor::Make(o, rig.outputs.get(), rig.scratch.get()));
  return rig;
}

struct PolicyResult {
  double held_mib = 0, peak_mib = 0;
  double cpu_ratio = 1, cpu_ratio_2t = 1;
  int64_t rss_held_bytes = -1;  // RSS growth while the unloaded batch is held
  std::vector<uint8_t> bytes;   // the serialized batch
};

Result<std::vector<uint8_t>> Serialize(const SchemaPtr& schema, const ipc::UnloadedBatch& u, MemoryPool* pool,
                                       const BodyCompressionOptions& o) {
  ipc::BufferOutputStream sink;
  ipc::WriteOptions wo;
  wo.pool = pool;
  wo.compression = o.codec;
  wo.level = o.level;
  QUIVER_ASSIGN_OR_RETURN(auto w, ipc::RecordBatchWriter::Make(&sink, schema, ipc::IpcFormat::kStream, wo));
  QUIVER_RETURN_NOT_OK(w->WriteUnloaded(u));
  QUIVER_RETURN_NOT_OK(w->Close());
  return std::move(sink.mutable_bytes());
}

/// Thread CPU time of one unload + release for every policy, interleaved
/// round by round (rotating which policy goes first) so that drift of the
/// machine hits all policies alike. Returns, per policy, each round's time
/// relative to keep's time in the same round.
Result<std::map<OutputPolicy, std::vector<double>>> InterleavedCpuRatios(MemoryPool* root, const RecordBatch& batch,
                                                                         const BodyCompressionOptions& base,
                                                                         RoundingPolicy rounding, int rounds,
                                                                         const std::string& tag) {
  std::map<OutputPolicy, PolicyRig> rigs;
  for (OutputPolicy p : kPolicies) {
    QUIVER_ASSIGN_OR_RETURN(rigs[p], MakeRig(root, p, base, rounding, tag));
  }
  std::map<OutputPolicy, std::vector<double>> ratios;
  for (int r = -1; r < rounds; ++r) {  // round -1 warms every rig up
    std::map<OutputPolicy, double> t;
    for (int k = 0; k < 3; ++k) {
      const OutputPolicy p = kPolicies[(k + std::max(r, 0)) % 3];
      PolicyRig& rig = rigs[p];
      const double t0 = ThreadCpuSeconds();
      {
        ipc::BatchUnloader unloader(rig.outputs.get(), rig.compressor.get());
        QUIVER_ASSIGN_OR_RETURN(auto u, unloader.Unload(batch));
      }
      t[p] = ThreadCpuSeconds() - t0;
    }
    if (r < 0) continue;
    for (OutputPolicy p : kPolicies)
      ratios[p].push_back(t[OutputPolicy::kKeep] > 0 ? t[p] / t[OutputPolicy::kKeep] : 1);
  }
  return ratios;
}

/// Codec throughput on the batch's buffers: the raw library call, quiver's
/// Codec (same pre-faulted output buffer, same frame settings) and the whole
/// write path (BufferCompressor with the default policy, which also
/// allocates and fills the outputs' memory), interleaved per round, thread
/// CPU time. Returns {raw/codec, raw/write-path} time ratios (1.0 = as fast
/// as the raw library).
struct ThroughputRatios {
  double codec = 1, write_path = 1;
};

Result<ThroughputRatios> RawLibraryRatios(const RecordBatch& batch, const BodyCompressionOptions& o, MemoryPool* pool,
                                          int rounds) {
  ipc::BatchUnloader plain(pool, nullptr);
  QUIVER_ASSIGN_OR_RETURN(auto u, plain.Unload(batch));
  std::vector<std::shared_ptr<Buffer>> inputs;
  int64_t max_in = 0;
  for (const auto& r : u.regions) {
    if (r.bytes && r.bytes->size() > 0) {
      inputs.push_back(r.bytes);
      max_in = std::max(max_in, r.bytes->size());
    }
  }
  QUIVER_ASSIGN_OR_RETURN(auto rig, MakeRig(pool, kDefaultOutputPolicy, o, RoundingPolicy::kExact, "-tput"));
  QUIVER_ASSIGN_OR_RETURN(auto codec, Codec::Make(o.codec, o.level));
  std::vector<uint8_t> out(
      static_cast<size_t>(std::max<size_t>(ZSTD_compressBound(max_in), LZ4F_compressFrameBound(max_in, nullptr)) + 64));
  std::fill(out.begin(), out.end(), 0);  // pre-fault
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  LZ4F_cctx* lctx = nullptr;
  LZ4F_createCompressionContext(&lctx, LZ4F_VERSION);
  LZ4F_preferences_t prefs{};
  prefs.compressionLevel = codec->level();
  std::vector<double> raw_t, codec_t, path_t;
  for (int r = 0; r < rounds + 1; ++r) {
    const double t0 = ThreadCpuSeconds();
    for (const auto& in : inputs) {
      size_t n;
      if (o.codec == CompressionType::kZstd) {
        n = ZSTD_compressCCtx(cctx, out.data(), out.size(), in->data(), static_cast<size_t>(in->size()),
                              codec->level());
        if (ZSTD_isError(n)) return Status::Invalid("raw zstd failed");
      } else {
        // The same frame calls as the codec, with a reused context.
        size_t w = LZ4F_compressBegin(lctx, out.data(), out.size(), &prefs);
        if (LZ4F_isError(w)) return Status::Invalid("raw lz4 failed");
        n = LZ4F_compressUpdate(lctx, out.data() + w, out.size() - w, in->data(), static_cast<size_t>(in->size()),
                                nullptr);
        if (LZ4F_isError(n)) return Status::Invalid("raw lz4 failed");
        w += n;
        n = LZ4F_compressEnd(lctx, out.data() + w, out.size() - w, nullptr);
        if (LZ4F_isError(n)) return Status::Invalid("raw lz4 failed");
      }
    }
    const double t1 = ThreadCpuSeconds();
    for (const auto& in : inputs) {
      QUIVER_ASSIGN_OR_RETURN(int64_t n, codec->Compress(in->span(), {out.data(), out.size()}));
      (void)n;
    }
    const double t2 = ThreadCpuSeconds();
    for (const auto& in : inputs) {
      QUIVER_ASSIGN_OR_RETURN(auto region, rig.compressor->Compress(in));
    }
    const double t3 = ThreadCpuSeconds();
    if (r > 0) {
      raw_t.push_back(t1 - t0);
      codec_t.push_back(t2 - t1);
      path_t.push_back(t3 - t2);
    }
  }
  ZSTD_freeCCtx(cctx);
  LZ4F_freeCompressionContext(lctx);
  ThroughputRatios out_r;
  const double raw = Median(raw_t);
  if (Median(codec_t) > 0) out_r.codec = raw / Median(codec_t);
  if (Median(path_t) > 0) out_r.write_path = raw / Median(path_t);
  return out_r;
}

}  // namespace

Status RunCompressBench(const CompressBenchOptions& options, const std::shared_ptr<MemoryPool>& root, std::FILE* out,
                        std::vector<std::string>* violations) {
  QUIVER_ASSIGN_OR_RETURN(CompressionType codec, ParseCompressionType(options.codec));
  if (codec == CompressionType::kNone) return Status::Invalid("bench compress needs --codec zstd or lz4");
  BodyCompressionOptions base;
  base.codec = codec;
  base.level = options.level;
  {
    QUIVER_ASSIGN_OR_RETURN(auto probe, Codec::Make(codec, options.level));  // level errors up front
    base.level = probe->level();
  }
  const RoundingPolicy rounding = options.rounding == "exact" ? RoundingPolicy::kExact : RoundingPolicy::kPowerOfTwo;
  const auto specs = Specs(options.small);
  violations->clear();
  if (!options.json) {
    std::fprintf(out,
                 "codec %s level %d, allocator %s, rounding %s, default policy %s; MiB, held/peak on top of the "
                 "vectors; cpu = thread CPU of unload+release vs keep (median of %d rounds)\n",
                 std::string(CompressionTypeName(codec)).c_str(), base.level,
                 std::string(root->allocator()->name()).c_str(), options.rounding.c_str(),
                 std::string(OutputPolicyName(kDefaultOutputPolicy)).c_str(), options.rounds);
    std::fprintf(out, "%-30s %8s %8s | %7s %7s %5s %5s | %7s %7s %5s %5s | %7s %7s %5s %5s | %5s %5s %s\n", "batch",
                 "vectors", "compr", "keep:h", "peak", "cpu1", "cpu2", "shrk:h", "peak", "cpu1", "cpu2", "exct:h",
                 "peak", "cpu1", "cpu2", "codec", "path", "same");
  }
  // The largest batch (lineitem 1,000,000 rows, 178 MiB in the reference)
  // gets the RSS view too.
  const size_t largest = 2;
  for (size_t si = 0; si < specs.size(); ++si) {
    const BatchSpec& spec = specs[si];
    if (!options.only.empty() && spec.name.find(options.only) == std::string::npos) continue;
    auto data_pool = root->MakeChild({.name = "vectors"});
    datagen::GenOptions go;
    go.kind = spec.kind;
    go.num_rows = spec.rows;
    go.max_bytes_per_batch = spec.max_bytes;
    go.pool = data_pool.get();
    QUIVER_ASSIGN_OR_RETURN(auto gen, datagen::BatchGenerator::Make(go));
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr batch, gen->Next());
    gen.reset();
    if (!batch) return Status::Invalid(spec.name + ": generator made no batch");
    const int64_t vectors = datagen::BatchBufferBytes(*batch);
    int64_t compressed = 0, largest_bound = 0;
    std::map<OutputPolicy, PolicyResult> results;
    for (OutputPolicy policy : kPolicies) {
      QUIVER_ASSIGN_OR_RETURN(auto rig, MakeRig(root.get(), policy, base, rounding, ""));
      PolicyResult& res = results[policy];
      rig.parent->ResetPeak();
      const int64_t rss0 = ResidentBytes();
      {
        ipc::BatchUnloader unloader(rig.outputs.get(), rig.compressor.get());
        QUIVER_ASSIGN_OR_RETURN(auto u, unloader.Unload(*batch));
        // What the batch holds: its outputs' capacities, wherever they were
        // charged (an exact output may be a handed-over scratch).
        res.held_mib = static_cast<double>(u.held_bytes()) / kMiB;
        res.peak_mib = static_cast<double>(rig.parent->peak_bytes()) / kMiB;
        if (si == largest) res.rss_held_bytes = ResidentBytes() - rss0;
        compressed = u.region_bytes();
        largest_bound = 0;
        for (const auto& r : u.regions) {
          if (r.bytes == nullptr || r.bytes->size() == 0) continue;
          // The input behind the region: the prefix value, or the raw bytes.
          int64_t n = r.bytes->size();
          if (r.prefix_in_bytes) std::memcpy(&n, r.bytes->data(), 8);
          const int64_t bound = codec == CompressionType::kZstd
                                    ? static_cast<int64_t>(ZSTD_compressBound(static_cast<size_t>(n)))
                                    : static_cast<int64_t>(LZ4F_compressFrameBound(static_cast<size_t>(n), nullptr));
          largest_bound = std::max<int64_t>(largest_bound, 8 + bound);
        }
        QUIVER_ASSIGN_OR_RETURN(res.bytes, Serialize(batch->schema, u, root.get(), base));
      }
      const int64_t left = rig.parent->held_bytes() - rig.compressor->scratch_bytes();
      if (left != 0) {
        violations->push_back(spec.name + ": " + std::string(OutputPolicyName(policy)) + " still holds " +
                              std::to_string(left) + " bytes after release");
      }
    }
    // CPU: 1 thread, then 2 threads each unloading the same batch with rigs of their own.
    QUIVER_ASSIGN_OR_RETURN(auto one, InterleavedCpuRatios(root.get(), *batch, base, rounding, options.rounds, "-cpu"));
    std::vector<Result<std::map<OutputPolicy, std::vector<double>>>> two(2, Status::Cancelled("not run"));
    {
      std::vector<std::thread> threads;
      for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
          two[t] = InterleavedCpuRatios(root.get(), *batch, base, rounding, options.rounds, "-t" + std::to_string(t));
        });
      }
      for (auto& th : threads) th.join();
    }
    for (const auto& r : two) QUIVER_RETURN_NOT_OK(r.status());
    for (OutputPolicy p : kPolicies) {
      results[p].cpu_ratio = Median(one[p]);
      std::vector<double> both = (*two[0])[p];
      both.insert(both.end(), (*two[1])[p].begin(), (*two[1])[p].end());
      results[p].cpu_ratio_2t = Median(both);
    }
    QUIVER_ASSIGN_OR_RETURN(ThroughputRatios tput, RawLibraryRatios(*batch, base, root.get(), options.rounds));
    const PolicyResult& keep = results[OutputPolicy::kKeep];
    bool same = true;
    for (auto& [p, r] : results) same = same && r.bytes == keep.bytes;
    const double compressed_mib = static_cast<double>(compressed) / kMiB;
    const PolicyResult& def = results[kDefaultOutputPolicy];
    if (!same) violations->push_back(spec.name + ": serialized bytes differ across policies");
    if (def.held_mib > 1.02 * compressed_mib + 1e-9) {
      violations->push_back(spec.name + ": default held " + std::to_string(def.held_mib) + " MiB > 1.02 x " +
                            std::to_string(compressed_mib));
    }
    if (def.peak_mib > compressed_mib + static_cast<double>(largest_bound) / kMiB + 1e-9) {
      violations->push_back(spec.name + ": default peak " + std::to_string(def.peak_mib) +
                            " MiB > compressed + largest bound");
    }
    if (options.json) {
      std::fprintf(out,
                   "{\"batch\": \"%s\", \"rows\": %lld, \"vectors_mib\": %.2f, \"compressed_mib\": %.2f, "
                   "\"default_policy\": \"%s\", \"identical_bytes\": %s, \"codec_vs_raw_library\": %.3f, "
                   "\"write_path_vs_raw_library\": %.3f, "
                   "\"policies\": {",
                   spec.name.c_str(), static_cast<long long>(batch->num_rows), static_cast<double>(vectors) / kMiB,
                   compressed_mib, std::string(OutputPolicyName(kDefaultOutputPolicy)).c_str(), same ? "true" : "false",
                   tput.codec, tput.write_path);
      bool first = true;
      for (OutputPolicy p : kPolicies) {
        const auto& r = results[p];
        std::fprintf(
            out,
            "%s\"%s\": {\"held_mib\": %.2f, \"peak_mib\": %.2f, \"cpu_ratio\": %.3f, "
            "\"cpu_ratio_2_threads\": %.3f%s}",
            first ? "" : ", ", std::string(OutputPolicyName(p)).c_str(), r.held_mib, r.peak_mib, r.cpu_ratio,
            r.cpu_ratio_2t,
            r.rss_held_bytes >= 0
                ? (", \"rss_held_mib\": " + std::to_string(static_cast<double>(r.rss_held_bytes) / kMiB)).c_str()
                : "");
        first = false;
      }
      std::fprintf(out, "}}\n");
    } else {
      std::fprintf(out, "%-30s %8.2f %8.2f", spec.name.c_str(), static_cast<double>(vectors) / kMiB, compressed_mib);
      for (OutputPolicy p : kPolicies) {
        const auto& r = results[p];
        std::fprintf(out, " | %7.2f %7.2f %5.3f %5.3f", r.held_mib, r.peak_mib, r.cpu_ratio, r.cpu_ratio_2t);
      }
      std::fprintf(out, " | %5.3f %5.3f %s\n", tput.codec, tput.write_path, same ? "yes" : "NO");
      if (si == largest) {
        std::fprintf(out, "%-30s RSS growth while held (MiB): keep %.2f, shrink-if-halves %.2f, exact %.2f\n", "",
                     static_cast<double>(results[OutputPolicy::kKeep].rss_held_bytes) / kMiB,
                     static_cast<double>(results[OutputPolicy::kShrinkIfHalves].rss_held_bytes) / kMiB,
                     static_cast<double>(results[OutputPolicy::kExact].rss_held_bytes) / kMiB);
      }
    }
    std::fflush(out);
  }
  return Status::OK();
}

}  // namespace quiver::bench
