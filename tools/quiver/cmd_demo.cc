// quiver demo: the options of the main job end to end (quiver/job/main_job.h:
// TPC-H, the in-process result server, a large join result streamed and
// held by client processes, three TPC-H queries through the CloudFetch
// client, each result checked against the in-process engine, the memory
// stages that moved), which runs it and prints its report on stdout; a
// result that does not match fails the command (non-zero exit).
#include <cstdio>
#include <memory>
#include <string>

#include <unistd.h>

#include "quiver/cli.h"
#include "quiver/job/main_job.h"

namespace quiver::cli {

void AddDemo(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand(
      "demo",
      "the main job: a large TPC-H join result streamed through the in-process result server and the CloudFetch "
      "client, what holding it costs, three TPC-H queries; each result checked against the in-process engine");
  struct Opts {
    job::MainJobOptions job;
    std::string memory_mode = "on-heap";
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--scale", o->job.scale, "TPC-H scale factor (default 0.1)");
  cmd->add_option("--rows", o->job.rows_shown, "rows to show per result (default 5)");
  cmd->add_option("--chunk-bytes", o->job.chunk_bytes,
                  "target uncompressed IPC bytes per CloudFetch chunk (default 512KiB)")
      ->transform(ByteSize());
  cmd->add_option("--window", o->job.window_bytes,
                  "the client's download window, as quiver query's --window (default 64MiB)")
      ->transform(ByteSize())
      ->check(CLI::PositiveNumber);
  cmd->add_option("--memory-mode", o->memory_mode, "join relations on-heap|off-heap (default on-heap)")
      ->check(ParsedBy(join::ParseMemoryMode, "MODE"));
  cmd->add_option("--threads", o->job.threads,
                  "workers per pipeline of each statement (default 0 = the machine's hardware threads)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--tpch-dir", o->job.tpch_dir,
                  "where to write the TPC-H files (default: a temporary directory, removed)");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      job::MainJobOptions jo = o->job;
      jo.client_exe = SelfExecutable();
      QUIVER_ASSIGN_OR_RETURN(jo.memory_mode, join::ParseMemoryMode(o->memory_mode));
      return job::RunMainJob(jo, ctx.root, stdout).status();
    };
  });
}

}  // namespace quiver::cli
