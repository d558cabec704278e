// quiver integration: the interface of Arrow's cross-implementation
// integration runner (archery): VALIDATE, JSON_TO_ARROW, ARROW_TO_JSON,
// STREAM_TO_FILE, FILE_TO_STREAM.
#include <cstdio>
#include <fstream>

#include "quiver/cli.h"
#include "quiver/columnar/compare.h"
#include "quiver/integration/json_integration.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"

namespace quiver::cli {
namespace {

Result<std::pair<SchemaPtr, std::vector<RecordBatchPtr>>> ReadArrow(const std::string& path, MemoryPool* pool) {
  ipc::ReadOptions ro;
  ro.pool = pool;
  QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(path, ro));
  QUIVER_ASSIGN_OR_RETURN(auto batches, ipc::ReadAllBatches(reader.get()));
  return std::make_pair(reader->schema(), std::move(batches));
}

}  // namespace

void AddIntegration(CLI::App& app, Context& ctx, Action* action, int* exit_code) {
  auto* cmd = app.add_subcommand("integration", "Arrow integration-test runner interface");
  struct Opts {
    std::string mode, arrow, json, stream = "-";
    bool check_internal_names = false;  // hygiene (issue 10): strict internal field names
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--mode", o->mode, "VALIDATE|JSON_TO_ARROW|ARROW_TO_JSON|STREAM_TO_FILE|FILE_TO_STREAM")
      ->required()
      ->check(CLI::IsMember({"VALIDATE", "JSON_TO_ARROW", "ARROW_TO_JSON", "STREAM_TO_FILE", "FILE_TO_STREAM"}));
  cmd->add_option("--arrow", o->arrow, "Arrow IPC file (or stream for VALIDATE)");
  cmd->add_option("--json", o->json, "Arrow integration JSON file (.json or .json.gz)");
  cmd->add_option("--stream", o->stream, "stream side of STREAM_TO_FILE / FILE_TO_STREAM ('-' = stdin/stdout)");
  cmd->add_flag("--check-internal-names", o->check_internal_names,
                "VALIDATE: also compare internal field names (list item, map entries/key/value), which "
                "Arrow C++ ignores unless metadata is checked (ARROW-14999)");
  cmd->callback([&ctx, o, action, exit_code] {
    *action = [&ctx, o, exit_code]() -> Status {
      auto pool = ctx.Child("integration");
      const std::string& mode = o->mode;
      auto need = [&](const std::string& v, const char* name) -> Status {
        if (v.empty()) return Status::Invalid(mode + " needs " + name);
        return Status::OK();
      };
      if (mode == "VALIDATE") {
        QUIVER_RETURN_NOT_OK(need(o->arrow, "--arrow"));
        QUIVER_RETURN_NOT_OK(need(o->json, "--json"));
        QUIVER_ASSIGN_OR_RETURN(auto expected, integration::ReadJsonIntegrationFile(o->json, pool.get()));
        QUIVER_ASSIGN_OR_RETURN(auto actual, ReadArrow(o->arrow, pool.get()));
        CompareOptions co;
        co.check_metadata = true;
        co.check_internal_names = o->check_internal_names;
        Status diff = CompareSchemas(*expected.schema, *actual.first, co);
        if (diff.ok() && expected.batches.size() != actual.second.size()) {
          diff = Status::Invalid("JSON has " + std::to_string(expected.batches.size()) + " batches, Arrow has " +
                                 std::to_string(actual.second.size()));
        }
        for (size_t i = 0; diff.ok() && i < expected.batches.size(); ++i) {
          diff = CompareBatches(*expected.batches[i], *actual.second[i], co).WithContext("batch " + std::to_string(i));
        }
        if (!diff.ok()) {
          *exit_code = 1;
          return Status::Invalid("VALIDATE: '" + o->arrow + "' differs from '" + o->json + "': " + diff.message());
        }
        std::fprintf(stderr, "VALIDATE: '%s' matches '%s' (%zu batches)\n", o->arrow.c_str(), o->json.c_str(),
                     expected.batches.size());
        return Status::OK();
      }
      if (mode == "JSON_TO_ARROW") {
        QUIVER_RETURN_NOT_OK(need(o->arrow, "--arrow"));
        QUIVER_RETURN_NOT_OK(need(o->json, "--json"));
        QUIVER_ASSIGN_OR_RETURN(auto table, integration::ReadJsonIntegrationFile(o->json, pool.get()));
        QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(o->arrow));  // committed on success only
        ipc::WriteOptions wo;
        wo.pool = pool.get();
        QUIVER_RETURN_NOT_OK(ipc::WriteTable(sink.get(), table.schema, table.batches, ipc::IpcFormat::kFile, wo));
        return sink->Commit();
      }
      if (mode == "ARROW_TO_JSON") {
        QUIVER_RETURN_NOT_OK(need(o->arrow, "--arrow"));
        QUIVER_RETURN_NOT_OK(need(o->json, "--json"));
        QUIVER_ASSIGN_OR_RETURN(auto table, ReadArrow(o->arrow, pool.get()));
        QUIVER_ASSIGN_OR_RETURN(std::string text, integration::WriteJsonIntegration(*table.first, table.second));
        QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(o->json));  // committed on success only
        QUIVER_RETURN_NOT_OK(sink->Write({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
        return sink->Commit();
      }
      // STREAM_TO_FILE / FILE_TO_STREAM
      QUIVER_RETURN_NOT_OK(need(o->arrow, "--arrow"));
      const bool to_file = mode == "STREAM_TO_FILE";
      QUIVER_ASSIGN_OR_RETURN(auto table, ReadArrow(to_file ? o->stream : o->arrow, pool.get()));
      QUIVER_ASSIGN_OR_RETURN(auto sink,
                              ipc::OpenOutputFile(to_file ? o->arrow : o->stream));  // committed on success only
      ipc::WriteOptions wo;
      wo.pool = pool.get();
      QUIVER_RETURN_NOT_OK(ipc::WriteTable(sink.get(), table.first, table.second,
                                           to_file ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream, wo));
      return sink->Commit();
    };
  });
}

}  // namespace quiver::cli
