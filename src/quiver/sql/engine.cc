// quiver/sql/engine.cc — see engine.h. One statement: libpg_query parses
// it into its JSON parse tree, the binder (binder/) builds the logical plan,
// the physical planner (planner/physical_planner.h) the operators
// (execution/), and the statement stream drives them.
#include "quiver/sql/engine.h"

#include <pg_query.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "quiver/base/bit_util.h"
#include "quiver/base/large_stack.h"
#include "quiver/sql/binder/binder.h"
#include "quiver/sql/catalog_writes.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/spill.h"
#include "quiver/sql/execution/task_scheduler.h"
#include "quiver/sql/explain.h"
#include "quiver/sql/expression/function_catalog.h"
#include "quiver/sql/planner/physical_planner.h"
#include "quiver/sql/spark_dialect.h"

namespace quiver::sql {

namespace {

using Json = nlohmann::json;

class ConstStream : public RecordBatchStream {
 public:
  ConstStream(SchemaPtr schema, RecordBatchPtr batch) : schema_(std::move(schema)), batch_(std::move(batch)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override { return std::move(batch_); }

 private:
  SchemaPtr schema_;
  RecordBatchPtr batch_;
};

// `schema` with every column in its OutputType (decimal64 as decimal128);
// `schema` itself when none changes.
SchemaPtr OutputSchema(const SchemaPtr& schema) {
  if (!schema) return schema;
  bool widened = false;
  auto out = std::make_shared<Schema>(*schema);
  for (auto& f : out->fields) {
    if (!f || !IsDecimal64(*f->type)) continue;
    auto g = std::make_shared<Field>(*f);
    g->type = OutputType(f->type);
    f = g;
    widened = true;
  }
  return widened ? out : schema;
}

// The statement's stream: owns the context (pools, memory managers) and the
// operator tree; on the first error releases the operators. Its batches
// leave the engine in the outward types (decimal64 columns widened to
// decimal128, WidenForOutput), so every consumer of a result (server,
// writers, C Data export, the CLI) sees DECIMAL as decimal128.
class StatementStream : public RecordBatchStream {
 public:
  StatementStream(std::shared_ptr<ExecContext> ctx, std::unique_ptr<RecordBatchStream> root, SchemaPtr schema)
      : ctx_(std::move(ctx)), schema_(OutputSchema(schema)), widen_(schema_ != schema), root_(std::move(root)) {}
  ~StatementStream() override {
    root_.reset();
    ctx_->ReleaseCtes();
    Report();
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (!error_.ok()) return error_;
    if (!root_) return RecordBatchPtr{};
    Status st = ctx_->CheckCancel();
    if (st.ok()) {
      auto r = root_->Next();
      if (r.ok()) {
        if (!*r) {
          root_.reset();
          ctx_->ReleaseCtes();
          Report();
          return r;
        }
        if (widen_) {
          auto b = std::make_shared<RecordBatch>(**r);
          b->schema = schema_;
          for (auto& c : b->columns) {
            auto w = WidenForOutput(c, ctx_->pool.get());
            if (!w.ok()) {
              st = w.status();
              break;
            }
            c = *w;
          }
          if (st.ok()) return RecordBatchPtr(b);
        } else if ((*r)->schema != schema_) {
          auto b = std::make_shared<RecordBatch>(**r);
          b->schema = schema_;
          return RecordBatchPtr(b);
        } else {
          return r;
        }
      } else {
        st = r.status();
      }
    }
    // Every OutOfMemory a statement returns carries 53200, whichever
    // operator (or the plumbing between them) ran out.
    if (st.IsOutOfMemory() && st.sql_state().empty()) st = st.WithSqlState("53200");
    error_ = st;
    root_.reset();
    ctx_->ReleaseCtes();
    // The operators are gone: their spill files go now, not when the
    // caller gets round to destroying the stream.
    Report();
    if (ctx_->spill) ctx_->spill->RemoveAll();
    return error_;
  }

