// quiver/sql/explain.cc — see explain.h.
#include "quiver/sql/explain.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "quiver/sql/expression/vector.h"

namespace quiver::sql {
namespace {

SchemaPtr PlanSchema() {
  auto s = std::make_shared<Schema>();
  s->fields = {field("plan", utf8(), false)};
  return s;
}

// `text`'s lines (the last newline ends the last line) as one batch.
Result<RecordBatchPtr> LinesBatch(const SchemaPtr& schema, const std::string& text, MemoryPool* pool) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  int64_t total = 0;
  for (const auto& l : lines) total += static_cast<int64_t>(l.size());
  QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(static_cast<int64_t>(lines.size()), total, pool));
  for (const auto& l : lines) QUIVER_RETURN_NOT_OK(b.Append(l));
  QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr column, b.Finish());
  return MakeBatch(schema, static_cast<int64_t>(lines.size()), {std::move(column)});
}

class ExplainStream : public RecordBatchStream {
 public:
  ExplainStream(LogicalOpPtr plan, OperatorPtr query, std::shared_ptr<PlanProfile> profile, MemoryPool* pool)
      : schema_(PlanSchema()),
        plan_(std::move(plan)),
        query_(std::move(query)),
        profile_(std::move(profile)),
        pool_(pool) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (done_) return RecordBatchPtr{};
    done_ = true;
    if (!query_) return LinesBatch(schema_, PlanToString(*plan_), pool_);
    const auto start = std::chrono::steady_clock::now();
    int64_t result_rows = 0;
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr batch, query_->Next());
      if (!batch) break;
      result_rows += batch->num_rows;
    }
    query_.reset();  // the operators and what they hold go before the text is built
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const PlanProfile& profile = *profile_;
    std::string text = PlanToString(*plan_, 0, [&profile](const LogicalOp& op) -> std::string {
      auto it = profile.find(&op);
      if (it == profile.end() || it->second->batches.load(std::memory_order_relaxed) == 0) return "";
      std::string rows = " rows=" + std::to_string(it->second->rows.load(std::memory_order_relaxed));
      if (it->second->filters_deferred) rows += " (before its filters, which the aggregate above evaluates)";
      return rows;
    });
    char time[32];
    std::snprintf(time, sizeof(time), "%.1f", ms);
    text += "result rows=" + std::to_string(result_rows) + " time=" + time + " ms\n";
    return LinesBatch(schema_, text, pool_);
  }

 private:
  SchemaPtr schema_;
  LogicalOpPtr plan_;
  OperatorPtr query_;  // null: EXPLAIN without ANALYZE
  std::shared_ptr<PlanProfile> profile_;
  MemoryPool* pool_;
  bool done_ = false;
};

}  // namespace

OperatorPtr MakeExplainStream(LogicalOpPtr plan, MemoryPool* pool) {
  return std::make_unique<ExplainStream>(std::move(plan), nullptr, nullptr, pool);
}

OperatorPtr MakeExplainAnalyzeStream(LogicalOpPtr plan, OperatorPtr query, std::shared_ptr<PlanProfile> profile,
                                     MemoryPool* pool) {
  return std::make_unique<ExplainStream>(std::move(plan), std::move(query), std::move(profile), pool);
}

}  // namespace quiver::sql
