// quiver/server/statement_executor.cc — the built-in SELECT * executor.
#include "quiver/server/statement_executor.h"

#include <cctype>

#include "quiver/ipc/reader.h"

namespace quiver::server {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

// A tiny tokenizer for the one statement shape the executor answers.
class Tokens {
 public:
  explicit Tokens(std::string_view s) : s_(s) {}
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool AtEnd() {
    SkipSpace();
    return i_ == s_.size();
  }
  // A keyword (case-insensitive) or a symbol.
  bool Accept(std::string_view word) {
    SkipSpace();
    if (s_.size() - i_ < word.size()) return false;
    for (size_t k = 0; k < word.size(); ++k) {
      if (std::toupper(static_cast<unsigned char>(s_[i_ + k])) != word[k]) return false;
    }
    if (IsNameChar(word.back()) && i_ + word.size() < s_.size() && IsNameChar(s_[i_ + word.size()])) return false;
    i_ += word.size();
    return true;
  }
  // An identifier, bare or quoted with ` or ".
  std::string Identifier() {
    SkipSpace();
    if (i_ < s_.size() && (s_[i_] == '`' || s_[i_] == '"')) {
      const char q = s_[i_];
      const size_t end = s_.find(q, i_ + 1);
      if (end == std::string_view::npos) return {};
      std::string out(s_.substr(i_ + 1, end - i_ - 1));
      i_ = end + 1;
      return out;
    }
    size_t j = i_;
    while (j < s_.size() && (IsNameChar(s_[j]) || s_[j] == '.')) ++j;
    std::string out(s_.substr(i_, j - i_));
    i_ = j;
    return out;
  }
  bool Integer(int64_t* out) {
    SkipSpace();
    size_t j = i_;
    int64_t v = 0;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
      if (j - i_ >= 18) return false;
      v = v * 10 + (s_[j] - '0');
      ++j;
    }
    if (j == i_) return false;
    i_ = j;
    *out = v;
    return true;
  }
  std::string_view Rest() const { return s_.substr(i_); }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

// Passes batches through, cutting after `limit` rows and honouring cancel.
class LimitStream : public RecordBatchStream {
 public:
  LimitStream(std::unique_ptr<RecordBatchStream> input, int64_t limit, const std::atomic<bool>* cancel)
      : input_(std::move(input)), remaining_(limit), cancel_(cancel) {}
  const SchemaPtr& schema() const override { return input_->schema(); }
  Result<RecordBatchPtr> Next() override {
    if (cancel_ && cancel_->load()) return Status::Cancelled("statement cancelled");
    if (remaining_ == 0) return RecordBatchPtr();
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr batch, input_->Next());
    if (!batch) return batch;
    if (remaining_ > 0 && batch->num_rows > remaining_) {
      QUIVER_ASSIGN_OR_RETURN(batch, SliceBatch(batch, 0, remaining_));
    }
    if (remaining_ > 0) remaining_ -= batch->num_rows;
    return batch;
  }

 private:
  std::unique_ptr<RecordBatchStream> input_;
  int64_t remaining_;  // -1 = no limit
  const std::atomic<bool>* cancel_;
};

std::string Shorten(std::string_view s) {
  std::string out(s.substr(0, 60));
  if (s.size() > 60) out += "...";
  return out;
}

}  // namespace

Result<std::pair<std::string, std::string>> ParseTableSpec(std::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size()) {
    return Status::Invalid("--table expects NAME=PATH, got '" + std::string(spec) + "'");
  }
  return std::make_pair(std::string(spec.substr(0, eq)), std::string(spec.substr(eq + 1)));
}

Status TableExecutor::AddTable(const std::string& name, const std::string& path, MemoryPool* pool) {
  if (!ValidName(name)) return Status::Invalid("table name '" + name + "' is not 1..128 of [A-Za-z0-9_]");
  if (tables_.count(name)) return Status::Invalid("table '" + name + "' registered twice");
  ipc::ReadOptions ro;
  ro.pool = pool;
  auto reader = ipc::RecordBatchReader::OpenPath(path, ro);
  if (!reader.ok()) return reader.status().WithContext("table " + name + " (" + path + ")");
  tables_[name] = Entry{path, (*reader)->schema()};
  return Status::OK();
}

std::vector<TableInfo> TableExecutor::ListTables() const {
  std::vector<TableInfo> out;
  for (const auto& [name, e] : tables_) out.push_back({name, e.schema});
  return out;
}

Result<std::unique_ptr<RecordBatchStream>> TableExecutor::Execute(std::string_view statement,
                                                                  const std::atomic<bool>* cancel, MemoryPool* pool) {
  Tokens t(statement);
  const std::string unsupported =
      "not supported by quiver's built-in executor (only SELECT * FROM <table> [LIMIT n]): '" + Shorten(statement) +
      "'";
  if (!t.Accept("SELECT") || !t.Accept("*") || !t.Accept("FROM"))
    return Status::NotImplemented("statement " + unsupported);
  std::string name = t.Identifier();
  // Accept catalog/schema qualification "quiver.default.t" / "default.t".
  if (const size_t dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
  if (name.empty()) return Status::Invalid("statement: expected a table name after FROM: '" + Shorten(statement) + "'");
  int64_t limit = -1;
  if (t.Accept("LIMIT")) {
    if (!t.Integer(&limit))
      return Status::Invalid("statement: LIMIT expects a non-negative integer: '" + Shorten(statement) + "'");
  }
  t.Accept(";");
  if (!t.AtEnd()) return Status::NotImplemented("clause '" + Shorten(t.Rest()) + "' " + unsupported);
  auto it = tables_.find(name);
  if (it == tables_.end()) return Status::KeyError("table or view not found: " + name);
  ipc::ReadOptions ro;
  ro.pool = pool;
  auto reader = ipc::RecordBatchReader::OpenPath(it->second.path, ro);
  if (!reader.ok()) return reader.status().WithContext("table " + name);
  return std::unique_ptr<RecordBatchStream>(new LimitStream(std::move(reader).value(), limit, cancel));
}

}  // namespace quiver::server