 private:
  // The spill counters, for the caller's report.
  void Report() {
    if (!ctx_->spill) return;
    if (ctx_->spilled_bytes) ctx_->spilled_bytes->store(ctx_->spill->spilled_bytes());
    if (ctx_->spilled_files) ctx_->spilled_files->store(ctx_->spill->spilled_files());
  }

  std::shared_ptr<ExecContext> ctx_;
  SchemaPtr schema_;
  bool widen_ = false;  ///< some column of the root's schema is decimal64
  std::unique_ptr<RecordBatchStream> root_;
  Status error_;
};

// Whether an ExplainStmt's options ask for ANALYZE: `EXPLAIN ANALYZE` or
// `EXPLAIN (ANALYZE [true | on | 1])` (PostgreSQL's grammar: a DefElem named
// analyze, its argument absent or a boolean-like constant).
bool ExplainAnalyzes(const Json& explain) {
  if (!explain.contains("options") || !explain["options"].is_array()) return false;
  for (const auto& o : explain["options"]) {
    if (!o.contains("DefElem") || o["DefElem"].value("defname", "") != "analyze") continue;
    const Json& d = o["DefElem"];
    if (!d.contains("arg")) return true;
    const Json& arg = d["arg"];
    if (arg.contains("Integer")) return arg["Integer"].value("ival", 0) != 0;  // libpg_query omits a 0
    if (arg.contains("Boolean")) return arg["Boolean"].value("boolval", false);
    if (arg.contains("String")) {
      std::string v = arg["String"].value("sval", "");
      for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return v != "false" && v != "off" && v != "0" && v != "no";
    }
    return true;
  }
  return false;
}

Result<ArrayDataPtr> BuildStrings(const std::vector<std::string>& values, MemoryPool* pool) {
  int64_t total = 0;
  for (const auto& v : values) total += static_cast<int64_t>(v.size());
  QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(static_cast<int64_t>(values.size()), total, pool));
  for (const auto& v : values) QUIVER_RETURN_NOT_OK(b.Append(v));
  return b.Finish();
}

// A boolean column of `length` rows, all `value`.
Result<ArrayDataPtr> ConstantBools(bool value, int64_t length, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(boolean(), length, pool));
  for (int64_t i = 0; i < length; ++i) bit_util::SetBitTo(b.bits(), i, value);
  return b.Finish();
}

// Spark's (and Databricks') SHOW TABLES columns: database, tableName,
// isTemporary (never: quiver has no temporary views).
Result<std::unique_ptr<RecordBatchStream>> ShowTables(const Catalog& catalog, std::string_view pattern,
                                                      MemoryPool* pool) {
  std::vector<std::string> names;
  for (auto& t : catalog.ListTables()) {
    if (SparkPatternMatch(pattern, t.name)) names.push_back(t.name);
  }
  const auto n = static_cast<int64_t>(names.size());
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("database", utf8(), false), field("tableName", utf8(), false),
                    field("isTemporary", boolean(), false)};
  QUIVER_ASSIGN_OR_RETURN(auto db, BuildStrings(std::vector<std::string>(names.size(), kSchemaName), pool));
  QUIVER_ASSIGN_OR_RETURN(auto table, BuildStrings(names, pool));
  QUIVER_ASSIGN_OR_RETURN(auto temporary, ConstantBools(false, n, pool));
  return std::unique_ptr<RecordBatchStream>(
      std::make_unique<ConstStream>(schema, names.empty() ? nullptr : MakeBatch(schema, n, {db, table, temporary})));
}

