// quiver's minimal IDL of the Databricks SQL protocol (HiveServer2
// TCLIService with the Databricks/Spark extensions, field ids >= 1281).
//
// Only the structs and fields quiver sends or reads are declared; Thrift
// readers skip unknown fields, so replies from real warehouses that carry
// more still parse. The field ids are the wire contract and follow
// ../shared/docs/fetch-protocol.md (checked against @databricks/sql 2.1.0)
// and Hive's TCLIService.thrift. Written for quiver; not a copy of either.

namespace cpp quiver.tcli

enum TProtocolVersion {
  HIVE_CLI_SERVICE_PROTOCOL_V1 = 0,
  HIVE_CLI_SERVICE_PROTOCOL_V2 = 1,
  HIVE_CLI_SERVICE_PROTOCOL_V3 = 2,
  HIVE_CLI_SERVICE_PROTOCOL_V4 = 3,
  HIVE_CLI_SERVICE_PROTOCOL_V5 = 4,
  HIVE_CLI_SERVICE_PROTOCOL_V6 = 5,
  HIVE_CLI_SERVICE_PROTOCOL_V7 = 6,
  HIVE_CLI_SERVICE_PROTOCOL_V8 = 7,
  HIVE_CLI_SERVICE_PROTOCOL_V9 = 8,
  HIVE_CLI_SERVICE_PROTOCOL_V10 = 9,
  SPARK_CLI_SERVICE_PROTOCOL_V1 = 0xA501,
  SPARK_CLI_SERVICE_PROTOCOL_V2 = 0xA502,
  SPARK_CLI_SERVICE_PROTOCOL_V3 = 0xA503,
  SPARK_CLI_SERVICE_PROTOCOL_V4 = 0xA504,
  SPARK_CLI_SERVICE_PROTOCOL_V5 = 0xA505,
  SPARK_CLI_SERVICE_PROTOCOL_V6 = 0xA506,
  SPARK_CLI_SERVICE_PROTOCOL_V7 = 0xA507,
  SPARK_CLI_SERVICE_PROTOCOL_V8 = 0xA508,
  SPARK_CLI_SERVICE_PROTOCOL_V9 = 0xA509,
}

// Hive's TTypeId: the primitive type of a result column (TPrimitiveTypeEntry).
enum TTypeId {
  BOOLEAN_TYPE = 0, TINYINT_TYPE = 1, SMALLINT_TYPE = 2, INT_TYPE = 3,
  BIGINT_TYPE = 4, FLOAT_TYPE = 5, DOUBLE_TYPE = 6, STRING_TYPE = 7,
  TIMESTAMP_TYPE = 8, BINARY_TYPE = 9, ARRAY_TYPE = 10, MAP_TYPE = 11,
  STRUCT_TYPE = 12, UNION_TYPE = 13, USER_DEFINED_TYPE = 14, DECIMAL_TYPE = 15,
  NULL_TYPE = 16, DATE_TYPE = 17, VARCHAR_TYPE = 18, CHAR_TYPE = 19,
  INTERVAL_YEAR_MONTH_TYPE = 20, INTERVAL_DAY_TIME_TYPE = 21,
}

enum TStatusCode {
  SUCCESS_STATUS = 0, SUCCESS_WITH_INFO_STATUS = 1, STILL_EXECUTING_STATUS = 2,
  ERROR_STATUS = 3, INVALID_HANDLE_STATUS = 4,
}

enum TOperationState {
  INITIALIZED_STATE = 0, RUNNING_STATE = 1, FINISHED_STATE = 2, CANCELED_STATE = 3,
  CLOSED_STATE = 4, ERROR_STATE = 5, UKNOWN_STATE = 6, PENDING_STATE = 7,
  TIMEDOUT_STATE = 8,
}

enum TOperationType {
  EXECUTE_STATEMENT = 0, GET_TYPE_INFO = 1, GET_CATALOGS = 2, GET_SCHEMAS = 3,
  GET_TABLES = 4, GET_TABLE_TYPES = 5, GET_COLUMNS = 6, GET_FUNCTIONS = 7, UNKNOWN = 8,
}

enum TSparkRowSetType {
  ARROW_BASED_SET = 0, COLUMN_BASED_SET = 1, ROW_BASED_SET = 2, URL_BASED_SET = 3,
}

