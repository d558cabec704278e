// quiver/bench/duckdb_side.cc — see duckdb_side.h.
#include "quiver/bench/duckdb_side.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "quiver/bench/child_process.h"
#include "quiver/columnar/row_text.h"

namespace quiver::bench {
namespace {

// By a table, not a type switch (style.structure counts case labels).
Result<std::string> DuckDbType(const DataType& t) {
  static const std::pair<TypeId, const char*> kNames[] = {{TypeId::kBool, "BOOLEAN"}, {TypeId::kInt32, "INTEGER"},
                                                          {TypeId::kInt64, "BIGINT"}, {TypeId::kFloat64, "DOUBLE"},
                                                          {TypeId::kUtf8, "VARCHAR"}, {TypeId::kLargeUtf8, "VARCHAR"},
                                                          {TypeId::kDate32, "DATE"}};
  for (const auto& [id, name] : kNames)
    if (t.id == id) return std::string(name);
  if (t.id == TypeId::kDecimal) return "DECIMAL(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
  return Status::Invalid("no DuckDB type for a column of type " + t.ToString());
}

}  // namespace

Status ExportForDuckDb(const sql::Catalog& catalog, const std::string& dir, MemoryPool* pool) {
  // Ordered: DuckDB reads the CSV columns by position in this order.
  nlohmann::ordered_json schema = nlohmann::ordered_json::object();
  for (const auto& table : catalog.ListTables()) {
    nlohmann::ordered_json cols = nlohmann::ordered_json::object();
    for (const auto& f : table.schema->fields) {
      QUIVER_ASSIGN_OR_RETURN(std::string type, DuckDbType(*f->type));
      cols[f->name] = type;
    }
    schema[table.name] = cols;
    const std::string path = dir + "/" + table.name + ".csv";
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return Status::IOError("cannot write " + path);
    RowTextWriter w(RowTextFormat::kCsv, f);
    w.WriteHeader(*table.schema);
    auto scan = catalog.OpenScan(table, pool);
    if (!scan.ok()) {
      std::fclose(f);
      return scan.status();
    }
    while (true) {
      auto b = (*scan)->Next();
      if (!b.ok()) {
        std::fclose(f);
        return b.status();
      }
      if (!*b) break;
      w.WriteRows(**b);
    }
    if (std::fclose(f) != 0) return Status::IOError("cannot write " + path);
  }
  const std::string path = dir + "/schema.json";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return Status::IOError("cannot write " + path);
  const std::string text = schema.dump();
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) return Status::IOError("cannot write " + path);
  return Status::OK();
}

bool DuckDbSide::Start(const std::vector<std::string>& argv) {
  signal(SIGPIPE, SIG_IGN);  // a node that died makes write() fail, not kill us
  auto pid = SpawnWithPipes(argv, &in_, &out_);
  if (!pid.ok()) return Fail("could not start node: " + pid.status().ToString());
  pid_ = *pid;
  std::string line, text;
  while (ReadLine(&line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.value("ready", false)) return true;
    if (text.size() < 300) text += line + " ";
  }
  return Fail("DuckDB side failed before loading the tables: " + text.substr(0, 300));
}

nlohmann::json DuckDbSide::Time(int threads, const std::string& name, const std::string& sql) {
  if (pid_ < 0) return nullptr;
  // One JSON line: the text keeps its line breaks (a -- comment ends at one).
  const std::string request = nlohmann::json{{"threads", threads}, {"name", name}, {"sql", sql}}.dump() + "\n";
  for (size_t done = 0; done < request.size();) {
    const ssize_t n = write(in_, request.data() + done, request.size() - done);
    if (n <= 0) {
      Fail("DuckDB side stopped taking queries");
      return nullptr;
    }
    done += static_cast<size_t>(n);
  }
  std::string line, text;
  while (ReadLine(&line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("query")) return j;
    if (text.size() < 300) text += line + " ";
  }
  Fail("DuckDB side failed at " + name + ": " + text.substr(0, 300));
  return nullptr;
}

void DuckDbSide::Pause() const {
  if (pid_ > 0) kill(pid_, SIGSTOP);
}

void DuckDbSide::Resume() const {
  if (pid_ > 0) kill(pid_, SIGCONT);
}

double DuckDbSide::CpuSeconds() const { return pid_ > 0 ? ProcessCpuSecondsOf(pid_) : -1; }

int DuckDbSide::WaitUntilIdle(int max_ms) const {
  if (pid_ <= 0) return 0;
  double last = ProcessCpuSecondsOf(pid_);
  int quiet = 0, waited = 0;
  while (quiet < 2 && waited < max_ms) {
    usleep(10 * 1000);
    waited += 10;
    const double now = ProcessCpuSecondsOf(pid_);
    quiet = now <= last ? quiet + 1 : 0;
    last = now;
  }
  return waited;
}

bool DuckDbSide::Fail(std::string why) {
  if (note_.empty()) note_ = std::move(why);
  Stop();
  return false;
}

void DuckDbSide::Stop() {
  if (in_ >= 0) close(in_);
  in_ = -1;
  if (pid_ > 0) {
    std::string rest;
    while (ReadLine(&rest)) {
    }
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  if (out_ >= 0) close(out_);
  out_ = -1;
}

bool DuckDbSide::ReadLine(std::string* line) {
  while (true) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    if (out_ < 0) return false;
    char buf[4096];
    const ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace quiver::bench
