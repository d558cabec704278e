// quiver/sql/tpch_queries.h — the 22 TPC-H queries as the specification
// (TPC-H 3.0.1, section 2.4) writes them, with the validation substitution
// parameters of section 2.4.x.3; Q15's view is a WITH clause. Used by the
// TPC-H tests (against DuckDB), `quiver bench tpch` and `quiver demo`.
//
// Thread safety: immutable data.
#pragma once

#include <string_view>

namespace quiver::sql {

struct TpchQuery {
  int number;  ///< 1..22
  std::string_view sql;
};

/// The 22 queries, in order (TpchQueries()[i].number == i + 1).
const TpchQuery* TpchQueries();
inline constexpr int kNumTpchQueries = 22;

}  // namespace quiver::sql