enum TFetchOrientation {
  FETCH_NEXT = 0, FETCH_PRIOR = 1, FETCH_RELATIVE = 2, FETCH_ABSOLUTE = 3,
  FETCH_FIRST = 4, FETCH_LAST = 5,
}

enum TGetInfoType {
  CLI_MAX_DRIVER_CONNECTIONS = 0, CLI_MAX_CONCURRENT_ACTIVITIES = 1,
  CLI_DATA_SOURCE_NAME = 2, CLI_FETCH_DIRECTION = 8, CLI_SERVER_NAME = 13,
  CLI_SEARCH_PATTERN_ESCAPE = 14, CLI_DBMS_NAME = 17, CLI_DBMS_VER = 18,
  CLI_ACCESSIBLE_TABLES = 19, CLI_ACCESSIBLE_PROCEDURES = 20,
  CLI_CURSOR_COMMIT_BEHAVIOR = 23, CLI_DATA_SOURCE_READ_ONLY = 25,
  CLI_DEFAULT_TXN_ISOLATION = 26, CLI_IDENTIFIER_CASE = 28,
  CLI_IDENTIFIER_QUOTE_CHAR = 29, CLI_MAX_COLUMN_NAME_LEN = 30,
  CLI_MAX_CURSOR_NAME_LEN = 31, CLI_MAX_SCHEMA_NAME_LEN = 32,
  CLI_MAX_CATALOG_NAME_LEN = 34, CLI_MAX_TABLE_NAME_LEN = 35,
  CLI_SCROLL_CONCURRENCY = 43, CLI_TXN_CAPABLE = 46, CLI_USER_NAME = 47,
  CLI_TXN_ISOLATION_OPTION = 72, CLI_INTEGRITY = 73, CLI_GETDATA_EXTENSIONS = 81,
  CLI_NULL_COLLATION = 85, CLI_ALTER_TABLE = 86, CLI_ORDER_BY_COLUMNS_IN_SELECT = 90,
  CLI_SPECIAL_CHARACTERS = 94, CLI_MAX_COLUMNS_IN_GROUP_BY = 97,
  CLI_MAX_COLUMNS_IN_INDEX = 98, CLI_MAX_COLUMNS_IN_ORDER_BY = 99,
  CLI_MAX_COLUMNS_IN_SELECT = 100, CLI_MAX_COLUMNS_IN_TABLE = 101,
  CLI_MAX_INDEX_SIZE = 102, CLI_MAX_ROW_SIZE = 104, CLI_MAX_STATEMENT_LEN = 105,
  CLI_MAX_TABLES_IN_SELECT = 106, CLI_MAX_USER_NAME_LEN = 107,
  CLI_OJ_CAPABILITIES = 115, CLI_XOPEN_CLI_YEAR = 10000,
  CLI_CURSOR_SENSITIVITY = 10001, CLI_DESCRIBE_PARAMETER = 10002,
  CLI_CATALOG_NAME = 10003, CLI_COLLATION_SEQ = 10004, CLI_MAX_IDENTIFIER_LEN = 10005,
}

struct TStatus {
  1: required TStatusCode statusCode
  2: optional list<string> infoMessages
  3: optional string sqlState
  4: optional i32 errorCode
  5: optional string errorMessage
  6: optional string displayMessage
}

struct THandleIdentifier {
  1: required binary guid
  2: required binary secret
}

struct TSessionHandle {
  1: required THandleIdentifier sessionId
}

struct TOperationHandle {
  1: required THandleIdentifier operationId
  2: required TOperationType operationType
  3: required bool hasResultSet
  4: optional double modifiedRowCount
}

union TTypeQualifierValue {
  1: i32 i32Value
  2: string stringValue
}

struct TTypeQualifiers {
  1: required map<string, TTypeQualifierValue> qualifiers
}

struct TPrimitiveTypeEntry {
  1: required TTypeId type
  2: optional TTypeQualifiers typeQualifiers
}

// Only the primitive entry is produced: complex Arrow types are announced by
// their top-level Hive type id, and clients read the values from the Arrow data.
union TTypeEntry {
  1: TPrimitiveTypeEntry primitiveEntry
}

