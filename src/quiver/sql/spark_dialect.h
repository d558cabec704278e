// quiver/sql/spark_dialect.h — what Databricks clients send (Spark SQL),
// made into what the engine reads (the PostgreSQL 15 grammar of libpg_query).
//
// quiver presents its tables as one schema, kSchemaName ("default"), of one
// catalog, kCatalogName ("spark_catalog"; "hive_metastore", the name the
// Databricks workspaces give their legacy catalog, is accepted as a synonym
// in SQL text but never reported). The Thrift metadata answers
// (server/catalog_results.h) report the same two names.
//
// Two parts:
//   RewriteSparkSql  a lexical pre-pass over one statement's text, aware of
//                    PostgreSQL's tokens (it never looks inside '...' or
//                    E'...' strings, "..." identifiers, $tag$...$tag$
//                    strings, -- and nested /* */ comments):
//                    - `a``b` (a backtick-quoted identifier; `` is one
//                      backtick) becomes "a`b" (a " inside becomes "");
//                    - a qualifier that names quiver's schema, `default.t`
//                      or `spark_catalog.default.t` / `hive_metastore.
//                      default.t` (any case, any spacing around the dots),
//                      is blanked: the qualifier's bytes become spaces (a
//                      newline stays a newline), so `t` is read in its place
//                      and every byte offset after it is unchanged (error
//                      positions stay right). `default` is a reserved word of
//                      the PostgreSQL grammar, which is why it cannot pass
//                      through. `x.default.t` with another catalog x keeps
//                      its qualifier, quoted ("default"), for the binder to
//                      refuse (CheckQualifier).
//                    - with `spark` (the spark dialect, dialect.h):
//                      Spark's integer division `a div b` (the word div,
//                      any case, after an operand and before one) becomes
//                      `a / @ b`, same length, which the binder reads back
//                      as div (binding like `/`, tighter than `+`);
//                    - Spark's / DuckDB's `GROUP BY ALL` (ALL alone, before
//                      the end, `)`, `;` or a clause keyword) becomes
//                      `GROUP BY @#1`, same length, which the binder reads
//                      back as GROUP BY ALL (no type defines prefix `@#`);
//                    - `a [NOT] RLIKE b` and `a [NOT] REGEXP b` (Spark's
//                      infix regular expression match) become `a ~ b` /
//                      `a !~ b`, the words' bytes blanked (offsets kept);
//                      rlike(a, b) / regexp(a, b) stay function calls;
//                    - `try_cast(x AS t)` (Spark's and DuckDB's; any case)
//                      becomes `/**/cast(x AS t)`, same length: the binder
//                      reads a CAST whose keyword follows /**/ as try_cast
//                      (NULL where the value does not convert);
//                    - with `spark` (the spark dialect): Spark's string
//                      literals, '...' and "..." with backslash escapes
//                      (\uXXXX, \UXXXXXXXX, octal \ooo, \b \n \r \t \Z,
//                      any other \c is c; \% and \_ keep their backslash,
//                      as Spark's unescapeSQLString does) and r'...' raw
//                      ones, become PostgreSQL standard strings of the same
//                      value, padded with spaces to their length (offsets
//                      kept; a "..." holding a ' grows by one per '); a NUL
//                      (\0, \000, \u0000) is Invalid 22021. E'...' and
//                      $$...$$ stay PostgreSQL's. `a <=> b` becomes `a IS
//                      NOT DISTINCT FROM b` (offsets after it shift by 19)
//                      and `a == b` becomes `a = b` (same length);
//                    - Spark's `current_date()` / `current_timestamp()`
//                      (the grammar takes the bare words only) lose their
//                      empty parentheses, blanked (offsets kept).
//                    Offsets change only where a backtick identifier holds
//                    a " or a doubled backtick, and for `x.default.` (+2).
//   MatchSparkCommand  the Spark commands the grammar lacks, recognised
//                    whole (tokens, case-insensitive, an optional trailing
//                    ';'): SHOW SCHEMAS | DATABASES | NAMESPACES [IN|FROM
//                    catalog] [[LIKE] 'pattern'], SHOW CATALOGS [[LIKE]
//                    'pattern'], SHOW TABLES [IN|FROM [catalog.]schema]
//                    [[LIKE] 'pattern'], SHOW [USER | SYSTEM | ALL]
//                    FUNCTIONS [IN|FROM [catalog.]schema] [[LIKE]
//                    'pattern'], DESCRIBE | DESC [TABLE] [EXTENDED |
//                    FORMATTED] [[catalog.]schema.]table, USE [SCHEMA |
//                    DATABASE | NAMESPACE] [catalog.]schema, USE CATALOG
//                    catalog. Names may be bare, "quoted" or `quoted`.
//
// Errors: a schema other than default is KeyError with SQLSTATE 3F000
// (invalid_schema_name), a catalog other than quiver's KeyError 42704
// (undefined_object); an unterminated backtick identifier is Invalid 42601.
// All functions are pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "quiver/base/result.h"
#include "quiver/columnar/data_type.h"

