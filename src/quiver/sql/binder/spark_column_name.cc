// quiver/sql/binder/spark_column_name.cc — see spark_column_name.h.
#include "quiver/sql/binder/spark_column_name.h"

#include <cctype>
#include <string>
#include <vector>

namespace quiver::sql {
namespace {

using Json = nlohmann::json;

constexpr int kMaxDepth = 64;

std::string Sval(const Json& node) {
  if (node.contains("String")) return node["String"].value("sval", "");
  return "";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Spark's type name for a CAST's target (DataType.sql).
std::string SparkTypeName(const Json& type_name) {
  std::string n;
  if (type_name.contains("names"))
    for (const auto& x : type_name["names"]) n = Lower(Sval(x));
  std::vector<long long> mods;
  if (type_name.contains("typmods"))
    for (const auto& m : type_name["typmods"])
      if (m.contains("A_Const") && m["A_Const"].contains("ival"))
        mods.push_back(m["A_Const"]["ival"].value("ival", 0LL));
  if (n == "int4" || n == "int" || n == "integer") return "INT";
  if (n == "int8" || n == "bigint") return "BIGINT";
  if (n == "int2" || n == "smallint") return "SMALLINT";
  if (n == "tinyint") return "TINYINT";
  if (n == "float8" || n == "double") return "DOUBLE";
  if (n == "float4" || n == "real" || n == "float") return "FLOAT";
  if (n == "bool" || n == "boolean") return "BOOLEAN";
  if (n == "text" || n == "varchar" || n == "string" || n == "bpchar" || n == "char") return "STRING";
  if (n == "numeric" || n == "decimal") {
    const long long p = mods.empty() ? 10 : mods[0], s = mods.size() > 1 ? mods[1] : 0;
    return "DECIMAL(" + std::to_string(p) + "," + std::to_string(s) + ")";
  }
  if (n == "timestamp" || n == "timestamptz") return "TIMESTAMP";
  return Upper(n);
}

class Namer {
 public:
  std::string Name(const Json& v, int depth) {
    if (depth > kMaxDepth) return "...";
    if (v.contains("ColumnRef")) {
      const auto& f = v["ColumnRef"]["fields"];
      if (!f.empty() && f.back().contains("A_Star")) return "*";
      return f.empty() ? std::string() : Sval(f.back());
    }
    if (v.contains("A_Const")) return Constant(v["A_Const"]);
    if (v.contains("FuncCall")) return Call(v["FuncCall"], depth);
    if (v.contains("TypeCast")) return Cast(v["TypeCast"], depth);
    if (v.contains("A_Expr")) return Operator(v["A_Expr"], depth);
    if (v.contains("BoolExpr")) return Bool(v["BoolExpr"], depth);
    if (v.contains("NullTest")) {
      const Json& n = v["NullTest"];
      const std::string arg = Name(n["arg"], depth + 1);
      if (arg.empty()) return "";
      return "(" + arg + (n.value("nulltesttype", "") == "IS_NOT_NULL" ? " IS NOT NULL)" : " IS NULL)");
    }
    if (v.contains("CoalesceExpr")) return List("coalesce", v["CoalesceExpr"]["args"], depth);
    if (v.contains("MinMaxExpr")) {
      const Json& m = v["MinMaxExpr"];
      return List(m.value("op", "") == "IS_LEAST" ? "least" : "greatest", m["args"], depth);
    }
    if (v.contains("CaseExpr")) return Case(v["CaseExpr"], depth);
    if (v.contains("SubLink") && v["SubLink"].value("subLinkType", "") == "EXPR_SUBLINK") return "scalarsubquery()";
    if (v.contains("SubLink") && v["SubLink"].value("subLinkType", "") == "EXISTS_SUBLINK") return "exists()";
    if (v.contains("SQLValueFunction")) {
      const std::string op = v["SQLValueFunction"].value("op", "");
      if (op == "SVFOP_CURRENT_DATE") return "current_date()";
      if (op == "SVFOP_CURRENT_TIMESTAMP") return "current_timestamp()";
    }
    return "";
  }

 private:
  static std::string Constant(const Json& c) {
    if (c.value("isnull", false)) return "NULL";
    if (c.contains("ival")) return std::to_string(c["ival"].value("ival", 0LL));
    if (c.contains("fval")) return c["fval"].value("fval", "");
    if (c.contains("sval")) return c["sval"].value("sval", "");  // Spark shows string literals unquoted
    if (c.contains("boolval")) return c["boolval"].value("boolval", false) ? "true" : "false";
    return "";
  }

  std::string List(const std::string& fn, const Json& args, int depth) {
    std::string out = fn + "(";
    bool first = true;
    if (args.is_array()) {
      for (const auto& a : args) {
        const std::string s = Name(a, depth + 1);
        if (s.empty()) return "";
        out += (first ? "" : ", ") + s;
        first = false;
      }
    }
    return out + ")";
  }

  std::string Call(const Json& f, int depth) {
    std::string fn;
    for (const auto& x : f["funcname"]) fn = Lower(Sval(x));
    if (fn.empty() || f.contains("over")) return "";  // window calls: PostgreSQL's name
    if (f.value("agg_star", false)) return fn == "count" ? "count(1)" : fn + "(*)";
    std::string out = List(fn, f.contains("args") ? f["args"] : Json::array(), depth);
    if (out.empty()) return "";
    if (f.value("agg_distinct", false)) out.insert(fn.size() + 1, "DISTINCT ");
    return out;
  }

  std::string Cast(const Json& c, int depth) {
    const std::string arg = Name(c["arg"], depth + 1);
    if (arg.empty()) return "";
    // A typed literal (DATE '2024-01-01'): Spark prints the literal.
    if (c["arg"].contains("A_Const") && c["arg"]["A_Const"].contains("sval")) {
      const std::string t = SparkTypeName(c["typeName"]);
      if (t == "DATE" || t == "TIMESTAMP") return t + " '" + arg + "'";
    }
    return "CAST(" + arg + " AS " + SparkTypeName(c["typeName"]) + ")";
  }

  std::string Operator(const Json& a, int depth) {
    const std::string kind = a.value("kind", "");
    std::string op;
    if (a.contains("name"))
      for (const auto& x : a["name"]) op = Sval(x);
    const bool has_l = a.contains("lexpr"), has_r = a.contains("rexpr");
    const std::string l = has_l ? Name(a["lexpr"], depth + 1) : "";
    if (has_l && l.empty()) return "";
    if (kind == "AEXPR_OP" && has_r) {
      const std::string r = Name(a["rexpr"], depth + 1);
      if (r.empty()) return "";
      if (!has_l) return "(" + op + " " + r + ")";  // unary: (- x)
      if (op == "||") return "concat(" + l + ", " + r + ")";
      if (op == "<>" || op == "!=") return "(NOT (" + l + " = " + r + "))";
      if (op == "~") return "RLIKE(" + l + ", " + r + ")";
      return "(" + l + " " + op + " " + r + ")";
    }
    // IN and BETWEEN take a list: {"List": {"items": [...]}} (or a bare array).
    const Json empty = Json::array();
    const Json& items = !has_r                        ? empty
                        : a["rexpr"].is_array()       ? a["rexpr"]
                        : a["rexpr"].contains("List") ? a["rexpr"]["List"].value("items", empty)
                                                      : empty;
    if (kind == "AEXPR_IN" && !items.empty()) {
      std::string list = List("", items, depth);
      if (list.empty()) return "";
      return "(" + l + (op == "<>" ? " NOT IN " : " IN ") + list + ")";
    }
    if ((kind == "AEXPR_BETWEEN" || kind == "AEXPR_NOT_BETWEEN") && items.size() == 2) {
      const std::string lo = Name(items[0], depth + 1), hi = Name(items[1], depth + 1);
      if (lo.empty() || hi.empty()) return "";
      return "(" + l + (kind == "AEXPR_NOT_BETWEEN" ? " NOT BETWEEN " : " BETWEEN ") + lo + " AND " + hi + ")";
    }
    if ((kind == "AEXPR_LIKE" || kind == "AEXPR_ILIKE") && has_r) {
      const std::string r = Name(a["rexpr"], depth + 1);
      if (r.empty()) return "";
      const std::string word = kind == "AEXPR_LIKE" ? " LIKE " : " ILIKE ";
      const bool negated = op.size() > 1 && op[0] == '!';
      return negated ? "(NOT " + l + word + r + ")" : l + word + r;
    }
    if (kind == "AEXPR_NULLIF" && a["rexpr"].is_object()) {
      const std::string r = Name(a["rexpr"], depth + 1);
      return r.empty() ? "" : "nullif(" + l + ", " + r + ")";
    }
    if ((kind == "AEXPR_DISTINCT" || kind == "AEXPR_NOT_DISTINCT") && has_r) {
      const std::string r = Name(a["rexpr"], depth + 1);
      if (r.empty()) return "";
      return kind == "AEXPR_NOT_DISTINCT" ? "(" + l + " <=> " + r + ")" : "(NOT (" + l + " <=> " + r + "))";
    }
    return "";
  }

  std::string Bool(const Json& b, int depth) {
    const std::string op = b.value("boolop", "");
    std::vector<std::string> args;
    for (const auto& a : b["args"]) {
      args.push_back(Name(a, depth + 1));
      if (args.back().empty()) return "";
    }
    if (op == "NOT_EXPR" && args.size() == 1) return "(NOT " + args[0] + ")";
    const std::string word = op == "AND_EXPR" ? " AND " : " OR ";
    if (args.empty()) return "";
    // Spark's And / Or are binary: ((a AND b) AND c).
    std::string out = args[0];
    for (size_t i = 1; i < args.size(); ++i) out = "(" + out + word + args[i] + ")";
    return out;
  }

  std::string Case(const Json& c, int depth) {
    std::string out = "CASE";
    if (c.contains("arg")) {
      const std::string a = Name(c["arg"], depth + 1);
      if (a.empty()) return "";
      out += " " + a;
    }
    for (const auto& w : c["args"]) {
      if (!w.contains("CaseWhen")) return "";
      const std::string cond = Name(w["CaseWhen"]["expr"], depth + 1);
      const std::string result = Name(w["CaseWhen"]["result"], depth + 1);
      if (cond.empty() || result.empty()) return "";
      out += " WHEN " + cond + " THEN " + result;
    }
    if (c.contains("defresult")) {
      const std::string d = Name(c["defresult"], depth + 1);
      if (d.empty()) return "";
      out += " ELSE " + d;
    }
    return out + " END";
  }
};

}  // namespace

std::string SparkColumnName(const nlohmann::json& node) {
  try {
    return Namer().Name(node, 0);
  } catch (const std::exception&) {
    return "";  // a shape this code does not expect: the caller's name
  }
}

}  // namespace quiver::sql
