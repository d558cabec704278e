// quiver — command-line entry point: global options and subcommand dispatch.
#include <unistd.h>

#include <cstdio>

#include "quiver/cli.h"
#include "quiver/memory/allocator.h"

namespace quiver::cli {

Status Context::Init() {
  if (root) return Status::OK();
  AllocatorKind kind;
  if (allocator_name.empty()) {
    QUIVER_ASSIGN_OR_RETURN(kind, AllocatorKindFromEnvironment());
  } else {
    QUIVER_ASSIGN_OR_RETURN(kind, ParseAllocatorKind(allocator_name));
  }
  QUIVER_ASSIGN_OR_RETURN(Allocator * allocator, GetAllocator(kind));
  MemoryPoolOptions o;
  o.name = "quiver";
  o.limit_bytes = memory_limit_bytes;
  o.allocator = allocator;
  root = MemoryPool::MakeRoot(o);
  return Status::OK();
}

Status Context::UsageError(std::string message) {
  usage_error = true;
  return Status::Invalid(std::move(message));
}

CLI::Validator ByteSize() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
        bool plain = i < text.size();
        for (size_t k = i; k < text.size(); ++k) plain = plain && text[k] >= '0' && text[k] <= '9';
        if (plain) return std::string();
        auto r = ParseBytes(text);
        if (!r.ok()) return r.status().message();
        text = std::to_string(*r);
        return std::string();
      },
      "BYTES");
}

std::string SelfExecutable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "quiver";
  return std::string(buf, static_cast<size_t>(n));
}

Status CheckResult(const std::string& what, const std::vector<std::string>& failures, const std::string& passed_note) {
  if (!failures.empty()) {
    return Status::Invalid(what + " --check: " + std::to_string(failures.size()) +
                           " check(s) failed; first: " + failures[0]);
  }
  std::fprintf(stderr, "%s --check: all checks passed (%s)\n", what.c_str(), passed_note.c_str());
  return Status::OK();
}

std::shared_ptr<MemoryPool> Context::Child(const std::string& name) {
  MemoryPoolOptions o;
  o.name = name;
  return root->MakeChild(o);
}

}  // namespace quiver::cli

int main(int argc, char** argv) {
  using namespace quiver::cli;
  quiver::ConfigureProcessMalloc();  // a hint: the defaults work too
  CLI::App app{"quiver: move, inspect and convert Apache Arrow IPC data with accounted memory"};
  // hygiene (issue 10 item 6): --version, and the help when no subcommand.
  app.require_subcommand(0, 1);
  app.set_version_flag(
      "--version", [] { return VersionText(); },
      "print the version, build type and the codec "
      "and allocator library versions, then exit");
  Context ctx;
  app.add_option("--allocator", ctx.allocator_name,
                 "byte source: system|jemalloc|mimalloc|mmap (default: $QUIVER_ALLOCATOR or system)")
      ->check(ParsedBy(quiver::ParseAllocatorKind, "ALLOCATOR"));
  app.add_option("--memory-limit", ctx.memory_limit_bytes, "byte limit of the root memory pool (default: none)")
      ->transform(ByteSize());
  Action action;
  int exit_code = 0;
  AddCat(app, ctx, &action);
  AddSchema(app, ctx, &action);
  AddStats(app, ctx, &action);
  AddConvert(app, ctx, &action);
  AddGen(app, ctx, &action);
  AddIntegration(app, ctx, &action, &exit_code);
  AddDemo(app, ctx, &action);
  AddBench(app, ctx, &action, &exit_code);
  AddJoin(app, ctx, &action, &exit_code);
  AddServe(app, ctx, &action);  // --- result server ---
  // --- fetch client ---
  AddQuery(app, ctx, &action, &exit_code);
  // --- end fetch client ---
  // --- sql ---
  AddSql(app, ctx, &action);
  AddFunctions(app, ctx, &action);
  // --- sql ---
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // A usage error: one line, as every other error, and exit 2.
    std::fprintf(stderr, "quiver: error: %s (see --help)\n", e.what());
    return 2;
  }
  if (app.get_subcommands().empty()) {  // hygiene (issue 10 item 6)
    std::fprintf(stderr, "%squiver: error: a subcommand is required (see the list above)\n", app.help().c_str());
    return 2;
  }
  quiver::Status st = ctx.Init();
  if (st.ok()) st = action();
  if (ctx.interrupted) {
    // Cancelled by SIGINT / SIGTERM, cleaned up (interrupt.h): one line.
    std::fprintf(stderr, "interrupted\n");
    return 130;
  }
  if (!st.ok()) {
    std::string msg = st.ToString();
    for (char& c : msg) {
      if (c == '\n') c = ' ';
    }
    std::fprintf(stderr, "quiver: error: %s\n", msg.c_str());
    if (ctx.usage_error) return 2;
    return exit_code != 0 ? exit_code : 1;
  }
  return exit_code;
}