namespace quiver::sql {

/// The catalog and the schema quiver's tables are reported in.
inline constexpr const char* kCatalogName = "spark_catalog";
inline constexpr const char* kSchemaName = "default";

/// Whether `name` (any case) names quiver's catalog: spark_catalog or
/// hive_metastore.
bool IsCatalogName(std::string_view name);

/// OK when `catalog` (empty = not given) and `schema` (empty = not given)
/// name quiver's catalog and schema (any case); else KeyError 42704 (the
/// catalog) or 3F000 (the schema), the message ending in " (" + where + ")"
/// when `where` is not empty.
Status CheckQualifier(std::string_view catalog, std::string_view schema, std::string_view where = {});

/// The statement text with Spark's lexical forms rewritten (see above).
/// Text without backticks or a `default` qualifier comes back unchanged.
/// Errors: Invalid (42601) for a backtick identifier without its closing
/// backtick, naming its position.
/// `spark`: the spark dialect's forms too (div, string literals, <=>, ==).
Result<std::string> RewriteSparkSql(std::string_view sql, bool spark = false);

/// DuckDB's file tables (file_tables.h): a '...' string that stands as a
/// FROM item of a SELECT (right after its FROM, a JOIN, or a ',' of its
/// FROM list) becomes a "..." identifier (a " inside doubled), which the
/// binder reads as a path: `SELECT * FROM 'x.parquet'`. Same length unless
/// the path holds ' or ". DuckDB's list of paths, `read_parquet(['a',
/// 'b'])` (also parquet_scan, read_csv, read_csv_auto), becomes
/// `read_parquet(ARRAY['a', 'b'])` (positions after it shift by 5). Other strings (`IS DISTINCT FROM 'a'`,
/// `trim(FROM 'a')`, comments, ...) are left alone; text with an
/// unterminated quote comes back unchanged (the parser reports it).
std::string RewriteFromStrings(std::string_view sql);

/// Spark's inline tables (the spark dialect; Spark SQL reference, "Inline
/// Table"): `FROM VALUES (1, 'a'), (2, 'b') [AS] t(x, y)` and `JOIN VALUES
/// ...` become `FROM (VALUES ...) [AS] t(x, y)`, which the grammar reads; a
/// row written as a bare expression (`VALUES 1, 2`: one column, there or
/// as a whole query, also after UNION / INTERSECT / EXCEPT or '(') is put
/// in parentheses. The list ends at its depth's first ',' -less item end: a
/// clause or join keyword, AS, or a word or "name" right after an operand
/// (the alias). The '(' before VALUES and the ')' after the list take the
/// place of a space where there is one, so offsets after them are kept;
/// each bare row's parentheses shift later offsets by 2. `INSERT ...
/// VALUES` and text that does not read as such a list come back unchanged.
std::string RewriteInlineTables(std::string_view sql);

/// A Spark command recognised by MatchSparkCommand.
struct SparkCommand {
  enum class Kind { kNone, kShowCatalogs, kShowSchemas, kShowTables, kShowFunctions, kDescribe, kUse };
  Kind kind = Kind::kNone;
  /// The name's parts as written (quotes removed; bare names lower-cased);
  /// empty when not given. kDescribe: catalog, schema, table; kShowTables:
  /// catalog, schema; kShowSchemas: catalog; kUse: catalog and/or schema;
  /// kShowFunctions: catalog, schema.
  std::string catalog, schema, table;
  /// kShowFunctions: SHOW USER FUNCTIONS (quiver has none).
  bool user_functions_only = false;
  /// The LIKE pattern of SHOW (Spark's: '*' any run, '|' alternatives;
  /// case-insensitive); empty = everything.
  std::string pattern;
  /// Byte offset in the text of the name (kDescribe, kShowTables,
  /// kShowFunctions, kUse),
  /// for error positions.
  int name_offset = 0;
};

/// Recognises one of the commands above filling the whole statement;
/// kNone for anything else (including text that merely starts like one).
/// Pure.
SparkCommand MatchSparkCommand(std::string_view sql);

/// Spark's SHOW ... LIKE matching: `pattern` is alternatives separated by
/// '|', each with '*' matching any run; case-insensitive; an empty pattern
/// matches everything. Pure.
bool SparkPatternMatch(std::string_view pattern, std::string_view text);

/// Spark SQL's name of the type a column of Arrow `type` is served as (the
/// Thrift type the server announces for it, server/result_service.cc
/// HiveTypeId), as DESCRIBE prints it: lower case, e.g. "bigint", "int",
/// "string", "decimal(15,2)", "date", "timestamp", "array<int>",
/// "map<string,bigint>", "struct<a:int,b:string>". Unsigned integers take
/// the next wider signed name (uint32 -> "bigint"; uint64 too), float16
/// "float", every string and binary layout "string" / "binary", TIME
/// "string" (served as text), duration "bigint", the null type "void",
/// dictionary and run-end encoded columns their value type. Pure;
/// thread-safe.
std::string SparkTypeName(const DataType& type);

}  // namespace quiver::sql