struct TTypeDesc {
  1: required list<TTypeEntry> types
}

struct TColumnDesc {
  1: required string columnName
  2: required TTypeDesc typeDesc
  3: required i32 position
  4: optional string comment
}

struct TTableSchema {
  1: required list<TColumnDesc> columns
}

// Row-based values are never produced; the required `rows` list is sent empty.
struct TRow {
}

struct TSparkArrowBatch {
  1: required binary batch
  2: required i64 rowCount
}

struct TSparkArrowResultLink {
  1: required string fileLink
  2: required i64 expiryTime
  3: required i64 startRowOffset
  4: required i64 rowCount
  5: required i64 bytesNum
  6: optional map<string, string> httpHeaders
}

struct TRowSet {
  1: required i64 startRowOffset
  2: required list<TRow> rows
  5: optional i32 columnCount
  1281: optional list<TSparkArrowBatch> arrowBatches
  1282: optional list<TSparkArrowResultLink> resultLinks
}

struct TSparkGetDirectResults {
  1: required i64 maxRows
  2: optional i64 maxBytes
}

struct TOpenSessionReq {
  1: required TProtocolVersion client_protocol = TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
  2: optional string username
  3: optional string password
  4: optional map<string, string> configuration
  1282: optional i64 client_protocol_i64
  1283: optional map<string, string> connectionProperties
  1285: optional bool canUseMultipleCatalogs
}

struct TOpenSessionResp {
  1: required TStatus status
  2: required TProtocolVersion serverProtocolVersion = TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
  3: optional TSessionHandle sessionHandle
  4: optional map<string, string> configuration
  1285: optional bool canUseMultipleCatalogs
}

struct TCloseSessionReq {
  1: required TSessionHandle sessionHandle
}

struct TCloseSessionResp {
  1: required TStatus status
}

union TGetInfoValue {
  1: string stringValue
  2: i16 smallIntValue
  3: i32 integerBitmask
  4: i32 integerFlag
  5: i32 binaryValue
  6: i64 lenValue
}

struct TGetInfoReq {
  1: required TSessionHandle sessionHandle
  2: required TGetInfoType infoType
}

struct TGetInfoResp {
  1: required TStatus status
  2: required TGetInfoValue infoValue
}

struct TGetOperationStatusReq {
  1: required TOperationHandle operationHandle
  2: optional bool getProgressUpdate
}

struct TGetOperationStatusResp {
  1: required TStatus status
  2: optional TOperationState operationState
  3: optional string sqlState
  4: optional i32 errorCode
  5: optional string errorMessage
  7: optional i64 operationStarted
  8: optional i64 operationCompleted
  9: optional bool hasResultSet
  1281: optional string displayMessage
  1282: optional string diagnosticInfo
}

struct TGetResultSetMetadataReq {
  1: required TOperationHandle operationHandle
}

struct TGetResultSetMetadataResp {
  1: required TStatus status
  2: optional TTableSchema schema
  1281: optional TSparkRowSetType resultFormat
  1282: optional bool lz4Compressed
  1283: optional binary arrowSchema
  1285: optional i64 uncompressedBytes
  1286: optional i64 compressedBytes
  1287: optional bool isStagingOperation
}

struct TFetchResultsReq {
  1: required TOperationHandle operationHandle
  2: required TFetchOrientation orientation = TFetchOrientation.FETCH_NEXT
  3: required i64 maxRows
  4: optional i16 fetchType = 0
  1281: optional i64 maxBytes
  1282: optional i64 startRowOffset
  1283: optional bool includeResultSetMetadata
}

struct TFetchResultsResp {
  1: required TStatus status
  2: optional bool hasMoreRows
  3: optional TRowSet results
  1281: optional TGetResultSetMetadataResp resultSetMetadata
}

struct TCloseOperationReq {
  1: required TOperationHandle operationHandle
}

struct TCloseOperationResp {
  1: required TStatus status
}

struct TCancelOperationReq {
  1: required TOperationHandle operationHandle
}

struct TCancelOperationResp {
  1: required TStatus status
}

struct TSparkDirectResults {
  1: optional TGetOperationStatusResp operationStatus
  2: optional TGetResultSetMetadataResp resultSetMetadata
  3: optional TFetchResultsResp resultSet
  4: optional TCloseOperationResp closeOperation
}

