// quiver cat / schema / stats: read an IPC file or stream and show it.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "quiver/cli.h"
#include "quiver/columnar/value_format.h"
#include "quiver/ipc/reader.h"

namespace quiver::cli {
namespace {

std::string JsonString(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Emit(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

/// Prints rows of a batch in one format; `widths` are kept across batches
/// for the table format (widened when a value needs it).
void PrintRows(const RecordBatch& batch, int64_t begin, int64_t end, const std::string& format) {
  const auto& fields = batch.schema->fields;
  std::string line;
  std::string v;
  if (format == "jsonl") {
    const std::vector<std::string> keys = UniqueJsonKeys(*batch.schema);
    for (int64_t r = begin; r < end; ++r) {
      line = "{";
      for (size_t c = 0; c < fields.size(); ++c) {
        if (c) line += ",";
        line += JsonString(keys[c]);
        line += ":";
        v.clear();
        FormatValue(*batch.columns[c], r, ValueFormat::kJson, &v);
        line += v;
      }
      line += "}\n";
      Emit(line);
    }
    return;
  }
  if (format == "csv") {
    for (int64_t r = begin; r < end; ++r) {
      line.clear();
      for (size_t c = 0; c < fields.size(); ++c) {
        if (c) line += ",";
        if (batch.columns[c]->IsValid(r) || batch.columns[c]->type->id == TypeId::kDictionary) {
          v.clear();
          FormatValue(*batch.columns[c], r, ValueFormat::kText, &v);
          if (v != "null" || batch.columns[c]->IsValid(r)) line += CsvField(v);
        }
      }
      line += "\n";
      Emit(line);
    }
    return;
  }
  // table: columns separated by " | ", each padded to the widest value of
  // the rows printed together.
  std::vector<std::vector<std::string>> cells(static_cast<size_t>(end - begin));
  std::vector<size_t> widths(fields.size());
  for (size_t c = 0; c < fields.size(); ++c) widths[c] = fields[c]->name.size();
  for (int64_t r = begin; r < end; ++r) {
    auto& row = cells[static_cast<size_t>(r - begin)];
    for (size_t c = 0; c < fields.size(); ++c) {
      v.clear();
      FormatValue(*batch.columns[c], r, ValueFormat::kText, &v);
      if (v.size() > 60) v = v.substr(0, 57) + "...";
      widths[c] = std::max(widths[c], v.size());
      row.push_back(v);
    }
  }
  auto pad = [](const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); };
  line.clear();
  for (size_t c = 0; c < fields.size(); ++c) line += (c ? " | " : "") + pad(fields[c]->name, widths[c]);
  line += "\n";
  for (size_t c = 0; c < fields.size(); ++c) line += (c ? "-+-" : "") + std::string(widths[c], '-');
  line += "\n";
  Emit(line);
  for (const auto& row : cells) {
    line.clear();
    for (size_t c = 0; c < row.size(); ++c) line += (c ? " | " : "") + pad(row[c], widths[c]);
    line += "\n";
    Emit(line);
  }
}

}  // namespace

void AddCat(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("cat", "print the rows of an Arrow IPC file or stream");
  struct Opts {
    std::string path;
    int64_t limit = -1;
    std::string format = "table";
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("FILE", o->path, "IPC file or stream ('-' = stdin)")->required();
  cmd->add_option("--limit", o->limit, "print at most N rows");
  cmd->add_option("--format", o->format, "table|csv|jsonl")->check(CLI::IsMember({"table", "csv", "jsonl"}));
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      auto pool = ctx.Child("cat");
      ipc::ReadOptions ro;
      ro.pool = pool.get();
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(o->path, ro));
      int64_t printed = 0;
      bool header_done = false;
      if (o->format == "csv") {
        std::string h;
        const auto& fields = reader->schema()->fields;
        for (size_t c = 0; c < fields.size(); ++c) h += (c ? "," : "") + CsvField(fields[c]->name);
        h += "\n";
        Emit(h);
        header_done = true;
      }
      (void)header_done;
      while (o->limit < 0 || printed < o->limit) {
        QUIVER_ASSIGN_OR_RETURN(auto batch, reader->Next());
        if (!batch) break;
        int64_t n = batch->num_rows;
        if (o->limit >= 0) n = std::min(n, o->limit - printed);
        // Tables print in blocks of 1000 rows so widths stay local.
        for (int64_t b = 0; b < n; b += 1000) PrintRows(*batch, b, std::min(n, b + 1000), o->format);
        printed += n;
      }
      std::fflush(stdout);
      return Status::OK();
    };
  });
}