// Spark's DESCRIBE columns: col_name, data_type (Spark's type name,
// SparkTypeName), comment (the field's "comment" metadata, as Spark keeps
// it; NULL when none).
Result<std::unique_ptr<RecordBatchStream>> Describe(const Catalog& catalog, std::string_view sql, std::string_view name,
                                                    int location, MemoryPool* pool) {
  auto t = catalog.GetTable(name);
  if (!t.ok())
    return Status::KeyError("no table named '" + FoldIdentifier(name) + "' (" + DescribePosition(sql, location) + ")")
        .WithSqlState("42P01");
  std::vector<std::string> names, types;
  std::vector<std::optional<std::string>> comments;
  int64_t comment_bytes = 0;
  for (auto& f : t->schema->fields) {
    names.push_back(f->name);
    types.push_back(SparkTypeName(*f->type));
    std::optional<std::string> comment;
    for (const auto& [key, value] : f->metadata) {
      if (key == "comment") comment = value;
    }
    if (comment) comment_bytes += static_cast<int64_t>(comment->size());
    comments.push_back(std::move(comment));
  }
  const auto n = static_cast<int64_t>(names.size());
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("col_name", utf8(), false), field("data_type", utf8(), false),
                    field("comment", utf8(), true)};
  QUIVER_ASSIGN_OR_RETURN(auto a, BuildStrings(names, pool));
  QUIVER_ASSIGN_OR_RETURN(auto b, BuildStrings(types, pool));
  QUIVER_ASSIGN_OR_RETURN(auto c, StringBuilder::Make(n, comment_bytes, pool));
  for (const auto& comment : comments) QUIVER_RETURN_NOT_OK(comment ? c.Append(*comment) : c.AppendNull());
  QUIVER_ASSIGN_OR_RETURN(auto comment_array, c.Finish());
  return std::unique_ptr<RecordBatchStream>(
      std::make_unique<ConstStream>(schema, names.empty() ? nullptr : MakeBatch(schema, n, {a, b, comment_array})));
}

Result<std::unique_ptr<RecordBatchStream>> OneStringColumn(const char* column, const std::vector<std::string>& values,
                                                           MemoryPool* pool) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field(column, utf8(), false)};
  QUIVER_ASSIGN_OR_RETURN(auto a, BuildStrings(values, pool));
  return std::unique_ptr<RecordBatchStream>(std::make_unique<ConstStream>(
      schema, values.empty() ? nullptr : MakeBatch(schema, static_cast<int64_t>(values.size()), {a})));
}

// SHOW SCHEMAS / CATALOGS / TABLES / FUNCTIONS, DESCRIBE, USE (spark_dialect.h).
Result<std::unique_ptr<RecordBatchStream>> RunSparkCommand(const Catalog& catalog, std::string_view sql,
                                                           const SparkCommand& c, MemoryPool* pool) {
  QUIVER_RETURN_NOT_OK(CheckQualifier(c.catalog, c.schema, DescribePosition(sql, c.name_offset)));
  using Kind = SparkCommand::Kind;
  switch (c.kind) {
    case Kind::kShowCatalogs:
      return OneStringColumn("catalog",
                             SparkPatternMatch(c.pattern, kCatalogName) ? std::vector<std::string>{kCatalogName}
                                                                        : std::vector<std::string>{},
                             pool);
    case Kind::kShowSchemas:
      return OneStringColumn("databaseName",
                             SparkPatternMatch(c.pattern, kSchemaName) ? std::vector<std::string>{kSchemaName}
                                                                       : std::vector<std::string>{},
                             pool);
    case Kind::kShowTables: return ShowTables(catalog, c.pattern, pool);
    case Kind::kShowFunctions: {
      // Spark's one column, `function`, the names sorted (the catalogue's,
      // function_catalog.h); quiver has no user functions.
      std::vector<std::string> names;
      if (!c.user_functions_only) {
        for (auto& n : FunctionNames())
          if (SparkPatternMatch(c.pattern, n)) names.push_back(std::move(n));
      }
      return OneStringColumn("function", names, pool);
    }
    case Kind::kDescribe: return Describe(catalog, sql, c.table, c.name_offset, pool);
    case Kind::kUse: {
      // Nothing to switch: quiver has one schema. No columns, no rows.
      auto schema = std::make_shared<Schema>();
      return std::unique_ptr<RecordBatchStream>(std::make_unique<ConstStream>(schema, nullptr));
    }
    case Kind::kNone: break;
  }
  return Status::Invalid("not a Spark command");
}

