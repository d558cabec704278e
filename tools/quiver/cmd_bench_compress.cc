// quiver bench compress: the options of the write-path memory study
// (quiver/bench/compress_bench.h), which runs it; --check turns its
// invariant violations into exit status 1.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "quiver/bench/compress_bench.h"
#include "quiver/cli.h"
#include "quiver/compression/codec.h"

namespace quiver::cli {

void AddBenchCompress(CLI::App* bench, Context& ctx, Action* action, int* exit_code) {
  auto* cmd = bench->add_subcommand("compress", "held/peak memory and CPU of the compression output policies");
  struct Opts {
    std::string codec = "zstd", scale = "full", rounding = "exact";
    int level = Codec::kUseDefaultLevel;
    int rounds = 7;
    bool json = false, check = false;
    std::string only;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--codec", o->codec, "zstd|lz4");
  cmd->add_option("--level", o->level, "codec level (zstd default 3)");
  cmd->add_option("--scale", o->scale, "full (the reference batches) or small (1/100)")
      ->check(CLI::IsMember({"full", "small"}));
  cmd->add_option("--rounding", o->rounding,
                  "pool rounding: exact (quiver's default) or power-of-two (Arrow Java's, for the reference table)")
      ->check(CLI::IsMember({"exact", "power-of-two"}));
  cmd->add_option("--rounds", o->rounds, "CPU rounds per policy")->check(CLI::Range(1, 100));
  cmd->add_flag("--json", o->json, "one JSON object per batch");
  cmd->add_option("--batch", o->only, "only the batches whose name contains this text");
  cmd->add_flag("--check", o->check,
                "exit 1 unless: bytes identical across policies, default held <= 1.02 x compressed, "
                "default peak <= compressed + largest bound, everything released");
  cmd->callback([&ctx, o, action, exit_code] {
    *action = [&ctx, o, exit_code]() -> Status {
      bench::CompressBenchOptions bo;
      bo.codec = o->codec;
      bo.level = o->level;
      bo.small = o->scale == "small";
      bo.rounding = o->rounding;
      bo.rounds = o->rounds;
      bo.json = o->json;
      bo.only = o->only;
      std::vector<std::string> violations;
      QUIVER_RETURN_NOT_OK(bench::RunCompressBench(bo, ctx.root, stdout, &violations));
      if (o->check && !violations.empty()) {
        for (const auto& v : violations) std::fprintf(stderr, "bench compress: check failed: %s\n", v.c_str());
        *exit_code = 1;
        return Status::Invalid(std::to_string(violations.size()) + " benchmark invariant(s) violated");
      }
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
