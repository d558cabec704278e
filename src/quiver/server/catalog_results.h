// quiver/server/catalog_results.h — the Arrow results of the metadata
// operations (GetCatalogs, GetSchemas, GetTables, GetColumns, GetTypeInfo,
// GetFunctions),
// with the JDBC DatabaseMetaData column names real clients read.
//
// quiver serves one catalog, kCatalogName ("spark_catalog"), with one
// schema, kSchemaName ("default"),
// holding the executor's tables. Name filters are JDBC LIKE patterns ('%'
// any run, '_' one character, '\' escapes; case-insensitive); an empty
// pattern matches everything.
//
// Every result is one record batch whose buffers are charged to `pool`.
// Errors: OutOfMemory from the pool. Pure otherwise; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/server/statement_executor.h"
#include "quiver/sql/spark_dialect.h"
#include "quiver/tcli/tcli_service_types.h"

namespace quiver::server {
namespace t = ::quiver::tcli;

// The names the SQL layer accepts as qualifiers (sql/spark_dialect.h).
using sql::kCatalogName;
using sql::kSchemaName;

/// How a column's type is described in GetColumns.
struct ColumnTypeInfo {
  int32_t jdbc_type = 1111;  ///< java.sql.Types code (OTHER by default)
  std::string type_name;     ///< Hive name, e.g. "BIGINT", "DECIMAL(12,2)"
  int32_t column_size = 0;   ///< precision for decimals, else 0
  int32_t decimal_digits = 0;
};

/// The java.sql.Types code of a Hive TTypeId value (e.g. BIGINT -5, DECIMAL 3).
int32_t JdbcTypeCode(int hive_type_id);

/// JDBC LIKE matching (see above). Pure.
bool LikeMatch(std::string_view pattern, std::string_view text);

/// Metadata results are BatchVectorStream (columnar/record_batch_stream.h).
using quiver::BatchVectorStream;

/// TABLE_CAT.
Result<std::unique_ptr<RecordBatchStream>> CatalogsResult(MemoryPool* pool);
/// TABLE_SCHEM, TABLE_CATALOG.
Result<std::unique_ptr<RecordBatchStream>> SchemasResult(const std::string& catalog, const std::string& schema_pattern,
                                                         MemoryPool* pool);
/// TABLE_CAT, TABLE_SCHEM, TABLE_NAME, TABLE_TYPE ("TABLE"), REMARKS.
Result<std::unique_ptr<RecordBatchStream>> TablesResult(const std::vector<TableInfo>& tables,
                                                        const std::string& catalog, const std::string& schema_pattern,
                                                        const std::string& table_pattern, MemoryPool* pool);
/// TABLE_CAT, TABLE_SCHEM, TABLE_NAME, COLUMN_NAME, DATA_TYPE (int32),
/// TYPE_NAME, COLUMN_SIZE (int32), DECIMAL_DIGITS (int32), NULLABLE (int32:
/// 0 no nulls, 1 nullable), REMARKS, ORDINAL_POSITION (int32, 1-based),
/// IS_NULLABLE ("YES"/"NO").
Result<std::unique_ptr<RecordBatchStream>> ColumnsResult(
    const std::vector<TableInfo>& tables, const std::string& catalog, const std::string& schema_pattern,
    const std::string& table_pattern, const std::string& column_pattern,
    const std::function<ColumnTypeInfo(const DataType&)>& type_info, MemoryPool* pool);
/// TYPE_NAME, DATA_TYPE (int32) for the Hive primitive types.
Result<std::unique_ptr<RecordBatchStream>> TypeInfoResult(MemoryPool* pool);
/// GetFunctions (JDBC getFunctions, as Spark's thrift server answers it):
/// FUNCTION_CAT, FUNCTION_SCHEM, FUNCTION_NAME, REMARKS (the signature and
/// what it computes), FUNCTION_TYPE (int32, 0: DatabaseMetaData's
/// functionResultUnknown, the value Spark's SparkGetFunctionsOperation
/// answers for every function; JDBC's functionNoTable is 1,
/// functionReturnsTable 2), SPECIFIC_NAME (the catalogue
/// entry's name: an alias's row names the function it stands for). One row
/// per name and alias of the SQL function catalogue
/// (sql/expression/function_catalog.h) matching `function_pattern`, sorted
/// by name; none when `catalog` or `schema_pattern` does not match.
Result<std::unique_ptr<RecordBatchStream>> FunctionsResult(const std::string& catalog,
                                                           const std::string& schema_pattern,
                                                           const std::string& function_pattern, MemoryPool* pool);

/// Each metadata request's result: the functions above with the request's
/// filters (an unset filter matches everything).
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetCatalogsReq& req, const StatementExecutor& ex,
                                                          MemoryPool* pool);
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetSchemasReq& req, const StatementExecutor& ex,
                                                          MemoryPool* pool);
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetTablesReq& req, const StatementExecutor& ex,
                                                          MemoryPool* pool);
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetColumnsReq& req, const StatementExecutor& ex,
                                                          MemoryPool* pool);
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetTypeInfoReq& req, const StatementExecutor& ex,
                                                          MemoryPool* pool);
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetFunctionsReq& req, const StatementExecutor& ex,
                                                          MemoryPool* pool);

/// GetInfo's answer for `info_type`, a TGetInfoType value as the client sent
/// it (any i32: read with WireEnum, thrift_messages.h) (what ODBC/JDBC bridges
/// and BI tools ask when they connect: names, limits, capabilities;
/// CLI_MAX_CONCURRENT_ACTIVITIES is `max_operations`); false for a value
/// quiver does not answer, including ones outside the enum.
bool FillInfoValue(int32_t info_type, int max_operations, t::TGetInfoValue* out);

}  // namespace quiver::server