// The run-once function of an uncorrelated subquery: its single value
// (NULL for no row; more than one row is 21000), or whether it has a row.
ScalarSubquery::Runner MakeRunner(ExecContext* ctx, LogicalOpPtr plan, bool exists) {
  return [ctx, plan, exists]() -> Result<Value> {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr op, BuildOperators(*plan, ctx));
    if (exists) {
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, op->Next());
        if (!b) return Value::Bool(false);
        if (b->num_rows > 0) return Value::Bool(true);
      }
    }
    Value out = Value::Null(plan->columns[0].type);
    int64_t rows = 0;
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, op->Next());
      if (!b) break;
      if (b->num_rows == 0) continue;
      rows += b->num_rows;
      if (rows > 1)
        return Status::Invalid("more than one row returned by a subquery used as an expression").WithSqlState("21000");
      Vec v;
      v.array = b->columns[0];
      out = ValueAt(v, 0);
    }
    return out;
  };
}

std::string StatementName(const std::string& key) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"InsertStmt", "INSERT"},
      {"UpdateStmt", "UPDATE"},
      {"DeleteStmt", "DELETE"},
      {"MergeStmt", "MERGE"},
      {"CreateStmt", "CREATE TABLE"},
      {"CreateTableAsStmt", "CREATE TABLE AS"},
      {"DropStmt", "DROP"},
      {"AlterTableStmt", "ALTER TABLE"},
      {"IndexStmt", "CREATE INDEX"},
      {"ViewStmt", "CREATE VIEW"},
      {"TruncateStmt", "TRUNCATE"},
      {"CopyStmt", "COPY"},
      {"TransactionStmt", "transaction control (BEGIN/COMMIT/ROLLBACK)"},
      {"VariableSetStmt", "SET"},
      {"CreateSchemaStmt", "CREATE SCHEMA"},
      {"GrantStmt", "GRANT/REVOKE"},
      {"PrepareStmt", "PREPARE"},
      {"ExecuteStmt", "EXECUTE"},
      {"CallStmt", "CALL"},
      {"DoStmt", "DO"},
      {"VacuumStmt", "VACUUM/ANALYZE"},
  };
  for (auto& [k, n] : kNames) {
    if (key == k) return n;
  }
  std::string s = key;
  if (s.size() > 4 && s.substr(s.size() - 4) == "Stmt") s.resize(s.size() - 4);
  return s + " statement";
}

// The offset of the ')' closing the '(' at `open` in SQL text, skipping
// '...' and E'...' strings, "..." identifiers, $tag$...$tag$ strings, --
// and (nested) /* */ comments; nullopt when there is none.
std::optional<size_t> MatchingParenthesis(std::string_view s, size_t open) {
  if (open >= s.size() || s[open] != '(') return std::nullopt;
  int depth = 0;
  size_t i = open;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth == 0) return i;
    } else if (c == '\'' || c == '"') {
      const bool backslashes = c == '\'' && i > 0 && (s[i - 1] == 'E' || s[i - 1] == 'e');
      for (++i; i < s.size(); ++i) {
        if (backslashes && s[i] == '\\') {
          ++i;
          continue;
        }
        if (s[i] == c) {
          if (i + 1 < s.size() && s[i + 1] == c) {
            ++i;
            continue;
          }
          break;
        }
      }
      if (i >= s.size()) return std::nullopt;
    } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      int nest = 0;
      for (; i + 1 < s.size(); ++i) {
        if (s[i] == '/' && s[i + 1] == '*') {
          ++nest;
          ++i;
        } else if (s[i] == '*' && s[i + 1] == '/') {
          ++i;
          if (--nest == 0) break;
        }
      }
      if (nest != 0) return std::nullopt;
    } else if (c == '$') {
      size_t j = i + 1;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (j < s.size() && s[j] == '$' && (j == i + 1 || !std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
        const std::string_view tag = s.substr(i, j - i + 1);
        const size_t end = s.find(tag, j + 1);
        if (end == std::string_view::npos) return std::nullopt;
        i = end + tag.size();
        continue;
      }
    }
    ++i;
  }
  return std::nullopt;
}

}  // namespace