void AddSchema(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("schema", "print the schema with metadata and dictionary ids");
  auto path = std::make_shared<std::string>();
  cmd->add_option("FILE", *path, "IPC file or stream ('-' = stdin)")->required();
  cmd->callback([&ctx, path, action] {
    *action = [&ctx, path]() -> Status {
      auto pool = ctx.Child("schema");
      ipc::ReadOptions ro;
      ro.pool = pool.get();
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(*path, ro));
      std::string out = "format: " + std::string(ipc::IpcFormatName(reader->format())) +
                        ", metadata " + reader->metadata_version() + "\n" + reader->schema()->ToString();
      if (out.back() != '\n') out += "\n";
      Emit(out);
      return Status::OK();
    };
  });
}

/// The codec level quiver's writer recorded in a record batch message's
/// custom metadata (key ipc::kCompressionLevelMetadataKey, value a decimal
/// integer in [-1000000, 1000]); nullopt when no pair holds a valid one
/// (other writers, uncompressed batches, a malformed value). When the key
/// repeats, the last valid value wins. Pure.
std::optional<int> RecordedCodecLevel(const KeyValueMetadata& message_metadata) {
  std::optional<int> out;
  for (const auto& [key, value] : message_metadata) {
    if (key != ipc::kCompressionLevelMetadataKey) continue;
    char* end = nullptr;
    const long level = std::strtol(value.c_str(), &end, 10);
    if (end != value.c_str() && *end == '\0' && level >= -1000000 && level <= 1000) out = static_cast<int>(level);
  }
  return out;
}

void AddStats(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("stats", "print per-batch buffer sizes, compression and memory");
  auto path = std::make_shared<std::string>();
  cmd->add_option("FILE", *path, "IPC file or stream ('-' = stdin)")->required();
  cmd->callback([&ctx, path, action] {
    *action = [&ctx, path]() -> Status {
      auto pool = ctx.Child("stats");
      ipc::ReadOptions ro;
      ro.pool = pool.get();
      ro.collect_body_stats = true;
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(*path, ro));
      std::string out = "format: " + std::string(ipc::IpcFormatName(reader->format())) + ", metadata " +
                        reader->metadata_version() + "\n";
      int64_t rows = 0, stored = 0, uncompressed = 0, batches = 0;
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(auto batch, reader->Next());
        if (!batch) break;
        const auto& s = reader->last_batch_stats();
        const std::optional<int> level = RecordedCodecLevel(s.message_metadata);
        out += "batch " + std::to_string(batches) + ": rows " + std::to_string(s.num_rows) + ", codec " +
                std::string(CompressionTypeName(s.codec)) +
               (level ? " level " + std::to_string(*level) : std::string()) + ", metadata " + std::to_string(s.metadata_bytes) +
               " B, body " + std::to_string(s.body_bytes) + " B\n";
        for (const auto& c : s.columns) {
          out += "  " + c.name + ": buffers [";
          for (size_t i = 0; i < c.stored_buffer_bytes.size(); ++i) {
            out += (i ? ", " : "") + std::to_string(c.stored_buffer_bytes[i]);
          }
          out += "] stored " + std::to_string(c.stored_bytes) + " B, uncompressed " +
                 std::to_string(c.uncompressed_bytes) + " B";
          if (c.uncompressed_bytes > 0 && s.codec != CompressionType::kNone) {
            char ratio[32];
            std::snprintf(ratio, sizeof ratio, " (%.2fx)",
                          static_cast<double>(c.uncompressed_bytes) / std::max<int64_t>(1, c.stored_bytes));
            out += ratio;
          }
          out += "\n";
          stored += c.stored_bytes;
          uncompressed += c.uncompressed_bytes;
        }
        rows += s.num_rows;
        ++batches;
      }
      out += "total: " + std::to_string(batches) + " batches, " + std::to_string(rows) + " rows, stored " +
             std::to_string(stored) + " B, uncompressed " + std::to_string(uncompressed) + " B, dictionary batches " +
             std::to_string(reader->num_dictionary_batches()) + " (deltas " +
             std::to_string(reader->num_dictionary_deltas()) + ")\n";
      out += "memory (pool '" + pool->path() + "', allocator " + std::string(pool->allocator()->name()) +
             "): held " + FormatBytes(pool->held_bytes()) + ", peak " + FormatBytes(pool->peak_bytes()) + "\n";
      Emit(out);
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
