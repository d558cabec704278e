// quiver/sql/binder/bind_grouping_sets.cc — GROUP BY GROUPING SETS / ROLLUP
// / CUBE and GROUPING() / grouping_id(): the clause is expanded into its
// list of grouping sets (the cross product of its items, as the SQL
// standard and PostgreSQL define it), and the aggregate is planned over a
// kExpand node that emits every row once per set with the columns outside
// the set NULL, plus the set's number (so equal sets stay apart) and the
// set's GROUPING() values as extra grouping columns. When every aggregate
// decomposes, the input is first aggregated by the finest set (every
// grouping expression) and the expand multiplies those groups instead of the
// input's rows (SplitAggregate, bind_aggregate_split.cc).
#include <algorithm>

#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {
namespace {

// At most this many grouping sets (CUBE of 12 columns); more is refused
// before anything is allocated for them.
constexpr size_t kMaxGroupingSets = 4096;
// GROUPING SETS inside GROUPING SETS nest at most this deep (the recursion
// over the parse tree is bounded).
constexpr int kMaxGroupingSetDepth = 16;

using SetList = std::vector<std::vector<int>>;

}  // namespace

Status Binder::Impl::BindGroupingSets(Json& clause, const std::function<Result<ExprPtr>(Json&)>& bind_item,
                                      std::vector<ExprPtr>* groups, std::vector<std::vector<int>>* sets) {
  auto index_of = [&](Json& node) -> Result<int> {
    QUIVER_ASSIGN_OR_RETURN(ExprPtr e, bind_item(node));
    for (size_t i = 0; i < groups->size(); ++i)
      if (ExprEquals(*(*groups)[i], *e)) return static_cast<int>(i);
    groups->push_back(e);
    return static_cast<int>(groups->size()) - 1;
  };
  // The columns of one element: an expression, or (a, b) (a RowExpr).
  auto element = [&](Json& node) -> Result<std::vector<int>> {
    std::vector<int> cols;
    if (node.contains("RowExpr")) {
      for (auto& a : node["RowExpr"]["args"]) {
        QUIVER_ASSIGN_OR_RETURN(int i, index_of(a));
        cols.push_back(i);
      }
    } else {
      QUIVER_ASSIGN_OR_RETURN(int i, index_of(node));
      cols.push_back(i);
    }
    return cols;
  };
  auto too_many = [&](int location) {
    return Unsupported("more than " + std::to_string(kMaxGroupingSets) + " grouping sets", location);
  };
  std::function<Result<SetList>(Json&, int)> item_sets = [&](Json& node, int depth) -> Result<SetList> {
    const int location = FirstLocation(node);
    if (depth > kMaxGroupingSetDepth) return Unsupported("GROUPING SETS nested deeper than 16", location);
    if (!node.contains("GroupingSet")) {
      QUIVER_ASSIGN_OR_RETURN(auto cols, element(node));
      return SetList{cols};
    }
    Json& gs = node["GroupingSet"];
    const std::string kind = gs.value("kind", "");
    SetList out;
    if (kind == "GROUPING_SET_EMPTY") return SetList{{}};
    if (!gs.contains("content")) return Error("empty " + kind, location);
    if (kind == "GROUPING_SET_ROLLUP" || kind == "GROUPING_SET_CUBE") {
      std::vector<std::vector<int>> elems;
      for (auto& c : gs["content"]) {
        QUIVER_ASSIGN_OR_RETURN(auto cols, element(c));
        elems.push_back(std::move(cols));
      }
      if (kind == "GROUPING_SET_ROLLUP") {
        for (size_t k = elems.size() + 1; k-- > 0;) {
          std::vector<int> set;
          for (size_t e = 0; e < k; ++e) set.insert(set.end(), elems[e].begin(), elems[e].end());
          out.push_back(std::move(set));
        }
        return out;
      }
      if (elems.size() > 12) return too_many(location);
      const size_t n = elems.size();
      for (size_t mask = (size_t{1} << n); mask-- > 0;) {  // all columns first, () last
        std::vector<int> set;
        for (size_t e = 0; e < n; ++e)
          if (mask & (size_t{1} << e)) set.insert(set.end(), elems[e].begin(), elems[e].end());
        out.push_back(std::move(set));
      }
      return out;
    }
    if (kind != "GROUPING_SET_SETS") return Unsupported("grouping set kind " + kind, location);
    for (auto& c : gs["content"]) {
      QUIVER_ASSIGN_OR_RETURN(SetList inner, item_sets(c, depth + 1));
      if (out.size() + inner.size() > kMaxGroupingSets) return too_many(location);
      out.insert(out.end(), inner.begin(), inner.end());
    }
    return out;
  };
  // The cross product of the items' lists.
  SetList product{{}};
  for (auto& item : clause) {
    QUIVER_ASSIGN_OR_RETURN(SetList sl, item_sets(item, 0));
    if (product.size() * sl.size() > kMaxGroupingSets) return too_many(FirstLocation(item));
    SetList next;
    for (const auto& a : product)
      for (const auto& b : sl) {
        std::vector<int> set = a;
        set.insert(set.end(), b.begin(), b.end());
        next.push_back(std::move(set));
      }
    product = std::move(next);
  }
  for (auto& set : product) {
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
  }
  *sets = std::move(product);
  return Status::OK();
}

