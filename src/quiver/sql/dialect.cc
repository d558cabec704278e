// quiver/sql/dialect.cc — see dialect.h.
#include "quiver/sql/dialect.h"

#include <string>

namespace quiver::sql {

const char* SqlDialectName(SqlDialect d) { return d == SqlDialect::kSpark ? "spark" : "postgres"; }

Result<SqlDialect> ParseSqlDialect(std::string_view name) {
  std::string n(name);
  for (char& c : n) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (n == "postgres" || n == "postgresql") return SqlDialect::kPostgres;
  if (n == "spark" || n == "databricks") return SqlDialect::kSpark;
  return Status::Invalid("unknown SQL dialect '" + std::string(name.substr(0, 64)) + "': postgres or spark")
      .WithSqlState("22023");
}

}  // namespace quiver::sql