struct TExecuteStatementReq {
  1: required TSessionHandle sessionHandle
  2: required string statement
  3: optional map<string, string> confOverlay
  4: optional bool runAsync = false
  5: optional i64 queryTimeout = 0
  1281: optional TSparkGetDirectResults getDirectResults
  1282: optional bool canReadArrowResult
  1283: optional bool canDownloadResult
  1284: optional bool canDecompressLZ4Result
  1285: optional i64 maxBytesPerFile
  1286: optional bool useArrowNativeTypes
  1287: optional i64 resultRowLimit
  1289: optional i64 maxBytesPerBatch
}

struct TExecuteStatementResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
  1281: optional TSparkDirectResults directResults
}

// Metadata operations: each returns an operation whose result is an Arrow
// result set like a statement's.
struct TGetCatalogsReq {
  1: required TSessionHandle sessionHandle
  1281: optional TSparkGetDirectResults getDirectResults
  1282: optional bool runAsync = false
}

struct TGetCatalogsResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
  1281: optional TSparkDirectResults directResults
}

struct TGetSchemasReq {
  1: required TSessionHandle sessionHandle
  2: optional string catalogName
  3: optional string schemaName
  1281: optional TSparkGetDirectResults getDirectResults
  1282: optional bool runAsync = false
}

struct TGetSchemasResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
  1281: optional TSparkDirectResults directResults
}

struct TGetTablesReq {
  1: required TSessionHandle sessionHandle
  2: optional string catalogName
  3: optional string schemaName
  4: optional string tableName
  5: optional list<string> tableTypes
  1281: optional TSparkGetDirectResults getDirectResults
  1282: optional bool runAsync = false
}

struct TGetTablesResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
  1281: optional TSparkDirectResults directResults
}

struct TGetColumnsReq {
  1: required TSessionHandle sessionHandle
  2: optional string catalogName
  3: optional string schemaName
  4: optional string tableName
  5: optional string columnName
  1281: optional TSparkGetDirectResults getDirectResults
  1282: optional bool runAsync = false
}

struct TGetColumnsResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
  1281: optional TSparkDirectResults directResults
}

// HiveServer2's GetFunctions (JDBC DatabaseMetaData.getFunctions): the
// function name is a LIKE pattern ('%', '_').
struct TGetFunctionsReq {
  1: required TSessionHandle sessionHandle
  2: optional string catalogName
  3: optional string schemaName
  4: required string functionName
  1281: optional TSparkGetDirectResults getDirectResults
  1282: optional bool runAsync = false
}

struct TGetFunctionsResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
  1281: optional TSparkDirectResults directResults
}

struct TGetTypeInfoReq {
  1: required TSessionHandle sessionHandle
  1281: optional TSparkGetDirectResults getDirectResults
  1282: optional bool runAsync = false
}

struct TGetTypeInfoResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
  1281: optional TSparkDirectResults directResults
}

service TCLIService {
  TOpenSessionResp OpenSession(1: TOpenSessionReq req)
  TCloseSessionResp CloseSession(1: TCloseSessionReq req)
  TGetInfoResp GetInfo(1: TGetInfoReq req)
  TExecuteStatementResp ExecuteStatement(1: TExecuteStatementReq req)
  TGetTypeInfoResp GetTypeInfo(1: TGetTypeInfoReq req)
  TGetCatalogsResp GetCatalogs(1: TGetCatalogsReq req)
  TGetSchemasResp GetSchemas(1: TGetSchemasReq req)
  TGetTablesResp GetTables(1: TGetTablesReq req)
  TGetColumnsResp GetColumns(1: TGetColumnsReq req)
  TGetFunctionsResp GetFunctions(1: TGetFunctionsReq req)
  TGetOperationStatusResp GetOperationStatus(1: TGetOperationStatusReq req)
  TCancelOperationResp CancelOperation(1: TCancelOperationReq req)
  TCloseOperationResp CloseOperation(1: TCloseOperationReq req)
  TGetResultSetMetadataResp GetResultSetMetadata(1: TGetResultSetMetadataReq req)
  TFetchResultsResp FetchResults(1: TFetchResultsReq req)
}