int64_t PlanningEstimateBytes(int64_t sql_bytes) {
  int64_t out = 0;
  if (__builtin_mul_overflow(std::max<int64_t>(sql_bytes, 0), kPlanningBytesPerSqlByte, &out) ||
      __builtin_add_overflow(out, int64_t{4} << 10, &out))
    return INT64_MAX;
  return out;
}

Engine::Engine(std::shared_ptr<const Catalog> catalog) : catalog_(std::move(catalog)) {}

Engine Engine::WithWritableCatalog(std::shared_ptr<Catalog> catalog, std::shared_ptr<MemoryPool> table_pool) {
  Engine e(catalog);
  e.writable_catalog_ = std::move(catalog);
  e.table_pool_ = std::move(table_pool);
  return e;
}

Result<std::unique_ptr<RecordBatchStream>> Engine::Execute(std::string_view sql, const ExecuteOptions& options) const {
  QUIVER_RETURN_NOT_OK(CheckStatementComplexity(sql, options.complexity));
  Result<std::unique_ptr<RecordBatchStream>> out = Status::Invalid("the statement was not planned");
  QUIVER_RETURN_NOT_OK(RunOnLargeStack([&] { out = ExecuteHere(sql, options); }));
  return out;
}

Result<std::unique_ptr<RecordBatchStream>> Engine::ExecuteHere(std::string_view sql,
                                                               const ExecuteOptions& options) const {
  const auto planning_start = std::chrono::steady_clock::now();
  if (options.pool == nullptr) return Status::Invalid("ExecuteOptions.pool is required");
  if (options.max_batch_rows <= 0) return Status::Invalid("ExecuteOptions.max_batch_rows must be positive");
  if (sql.find('\0') != std::string_view::npos)
    return Status::Invalid("the statement holds a NUL byte (" +
                           DescribePosition(sql, static_cast<int>(sql.find('\0'))) + ")")
        .WithSqlState("42601");
  auto ctx = std::make_shared<ExecContext>();
  MemoryPoolOptions po;
  po.name = "sql-statement";
  po.limit_bytes = options.memory_limit_bytes;
  ctx->statement_pool = options.pool->MakeChild(po);
  auto child = [&](const char* name) {
    MemoryPoolOptions o;
    o.name = name;
    return ctx->statement_pool->MakeChild(o);
  };
  ctx->scan_pool = child("scan");
  ctx->build_pool = child("build");
  ctx->pool = child("probe");
  ctx->aggregate_pool = child("aggregate");
  ctx->sort_pool = child("sort");
  // Planning (libpg_query's tree, its JSON, the JSON DOM, the binder's
  // plan) is charged before it starts, as an estimate from the text's
  // length, to "sql-statement/plan", and given back once planning is over:
  // a statement whose text alone would take more than its limit fails here,
  // cleanly, with 53200.
  auto plan_pool = child("plan");
  const int64_t plan_bytes = PlanningEstimateBytes(static_cast<int64_t>(sql.size()));
  if (Status st = plan_pool->Reserve(plan_bytes); !st.ok()) {
    return Status::OutOfMemory("planning a statement of " + std::to_string(sql.size()) + " bytes needs about " +
                               std::to_string(plan_bytes) + " bytes (" + st.message() + ")")
        .WithSqlState("53200");
  }
  struct PlanReservation {
    MemoryPool* pool;
    int64_t bytes;
    ~PlanReservation() { pool->Unreserve(bytes); }
  } plan_reservation{plan_pool.get(), plan_bytes};
  join::TaskMemoryOptions to;
  to.mode = options.memory_mode;
  ctx->tmm = std::make_unique<join::TaskMemoryManager>(ctx->build_pool.get(), to);
  ctx->aggregate_tmm = std::make_unique<join::TaskMemoryManager>(ctx->aggregate_pool.get(), to);
  ctx->cancel = options.cancel;
  ctx->catalog = catalog_;
  ctx->max_batch_rows = options.max_batch_rows;
  // Under a small limit, operators emit smaller batches (joins of wide rows
  // otherwise hold tens of MiB of output per worker).
  if (options.memory_limit_bytes > 0 && options.memory_limit_bytes < (int64_t{256} << 20))
    ctx->max_batch_rows = std::min<int64_t>(ctx->max_batch_rows, 8192);
  if (options.threads < 0) return Status::Invalid("ExecuteOptions.threads must be >= 0");
  ctx->threads = options.threads == 0 ? TaskScheduler::HardwareThreads() : options.threads;
  if (ctx->threads > 1) ctx->scheduler = options.scheduler ? options.scheduler : TaskScheduler::Default();
  if (options.spill)
    ctx->spill =
        std::make_shared<SpillManager>(options.spill_directory, options.spill_compression, options.disk_budget);
  if (ctx->spill) {
    // A quarter of the room the statement starts with, 1 MiB .. 256 MiB.
    // AvailableBytes() is -1 when no pool up the tree has a limit: then
    // nothing spills early (only an OutOfMemory makes an operator spill).
    const int64_t room = ctx->statement_pool->AvailableBytes();
    if (room >= 0) ctx->spill_reserve_bytes = std::clamp<int64_t>(room / 4, 1 << 20, int64_t{256} << 20);
  }
  ctx->spilled_bytes = options.spilled_bytes;
  ctx->spilled_files = options.spilled_files;
  ctx->join_filters = options.join_filters;
  ctx->join_filter_counters = options.join_filter_counters;
  QUIVER_RETURN_NOT_OK(ctx->CheckCancel());

  std::unique_ptr<RecordBatchStream> root;
  SchemaPtr schema;
  const SparkCommand command = MatchSparkCommand(sql);
  if (command.kind != SparkCommand::Kind::kNone) {
    QUIVER_ASSIGN_OR_RETURN(root, RunSparkCommand(*catalog_, sql, command, ctx->pool.get()));
    schema = root->schema();
  } else {
    // Spark's backticks and `default.` qualifiers, for the PostgreSQL
    // grammar (offsets kept: error positions stay right).
    QUIVER_ASSIGN_OR_RETURN(std::string spark_text, RewriteSparkSql(sql, options.dialect == SqlDialect::kSpark));
    // Spark's inline tables: `FROM VALUES (1), (2) AS t(x)`, `VALUES 1, 2`.
    if (options.dialect == SqlDialect::kSpark) spark_text = RewriteInlineTables(spark_text);
    // DuckDB's `FROM 'x.parquet'`: the quoted path becomes "x.parquet".
    std::string text = RewriteFromStrings(spark_text);
    PgQueryParseResult parsed = pg_query_parse(text.c_str());
    struct Free {
      PgQueryParseResult* r;
      ~Free() { pg_query_free_parse_result(*r); }
    } free_parsed{&parsed};
    // PostgreSQL 16 accepts a subquery or VALUES in FROM without an alias;
    // the PostgreSQL 15 grammar refuses it, pointing at its '('. Such an
    // item is given a name no unquoted reference can spell ("?unnamed N",
    // after its closing parenthesis) and the text parsed again; positions
    // after it in messages shift by the name's length.
    for (int unnamed = 1; parsed.error && unnamed <= 64; ++unnamed) {
      const std::string message = parsed.error->message;
      if (message != "subquery in FROM must have an alias" && message != "VALUES in FROM must have an alias") break;
      const auto open = static_cast<size_t>(std::max(parsed.error->cursorpos - 1, 0));
      const std::optional<size_t> close = MatchingParenthesis(text, open);
      if (!close) break;
      text.insert(*close + 1, " AS \"?unnamed " + std::to_string(unnamed) + "\"");
      PgQueryParseResult again = pg_query_parse(text.c_str());
      pg_query_free_parse_result(parsed);
      parsed = again;
    }
    sql = text;
    if (parsed.error) {
      const int pos = parsed.error->cursorpos > 0 ? parsed.error->cursorpos - 1 : 0;
      return Status::Invalid(std::string(parsed.error->message) + " (" + DescribePosition(sql, pos) + ")")
          .WithSqlState("42601");
    }
    Json tree = Json::parse(parsed.parse_tree, nullptr, false);
    if (tree.is_discarded()) return Status::Invalid("the SQL parser returned an unreadable parse tree");
    if (!tree.contains("stmts") || tree["stmts"].empty())
      return Status::Invalid("empty statement").WithSqlState("42601");
    if (tree["stmts"].size() > 1) {
      return Status::NotImplemented("more than one statement is not supported (" +
                                    DescribePosition(sql, tree["stmts"][1].value("stmt_location", 0)) + ")")
          .WithSqlState("0A000");
    }
    // The tree's shape is libpg_query's; a shape this code does not expect
    // (nlohmann throws on a type mismatch) is reported, never trusted.
    try {
      Json& st = tree["stmts"][0]["stmt"];
      const int stmt_loc = tree["stmts"][0].value("stmt_location", 0);
      const std::string key = st.is_object() && !st.empty() ? st.begin().key() : std::string();
      ExecContext* raw = ctx.get();
      Binder binder(sql, catalog_,
                    [raw](LogicalOpPtr plan, bool exists) { return MakeRunner(raw, std::move(plan), exists); });
      BindLimits limits;
      if (options.planning_timeout_ms > 0) {
        limits.deadline = planning_start + std::chrono::milliseconds(options.planning_timeout_ms);
        limits.timeout_ms = options.planning_timeout_ms;
      }
      limits.cancel = options.cancel;
      binder.SetLimits(limits);
      binder.SetDialect(options.dialect);
      binder.SetFileTables(options.file_tables, ctx->scan_pool.get(), options.s3_files, options.path_tables);
      const std::string set_name = key == "VariableSetStmt" ? st[key].value("name", "") : std::string();
      if ((set_name == "dialect" || set_name == "quiver.dialect") && !options.set_dialect) {
        return Status::NotImplemented("SET " + set_name +
                                      ": this caller keeps no session setting (a server with a shared store fixes "
                                      "a session's dialect when it is opened: OpenSession's configuration dialect)");
      }
      if ((set_name == "dialect" || set_name == "quiver.dialect") && options.set_dialect &&
          st[key].value("kind", "") == "VAR_SET_VALUE" && st[key].contains("args") && st[key]["args"].size() == 1) {
        // SET dialect = postgres | spark: the caller's session keeps it.
        Json& arg = st[key]["args"][0];
        std::string value;
        if (arg.contains("A_Const") && arg["A_Const"].contains("sval"))
          value = arg["A_Const"]["sval"].value("sval", "");
        QUIVER_ASSIGN_OR_RETURN(SqlDialect d, ParseSqlDialect(value));
        options.set_dialect(d);
        auto s = std::make_shared<Schema>();
        root = std::make_unique<ConstStream>(s, nullptr);
        schema = s;
      } else if (key == "SelectStmt") {
        QUIVER_ASSIGN_OR_RETURN(BoundStatement bound, binder.BindSelectStatement(st["SelectStmt"]));
        QUIVER_ASSIGN_OR_RETURN(root, BuildOperators(*bound.plan, ctx.get()));
        auto s = std::make_shared<Schema>();
        for (size_t i = 0; i < bound.names.size(); ++i)
          s->fields.push_back(field(bound.names[i], bound.plan->columns[i].type, true));
        schema = s;
      } else if (key == "ExplainStmt" && st[key].contains("query") && st[key]["query"].contains("SelectStmt")) {
        // EXPLAIN [ANALYZE] SELECT ...: the logical plan, one line per row
        // (explain.h); ANALYZE runs it and adds the rows each operator returned.
        QUIVER_ASSIGN_OR_RETURN(BoundStatement bound, binder.BindSelectStatement(st[key]["query"]["SelectStmt"]));
        if (ExplainAnalyzes(st[key])) {
          auto profile = std::make_shared<PlanProfile>();
          QUIVER_ASSIGN_OR_RETURN(OperatorPtr query, BuildOperators(*bound.plan, ctx.get(), profile.get()));
          root = MakeExplainAnalyzeStream(bound.plan, std::move(query), std::move(profile), ctx->pool.get());
        } else {
          root = MakeExplainStream(bound.plan, ctx->pool.get());
        }
        schema = root->schema();
      } else if (key == "VariableShowStmt" && st[key].value("name", "") == "tables") {
        QUIVER_ASSIGN_OR_RETURN(root, ShowTables(*catalog_, {}, ctx->pool.get()));
        schema = root->schema();
      } else if (IsCatalogWrite(key) && writable_catalog_ && table_pool_) {
        CatalogWriteContext w;
        w.catalog = writable_catalog_.get();
        w.table_pool = table_pool_.get();
        w.unsupported = [&](const std::string& construct, int location) {
          return binder.Unsupported(construct, location);
        };
        w.where = [&](int location) { return DescribePosition(sql, location); };
        w.run_query = [&](Json& select, SchemaPtr* result) -> Result<std::vector<RecordBatchPtr>> {
          Binder b(sql, catalog_,
                   [raw](LogicalOpPtr plan, bool exists) { return MakeRunner(raw, std::move(plan), exists); });
          b.SetLimits(limits);
          b.SetDialect(options.dialect);
          QUIVER_ASSIGN_OR_RETURN(BoundStatement bound, b.BindSelectStatement(select));
          QUIVER_ASSIGN_OR_RETURN(OperatorPtr op, BuildOperators(*bound.plan, raw));
          auto s = std::make_shared<Schema>();
          for (size_t i = 0; i < bound.names.size(); ++i)
            s->fields.push_back(field(bound.names[i], OutputType(bound.plan->columns[i].type), true));
          *result = s;
          std::vector<RecordBatchPtr> batches;
          while (true) {
            QUIVER_RETURN_NOT_OK(raw->CheckCancel());
            QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr batch, op->Next());
            if (!batch) break;
            if (batch->num_rows > 0) batches.push_back(std::move(batch));
          }
          return batches;
        };
        QUIVER_RETURN_NOT_OK(ExecuteCatalogWrite(key, st[key], stmt_loc, w));
        auto s = std::make_shared<Schema>();
        root = std::make_unique<ConstStream>(s, nullptr);
        schema = s;
      } else if (key == "VariableShowStmt") {
        return binder.Unsupported("SHOW " + st[key].value("name", ""), stmt_loc);
      } else {
        return binder.Unsupported(StatementName(key), stmt_loc);
      }
    } catch (const std::exception& e) {
      return Status::Invalid(std::string("unexpected parse tree shape: ") + e.what());
    }
  }
  return std::unique_ptr<RecordBatchStream>(std::make_unique<StatementStream>(ctx, std::move(root), schema));
}

}  // namespace quiver::sql