Result<ExprPtr> Binder::Impl::BindGroupingFunc(Json& node, ExprContext* ctx) {
  const int location = FirstLocation(node);
  if (!ctx->groupings || ctx->in_aggregate) return Error("GROUPING() is not allowed in " + ctx->clause, location);
  Json* args = nullptr;
  if (node.contains("GroupingFunc")) {
    if (node["GroupingFunc"].contains("args")) args = &node["GroupingFunc"]["args"];
  } else if (node["FuncCall"].contains("args")) {
    args = &node["FuncCall"]["args"];
  }
  if (!args || args->empty()) return Error("GROUPING() needs at least one argument", location);
  if (args->size() > 62) return Error("GROUPING() takes at most 62 arguments", location);
  GroupingCall call;
  call.location = location;
  ExprContext inner{ctx->scope, "GROUPING()", nullptr, false, nullptr};
  for (auto& a : *args) {
    QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(a, &inner));
    call.args.push_back(e);
  }
  call.output_id = NewId();
  ctx->groupings->push_back(call);
  return Expr::Column(call.output_id, int64(), location);
}

Result<LogicalOpPtr> Binder::Impl::PlanGroupingSets(LogicalOpPtr input, const std::vector<ExprPtr>& groups,
                                                    const std::vector<ExprPtr>& values,
                                                    const std::vector<std::vector<int>>& sets,
                                                    const std::vector<GroupingCall>& groupings,
                                                    std::vector<ExprPtr>* agg_groups,
                                                    std::vector<ColumnBinding>* extra) {
  auto expand = std::make_shared<LogicalOp>();
  expand->kind = LogicalOp::Kind::kExpand;
  expand->columns = input->columns;
  std::vector<int> expand_ids;
  for (size_t g = 0; g < groups.size(); ++g) {
    expand_ids.push_back(NewId());
    expand->columns.push_back({expand_ids.back(), "group" + std::to_string(g), groups[g]->type});
  }
  const int set_id = NewId();
  expand->columns.push_back({set_id, "__grouping_set", int64()});
  std::vector<int> call_ids;
  for (size_t c = 0; c < groupings.size(); ++c) {
    call_ids.push_back(NewId());
    expand->columns.push_back({call_ids.back(), "grouping", int64()});
  }
  // Each GROUPING() argument's position in `groups`.
  std::vector<std::vector<int>> arg_groups;
  for (const auto& call : groupings) {
    std::vector<int> idx;
    for (const auto& a : call.args) {
      int found = -1;
      for (size_t g = 0; g < groups.size() && found < 0; ++g)
        if (ExprEquals(*groups[g], *a)) found = static_cast<int>(g);
      if (found < 0) return Error("arguments to GROUPING must be grouping expressions of the query", call.location);
      idx.push_back(found);
    }
    arg_groups.push_back(std::move(idx));
  }
  for (size_t k = 0; k < sets.size(); ++k) {
    std::vector<ExprPtr> row;
    for (size_t g = 0; g < groups.size(); ++g) {
      const bool in_set = std::find(sets[k].begin(), sets[k].end(), static_cast<int>(g)) != sets[k].end();
      row.push_back(in_set ? values[g] : Expr::Constant(Value::Null(groups[g]->type)));
    }
    row.push_back(Expr::Constant(Value::Int64(static_cast<int64_t>(k))));
    for (const auto& idx : arg_groups) {
      int64_t v = 0;
      for (int g : idx) {
        const bool in_set = std::find(sets[k].begin(), sets[k].end(), g) != sets[k].end();
        v = (v << 1) | (in_set ? 0 : 1);
      }
      row.push_back(Expr::Constant(Value::Int64(v)));
    }
    expand->expand_sets.push_back(std::move(row));
  }
  expand->est_rows = input->est_rows * static_cast<double>(sets.size());
  expand->base_rows = input->base_rows;
  expand->children = {std::move(input)};
  agg_groups->clear();
  for (size_t g = 0; g < groups.size(); ++g) agg_groups->push_back(Expr::Column(expand_ids[g], groups[g]->type));
  agg_groups->push_back(Expr::Column(set_id, int64()));
  extra->clear();
  extra->push_back({NewId(), "__grouping_set", int64()});
  for (size_t c = 0; c < groupings.size(); ++c) {
    agg_groups->push_back(Expr::Column(call_ids[c], int64()));
    extra->push_back({groupings[c].output_id, "grouping", int64()});
  }
  return LogicalOpPtr(expand);
}

}  // namespace quiver::sql
