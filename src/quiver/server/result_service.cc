// quiver/server/result_service.cc — TCLIService handler: sessions,
// operations, chunked results. The only file of the server that includes the
// generated Thrift service code (with the fuzz target and the tests).
#include "quiver/server/result_service.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <thrift/TConfiguration.h>
#include <thrift/TOutput.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "quiver/columnar/value_format.h"
#include "quiver/fetch/chunk_writer.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"
#include "quiver/server/catalog_results.h"
#include "quiver/tcli/TCLIService.h"

namespace quiver::server {
namespace t = ::quiver::tcli;
using apache::thrift::transport::TMemoryBuffer;
using fetch::NowEpochMs;

namespace {

// IPC end-of-stream marker length (0xFFFFFFFF, then int32 0).
constexpr int64_t kEosBytes = 8;
constexpr int kHandleBytes = 16;
// Largest IPC bytes of inline batches in one FetchResults reply (beyond the
// first chunk, which always goes).
constexpr int64_t kMaxInlinePageBytes = int64_t{16} << 20;

std::string RandomHandleBytes(bool uuid_v4) {
  uint8_t b[kHandleBytes];
  if (RAND_bytes(b, kHandleBytes) != 1) {
    // RAND_bytes failing is extraordinary; fall back to the clock so that
    // handles stay unique (they are not the authority: the secret is compared too).
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    std::memcpy(b, &now, sizeof now);
    std::memcpy(b + 8, &now, sizeof now);
  }
  if (uuid_v4) {  // RFC 4122: version 4, variant 10xx
    b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);
    b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);
  }
  return std::string(reinterpret_cast<char*>(b), kHandleBytes);
}

std::string Hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::optional<std::string> Unhex(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = val(hex[2 * i]), lo = val(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

// A Thrift struct as binary-protocol bytes, and back.
template <typename T>
std::string ThriftBytes(const T& value) {
  auto buf = std::make_shared<TMemoryBuffer>();
  apache::thrift::protocol::TBinaryProtocolT<TMemoryBuffer> prot(buf);
  value.write(&prot);
  return buf->getBufferAsString();
}

template <typename T>
bool FromThriftBytes(const std::string& bytes, T* value) {
  try {
    auto buf = std::make_shared<TMemoryBuffer>(reinterpret_cast<uint8_t*>(const_cast<char*>(bytes.data())),
                                               static_cast<uint32_t>(bytes.size()), TMemoryBuffer::OBSERVE);
    apache::thrift::protocol::TBinaryProtocolT<TMemoryBuffer> prot(buf);
    value->read(&prot);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

t::TStatus OkStatus() {
  t::TStatus s;
  s.statusCode = t::TStatusCode::SUCCESS_STATUS;
  return s;
}

t::TStatus ErrorStatus(const std::string& message, t::TStatusCode::type code = t::TStatusCode::ERROR_STATUS,
                       const std::string& sql_state = "HY000") {
  t::TStatus s;
  s.statusCode = code;
  s.__set_errorMessage(message);
  s.__set_displayMessage(message);
  s.__set_sqlState(sql_state);
  s.__set_errorCode(code == t::TStatusCode::INVALID_HANDLE_STATUS ? 4 : 3);
  return s;
}

// The error's own SQLSTATE (Status::sql_state, set where it was raised),
// else one for its code.
std::string SqlStateFor(const Status& st) {
  if (!st.sql_state().empty()) return std::string(st.sql_state());
  switch (st.code()) {
    case StatusCode::kNotImplemented: return "0A000";
    case StatusCode::kKeyError:
      // PostgreSQL's classes: undefined_table (which also covers a missing
      // FROM entry). Transitional until the SQL layer sets 42703 on its
      // unknown-column errors itself: the message is looked at only here.
      return st.message().rfind("no column named", 0) == 0 ? "42703" : "42P01";
    case StatusCode::kInvalid: return "42601";
    case StatusCode::kCancelled: return "HY008";
    case StatusCode::kOutOfMemory: return "53200";
    default: return "HY000";
  }
}

// ---- Arrow -> Hive types ---------------------------------------------------

t::TTypeId::type HiveTypeId(const DataType& type) {
  switch (type.id) {
    case TypeId::kNull: return t::TTypeId::NULL_TYPE;
    case TypeId::kBool: return t::TTypeId::BOOLEAN_TYPE;
    case TypeId::kInt8: return t::TTypeId::TINYINT_TYPE;
    case TypeId::kInt16:
    case TypeId::kUInt8: return t::TTypeId::SMALLINT_TYPE;
    case TypeId::kInt32:
    case TypeId::kUInt16: return t::TTypeId::INT_TYPE;
    case TypeId::kInt64:
    case TypeId::kUInt32:
    case TypeId::kUInt64: return t::TTypeId::BIGINT_TYPE;
    case TypeId::kFloat16:
    case TypeId::kFloat32: return t::TTypeId::FLOAT_TYPE;
    case TypeId::kFloat64: return t::TTypeId::DOUBLE_TYPE;
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kUtf8View: return t::TTypeId::STRING_TYPE;
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kBinaryView:
    case TypeId::kFixedSizeBinary: return t::TTypeId::BINARY_TYPE;
    case TypeId::kDecimal: return t::TTypeId::DECIMAL_TYPE;
    case TypeId::kDate32:
    case TypeId::kDate64: return t::TTypeId::DATE_TYPE;
    case TypeId::kTimestamp: return t::TTypeId::TIMESTAMP_TYPE;
    case TypeId::kTime32:
    case TypeId::kTime64: return t::TTypeId::STRING_TYPE;  // no TIME in the protocol: sent as text (TimeAsText)
    case TypeId::kDuration: return t::TTypeId::BIGINT_TYPE;
    case TypeId::kIntervalYearMonth: return t::TTypeId::INTERVAL_YEAR_MONTH_TYPE;
    case TypeId::kIntervalDayTime:
    case TypeId::kIntervalMonthDayNano: return t::TTypeId::INTERVAL_DAY_TIME_TYPE;
    case TypeId::kList:
    case TypeId::kLargeList:
    case TypeId::kListView:
    case TypeId::kLargeListView:
    case TypeId::kFixedSizeList: return t::TTypeId::ARRAY_TYPE;
    case TypeId::kStruct: return t::TTypeId::STRUCT_TYPE;
    case TypeId::kMap: return t::TTypeId::MAP_TYPE;
    case TypeId::kSparseUnion:
    case TypeId::kDenseUnion: return t::TTypeId::UNION_TYPE;
    case TypeId::kRunEndEncoded:
      return type.children.size() == 2 ? HiveTypeId(*type.children[1]->type) : t::TTypeId::STRING_TYPE;
    case TypeId::kDictionary: return type.value_type ? HiveTypeId(*type.value_type) : t::TTypeId::STRING_TYPE;
  }
  return t::TTypeId::STRING_TYPE;
}

// ---- TIME as text ------------------------------------------------------------
// The protocol has no TIME type (TTypeId: no TIME_TYPE; Hive and Databricks
// SQL have none), so a time32 / time64 column is announced as STRING_TYPE
// and, so that what is announced is what is sent, served as a utf8 column of
// its text "HH:MM:SS[.fraction]" (the fraction's digits those of the unit:
// 3 ms, 6 us, 9 ns; the same text `quiver cat` prints). Top-level columns
// only: a time inside a list or struct is sent as Arrow time (the client
// decodes nested values from Arrow itself).

bool IsTime(const DataType& type) { return type.id == TypeId::kTime32 || type.id == TypeId::kTime64; }

Result<ArrayDataPtr> TimeAsText(const ArrayData& a, MemoryPool* pool) {
  std::string text;
  std::vector<int32_t> offsets(static_cast<size_t>(a.length) + 1, 0);
  for (int64_t i = 0; i < a.length; ++i) {
    if (a.IsValid(i)) FormatValue(a, i, ValueFormat::kText, &text);
    if (text.size() > static_cast<size_t>(INT32_MAX)) return Status::Invalid("TIME as text: column over 2 GiB");
    offsets[static_cast<size_t>(i) + 1] = static_cast<int32_t>(text.size());
  }
  QUIVER_ASSIGN_OR_RETURN(auto off, Buffer::Allocate(pool, static_cast<int64_t>(offsets.size()) * 4));
  std::memcpy(off->mutable_data(), offsets.data(), offsets.size() * 4);
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, static_cast<int64_t>(text.size())));
  if (!text.empty()) std::memcpy(data->mutable_data(), text.data(), text.size());
  std::shared_ptr<Buffer> validity;
  if (a.null_count > 0) {
    QUIVER_ASSIGN_OR_RETURN(validity, Buffer::Allocate(pool, (a.length + 7) / 8));
    std::memset(validity->mutable_data(), 0, static_cast<size_t>((a.length + 7) / 8));
    for (int64_t i = 0; i < a.length; ++i)
      if (a.IsValid(i)) validity->mutable_data()[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  auto out = std::make_shared<ArrayData>();
  out->type = utf8();
  out->length = a.length;
  out->null_count = a.null_count;
  out->buffers = {validity, off, data};
  return ArrayDataPtr(out);
}

// The statement's stream with its TIME columns as utf8 text (above).
class TimeAsTextStream final : public RecordBatchStream {
 public:
  TimeAsTextStream(std::unique_ptr<RecordBatchStream> in, MemoryPool* pool) : in_(std::move(in)), pool_(pool) {
    auto s = std::make_shared<Schema>(*in_->schema());
    for (auto& f : s->fields) {
      if (IsTime(*f->type)) f = field(f->name, utf8(), f->nullable);
    }
    schema_ = s;
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in_->Next());
    if (!b) return b;
    auto out = std::make_shared<RecordBatch>(*b);
    out->schema = schema_;
    for (size_t i = 0; i < out->columns.size(); ++i) {
      if (IsTime(*out->columns[i]->type)) {
        QUIVER_ASSIGN_OR_RETURN(out->columns[i], TimeAsText(*out->columns[i], pool_));
      }
    }
    return RecordBatchPtr(out);
  }

 private:
  std::unique_ptr<RecordBatchStream> in_;
  MemoryPool* pool_;
  SchemaPtr schema_;
};

std::unique_ptr<RecordBatchStream> WithTimeAsText(std::unique_ptr<RecordBatchStream> in, MemoryPool* pool) {
  bool any = false;
  for (const auto& f : in->schema()->fields) any |= IsTime(*f->type);
  if (!any) return in;
  return std::make_unique<TimeAsTextStream>(std::move(in), pool);
}

t::TTableSchema HiveSchema(const Schema& schema) {
  t::TTableSchema out;
  for (int i = 0; i < schema.num_fields(); ++i) {
    const Field& f = *schema.fields[i];
    t::TPrimitiveTypeEntry prim;
    prim.type = HiveTypeId(*f.type);
    if (f.type->id == TypeId::kDecimal) {
      t::TTypeQualifierValue p, s;
      p.__set_i32Value(f.type->precision);
      s.__set_i32Value(f.type->scale);
      t::TTypeQualifiers q;
      q.qualifiers["precision"] = p;
      q.qualifiers["scale"] = s;
      prim.__set_typeQualifiers(q);
    }
    t::TTypeEntry entry;
    entry.__set_primitiveEntry(prim);
    t::TColumnDesc col;
    col.columnName = f.name;
    col.typeDesc.types.push_back(entry);
    col.position = i + 1;
    out.columns.push_back(std::move(col));
  }
  return out;
}

// The IPC schema message of `schema` (encapsulated, no end-of-stream).
Result<std::string> SchemaMessage(const SchemaPtr& schema, MemoryPool* pool) {
  ipc::BufferOutputStream sink;
  ipc::WriteOptions wo;
  wo.pool = pool;
  QUIVER_ASSIGN_OR_RETURN(auto writer, ipc::RecordBatchWriter::Make(&sink, schema, ipc::IpcFormat::kStream, wo));
  const auto& bytes = sink.bytes();
  return std::string(bytes.begin(), bytes.end());
}

// One reservation on a pool for bytes held elsewhere (Thrift buffers).
class ScopedReservation {
 public:
  ScopedReservation(MemoryPool* pool, int64_t bytes) : pool_(pool) {
    if (pool_->Reserve(bytes).ok()) bytes_ = bytes;
  }
  ~ScopedReservation() {
    if (bytes_ > 0) pool_->Unreserve(bytes_);
  }
  bool ok() const { return bytes_ >= 0; }
  ScopedReservation(const ScopedReservation&) = delete;
  ScopedReservation& operator=(const ScopedReservation&) = delete;

 private:
  MemoryPool* pool_;
  int64_t bytes_ = -1;
};

struct ChunkRef {
  std::string id;
  int64_t start_row_offset = 0;
  int64_t row_count = 0;
  int64_t ipc_bytes = 0;
  int64_t served_bytes = 0;
  int64_t schema_message_bytes = 0;
  bool lz4 = false;
};

// The client of the RPC being dispatched on this thread (Dispatch sets it
// for the handler calls the Thrift processor makes).
thread_local std::string_view tls_client;
// The Thrift sequence id of that RPC's message header (0 when the client
// sends none: C++ and Python Thrift clients always send 0).
thread_local int32_t tls_seqid = 0;

// The sequence id in the header of a Thrift binary-protocol call (strict:
// version|type, name, seqid; old: name, type byte, seqid), 0 when the
// header is cut short. The processor validates the message itself.
int32_t ThriftSeqId(std::span<const uint8_t> m) {
  auto be32 = [&](uint64_t at, int32_t* v) {
    if (at + 4 > m.size()) return false;
    *v = static_cast<int32_t>((uint32_t{m[at]} << 24) | (uint32_t{m[at + 1]} << 16) | (uint32_t{m[at + 2]} << 8) |
                              uint32_t{m[at + 3]});
    return true;
  };
  int32_t first = 0, name_bytes = 0, seqid = 0;
  if (!be32(0, &first)) return 0;
  if (first < 0) {  // strict header
    if (!be32(4, &name_bytes) || name_bytes < 0 || !be32(8 + uint64_t(name_bytes), &seqid)) return 0;
    return seqid;
  }
  return be32(4 + uint64_t(first) + 1, &seqid) ? seqid : 0;
}

struct Session {
  std::string guid;
  std::string secret;
  std::string client;  // who opened it (per-token caps)
  std::atomic<int64_t> last_used_ms{0};
};

struct Operation {
  std::string guid;
  std::string secret;
  std::string session_guid;
  std::string client;  // the session's client (per-token caps)
  t::TOperationType::type type = t::TOperationType::EXECUTE_STATEMENT;
  bool can_download = false;
  bool inline_lz4 = false;
  bool chunk_lz4 = false;
  SchemaPtr schema;
  std::string arrow_schema;
  std::unique_ptr<RecordBatchStream> stream;
  std::atomic<bool> cancel{false};
  std::atomic<bool> timed_out{false};  // cancelled for statement_timeout_ms
  std::atomic<int64_t> last_used_ms{0};
  int64_t started_ms = 0;
  std::thread worker;

  // Shared store: held across building and writing the manifest, so that a
  // heartbeat's "running" manifest can never land after the final one.
  std::mutex manifest_mu;
  bool ended = false;  // Publish has begun (under mu): no more heartbeats

  std::mutex mu;
  std::condition_variable cv;
  std::vector<ChunkRef> chunks;
  bool done = false;
  bool decided = false;
  bool inline_mode = false;
  bool failed = false;
  bool cancelled = false;
  std::string error;
  std::string sql_state;
  int64_t completed_ms = 0;
  int64_t total_ipc_bytes = 0;
  int64_t total_served_bytes = 0;
  size_t cursor = 0;
  // The last page served by FETCH_NEXT / FETCH_FIRST: the request's Thrift
  // seqid (0 = none) and its chunks [last_begin, last_end). The same seqid
  // again is a retry of that request (a balancer re-sending it after the
  // reply was lost) and gets the same page. Shared store: kept in the
  // cursor document.
  int32_t last_seqid = 0;
  size_t last_begin = 0;
  size_t last_end = 0;
  // The seqid of the ExecuteStatement (or metadata RPC) that started the
  // operation: a client that sends the same seqid with every call (some
  // Thrift libraries send a constant) shows it by fetching with that
  // seqid, and is never replayed.
  int32_t exec_seqid = 0;
  // Chunks handed to the client at least once (the cursor's high-water
  // mark); the producer pauses while chunks.size() - handed_out reaches
  // max_unfetched_chunks.
  size_t handed_out = 0;
  bool paused = false;
  // Shared store (stateless servers): the manifest is in the store and this
  // server answers for the operation from there (published: the producer
  // has ended; remote: loaded from another server's manifest).
  bool published = false;
  bool remote = false;
  std::optional<t::TTableSchema> hive_schema;
  std::atomic<bool> close_requested{false};  // a close marker from another server
  int64_t expiry_ms = 0;
  int64_t heartbeat_ms = 0;
};

// Document names in a shared store.
std::string ManifestDoc(const std::string& op_hex) { return "ops/" + op_hex + "/manifest"; }
std::string CursorDoc(const std::string& op_hex) { return "ops/" + op_hex + "/cursor"; }

// The fetch cursor document: "NEXT SEQID BEGIN END" (decimal): the chunk the
// next FETCH_NEXT starts at, then the last page served (Operation::last_*).
// A document of NEXT alone (older servers) reads with no last page.
std::string CursorText(const Operation& op) {
  return std::to_string(op.cursor) + " " + std::to_string(op.last_seqid) + " " + std::to_string(op.last_begin) + " " +
         std::to_string(op.last_end);
}

// Sets op's cursor and last page from a cursor document (mu held), each
// clamped to the chunks that exist.
void ParseCursor(const std::string& text, Operation* op) {
  std::istringstream in(text);
  unsigned long long next = 0, begin = 0, end = 0;
  long long seqid = 0;
  in >> next;
  if (!(in >> seqid >> begin >> end)) seqid = begin = end = 0;
  const size_t n = op->chunks.size();
  op->cursor = std::min<size_t>(next, n);
  op->last_seqid = static_cast<int32_t>(seqid);
  op->last_begin = std::min<size_t>(begin, n);
  op->last_end = std::min<size_t>(std::max(begin, end), n);
}
std::string CancelDoc(const std::string& op_hex) { return "ops/" + op_hex + "/cancel"; }
// A closed session's marker: every server refuses the session's handle
// while it exists (the handle itself validates forever). Its body is the
// epoch ms it expires at; its expiry index entry is ExpiryDoc(ms,
// "session-" + hex).
std::string ClosedSessionDoc(const std::string& session_hex) { return "closed-sessions/" + session_hex; }
constexpr std::string_view kSessionExpiryTag = "session-";
std::string SessionOpDoc(const std::string& session_hex, const std::string& op_hex) {
  return "sessions/" + session_hex + "/" + op_hex;
}
// The expiry index: "expiry/<ms, 15 digits>-<op hex>" (or "-session-<hex>"
// for a closed-session marker), so a listing is in time order.
std::string ExpiryDoc(int64_t expiry_ms, const std::string& id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%015lld", static_cast<long long>(expiry_ms));
  return std::string("expiry/") + buf + "-" + id;
}

// The manifest: one "key value" line each, then one "chunk ..." line per
// chunk. Text so that an operator can read it with any S3 tool.
std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string ManifestText(const Operation& op, const std::string& state) {
  std::ostringstream m;
  m << "quiver-manifest 1\n";
  m << "state " << state << "\n";
  m << "session " << Hex(op.session_guid) << "\n";
  m << "type " << static_cast<int>(op.type) << "\n";
  m << "exec_seqid " << op.exec_seqid << "\n";
  m << "started_ms " << op.started_ms << "\n";
  m << "completed_ms " << op.completed_ms << "\n";
  m << "heartbeat_ms " << NowEpochMs() << "\n";
  m << "expiry_ms " << op.expiry_ms << "\n";
  m << "inline " << (op.inline_mode ? 1 : 0) << "\n";
  m << "inline_lz4 " << (op.inline_lz4 ? 1 : 0) << "\n";
  m << "chunk_lz4 " << (op.chunk_lz4 ? 1 : 0) << "\n";
  m << "total_ipc_bytes " << op.total_ipc_bytes << "\n";
  m << "total_served_bytes " << op.total_served_bytes << "\n";
  m << "sql_state " << (op.sql_state.empty() ? "-" : op.sql_state) << "\n";
  m << "error " << OneLine(op.error) << "\n";
  m << "arrow_schema " << Hex(op.arrow_schema) << "\n";
  if (op.schema) m << "hive_schema " << Hex(ThriftBytes(HiveSchema(*op.schema))) << "\n";
  for (const auto& c : op.chunks) {
    m << "chunk " << c.id << " " << c.start_row_offset << " " << c.row_count << " " << c.ipc_bytes << " "
      << c.served_bytes << " " << c.schema_message_bytes << " " << (c.lz4 ? 1 : 0) << "\n";
  }
  return m.str();
}

// Fills a remote Operation from a manifest; false when malformed.
bool ParseManifest(const std::string& text, Operation* op, std::string* state) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "quiver-manifest 1") return false;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp);
    const std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
    auto num = [&] { return std::strtoll(value.c_str(), nullptr, 10); };
    if (key == "state")
      *state = value;
    else if (key == "session")
      op->session_guid = Unhex(value).value_or("");
    else if (key == "type")
      op->type = static_cast<t::TOperationType::type>(num());
    else if (key == "exec_seqid")
      op->exec_seqid = static_cast<int32_t>(num());
    else if (key == "started_ms")
      op->started_ms = num();
    else if (key == "completed_ms")
      op->completed_ms = num();
    else if (key == "heartbeat_ms")
      op->heartbeat_ms = num();
    else if (key == "expiry_ms")
      op->expiry_ms = num();
    else if (key == "inline")
      op->inline_mode = num() != 0;
    else if (key == "inline_lz4")
      op->inline_lz4 = num() != 0;
    else if (key == "chunk_lz4")
      op->chunk_lz4 = num() != 0;
    else if (key == "total_ipc_bytes")
      op->total_ipc_bytes = num();
    else if (key == "total_served_bytes")
      op->total_served_bytes = num();
    else if (key == "sql_state")
      op->sql_state = value == "-" ? "" : value;
    else if (key == "error")
      op->error = value;
    else if (key == "arrow_schema")
      op->arrow_schema = Unhex(value).value_or("");
    else if (key == "hive_schema") {
      t::TTableSchema schema;
      auto bytes = Unhex(value);
      if (!bytes || !FromThriftBytes(*bytes, &schema)) return false;
      op->hive_schema = std::move(schema);
    } else if (key == "chunk") {
      std::istringstream f(value);
      ChunkRef c;
      int lz4 = 0;
      if (!(f >> c.id >> c.start_row_offset >> c.row_count >> c.ipc_bytes >> c.served_bytes >> c.schema_message_bytes >>
            lz4) ||
          !fetch::IsValidChunkId(c.id)) {
        return false;
      }
      c.lz4 = lz4 != 0;
      op->chunks.push_back(std::move(c));
    }
  }
  return !state->empty();
}

}  // namespace

// ---------------------------------------------------------------------------

class ResultService::Impl : public t::TCLIServiceIf {
 public:
  explicit Impl(ResultServiceOptions o) : o_(o) {
    exec_pool_ = o.pool->MakeChild({.name = "exec"});
    chunk_pool_ = o.pool->MakeChild({.name = "chunks"});
    thrift_pool_ = o.pool->MakeChild({.name = "thrift"});
    shared_ = o.store->shared();
    handle_key_ = o.cluster_secret;
    if (handle_key_.empty()) handle_key_ = RandomHandleBytes(false) + RandomHandleBytes(false);
    config_ = std::make_shared<apache::thrift::TConfiguration>(
        static_cast<int>(std::min<int64_t>(o.max_message_bytes, INT32_MAX)),
        static_cast<int>(std::min<int64_t>(o.max_message_bytes, INT32_MAX)), 64);
  }

  ~Impl() override {
    std::vector<std::shared_ptr<Operation>> ops;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [k, op] : ops_) ops.push_back(op);
      ops_.clear();
      sessions_.clear();
    }
    for (auto& op : ops) Finish(op);
  }

  Result<std::string> Dispatch(std::span<const uint8_t> request, std::string_view client) {
    struct ClientScope {
      ClientScope(std::string_view c, int32_t seqid) {
        tls_client = c;
        tls_seqid = seqid;
      }
      ~ClientScope() {
        tls_client = {};
        tls_seqid = 0;
      }
    } client_scope(client, ThriftSeqId(request));
    ++rpcs_;
    if (static_cast<int64_t>(request.size()) > o_.max_message_bytes) {
      ++rpc_errors_;
      return Status::Invalid("thrift: message of " + std::to_string(request.size()) + " bytes exceeds the limit " +
                             std::to_string(o_.max_message_bytes));
    }
    ScopedReservation in_bytes(thrift_pool_.get(), static_cast<int64_t>(request.size()));
    if (!in_bytes.ok())
      return Status::OutOfMemory("thrift: no memory for a request of " + std::to_string(request.size()) + " bytes");
    try {
      auto in = std::make_shared<TMemoryBuffer>(const_cast<uint8_t*>(request.data()),
                                                static_cast<uint32_t>(request.size()), TMemoryBuffer::OBSERVE, config_);
      auto out = std::make_shared<TMemoryBuffer>();
      const int32_t limit = static_cast<int32_t>(std::min<int64_t>(o_.max_message_bytes, INT32_MAX));
      auto iprot =
          std::make_shared<apache::thrift::protocol::TBinaryProtocolT<TMemoryBuffer>>(in, limit, limit, true, true);
      auto oprot = std::make_shared<apache::thrift::protocol::TBinaryProtocolT<TMemoryBuffer>>(out);
      processor_->process(iprot, oprot, nullptr);
      std::string reply = out->getBufferAsString();
      if (reply.empty()) {
        ++rpc_errors_;
        return Status::Invalid("thrift: the message was not a call (no reply)");
      }
      return reply;
    } catch (const std::exception& e) {
      ++rpc_errors_;
      return Status::Invalid(std::string("thrift: malformed message: ") + e.what());
    }
  }

  void SetProcessor(std::shared_ptr<t::TCLIServiceIf> self) {
    processor_ = std::make_shared<t::TCLIServiceProcessor>(std::move(self));
  }

  // ---- sessions ----
  void OpenSession(t::TOpenSessionResp& r, const t::TOpenSessionReq& req) override {
    r.serverProtocolVersion = t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8;
    if (req.__isset.client_protocol_i64 &&
        req.client_protocol_i64 >= t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V1 &&
        req.client_protocol_i64 < t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8) {
      r.serverProtocolVersion = static_cast<t::TProtocolVersion::type>(req.client_protocol_i64);
    }
    auto s = std::make_shared<Session>();
    s->guid = RandomHandleBytes(true);
    s->secret = HandleSecret("session", s->guid);
    s->last_used_ms = NowEpochMs();
    s->client = std::string(tls_client);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (static_cast<int>(sessions_.size()) >= o_.max_sessions) {
        r.status = ErrorStatus("too many open sessions: the server allows " + std::to_string(o_.max_sessions) +
                               "; close one and retry");
        return;
      }
      int mine = 0;
      for (const auto& [g, other] : sessions_) mine += other->client == s->client;
      if (mine >= o_.max_sessions_per_token) {
        r.status = ErrorStatus("too many open sessions for this token: the server allows " +
                               std::to_string(o_.max_sessions_per_token) + " per token; close one and retry");
        return;
      }
      sessions_[s->guid] = s;
    }
    r.status = OkStatus();
    t::TSessionHandle h;
    h.sessionId.guid = s->guid;
    h.sessionId.secret = s->secret;
    r.__set_sessionHandle(h);
    r.__set_canUseMultipleCatalogs(true);
  }

  void CloseSession(t::TCloseSessionResp& r, const t::TCloseSessionReq& req) override {
    std::vector<std::shared_ptr<Operation>> ops;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sessions_.find(req.sessionHandle.sessionId.guid);
      const bool local =
          it != sessions_.end() && fetch::ConstantTimeEquals(it->second->secret, req.sessionHandle.sessionId.secret);
      if (!local && !(shared_ && ValidHandle("session", req.sessionHandle.sessionId))) {
        r.status =
            ErrorStatus("invalid session handle (unknown, closed or expired)", t::TStatusCode::INVALID_HANDLE_STATUS);
        return;
      }
      if (it != sessions_.end()) sessions_.erase(it);
      ops = TakeSessionOpsLocked(req.sessionHandle.sessionId.guid);
    }
    Status marked;
    if (shared_) {
      // The marker first: from now on no server starts an operation in the
      // session (Start checks it after indexing its operation, so an
      // operation either is refused or is in the listing below).
      const std::string sid = Hex(req.sessionHandle.sessionId.guid);
      const int64_t until = NowEpochMs() + o_.session_idle_timeout_ms;
      marked = o_.store->PutDocument(ClosedSessionDoc(sid), std::to_string(until));
      if (marked.ok()) marked = o_.store->PutDocument(ExpiryDoc(until, std::string(kSessionExpiryTag) + sid), "");
    }
    for (auto& op : ops) Finish(op, /*remove_documents=*/true);
    if (shared_) {
      // The session's operations on every server: their index documents.
      const std::string sid = Hex(req.sessionHandle.sessionId.guid);
      auto names = o_.store->ListDocuments("sessions/" + sid + "/");
      if (names.ok()) {
        for (const auto& name : *names) {
          const std::string op_hex = name.substr(name.rfind('/') + 1);
          (void)CloseShared(op_hex);
          (void)o_.store->RemoveDocument(name);
        }
      }
    }
    r.status = marked.ok()
                   ? OkStatus()
                   : ErrorStatus("CloseSession: the session could not be marked closed for the other servers: " +
                                 marked.ToString());
  }

  void GetInfo(t::TGetInfoResp& r, const t::TGetInfoReq& req) override {
    if (!FindSession(req.sessionHandle)) {
      r.status = ErrorStatus("invalid session handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      r.infoValue.__set_stringValue("");
      return;
    }
    r.status = OkStatus();
    switch (req.infoType) {
      case t::TGetInfoType::CLI_SERVER_NAME: r.infoValue.__set_stringValue("quiver"); break;
      case t::TGetInfoType::CLI_DBMS_NAME: r.infoValue.__set_stringValue("quiver"); break;
      case t::TGetInfoType::CLI_DBMS_VER: r.infoValue.__set_stringValue("0.1.0"); break;
      case t::TGetInfoType::CLI_MAX_CONCURRENT_ACTIVITIES: r.infoValue.__set_integerFlag(o_.max_operations); break;
      case t::TGetInfoType::CLI_DATA_SOURCE_READ_ONLY: r.infoValue.__set_stringValue("Y"); break;
      // What ODBC/JDBC bridges and BI tools ask when they connect.
      case t::TGetInfoType::CLI_DATA_SOURCE_NAME: r.infoValue.__set_stringValue("quiver"); break;
      case t::TGetInfoType::CLI_MAX_DRIVER_CONNECTIONS: r.infoValue.__set_smallIntValue(0); break;  // no limit
      case t::TGetInfoType::CLI_FETCH_DIRECTION: r.infoValue.__set_integerBitmask(1); break;        // next only
      case t::TGetInfoType::CLI_SEARCH_PATTERN_ESCAPE: r.infoValue.__set_stringValue("\\"); break;
      case t::TGetInfoType::CLI_ACCESSIBLE_TABLES: r.infoValue.__set_stringValue("Y"); break;
      case t::TGetInfoType::CLI_ACCESSIBLE_PROCEDURES: r.infoValue.__set_stringValue("N"); break;
      case t::TGetInfoType::CLI_TXN_CAPABLE: r.infoValue.__set_smallIntValue(0); break;  // SQL_TC_NONE
      case t::TGetInfoType::CLI_DEFAULT_TXN_ISOLATION: r.infoValue.__set_integerBitmask(0); break;
      case t::TGetInfoType::CLI_TXN_ISOLATION_OPTION: r.infoValue.__set_integerBitmask(0); break;
      case t::TGetInfoType::CLI_IDENTIFIER_CASE: r.infoValue.__set_smallIntValue(4); break;  // SQL_IC_MIXED
      case t::TGetInfoType::CLI_IDENTIFIER_QUOTE_CHAR: r.infoValue.__set_stringValue("\""); break;
      case t::TGetInfoType::CLI_CATALOG_NAME: r.infoValue.__set_stringValue("N"); break;
      case t::TGetInfoType::CLI_USER_NAME: r.infoValue.__set_stringValue(""); break;
      case t::TGetInfoType::CLI_NULL_COLLATION: r.infoValue.__set_smallIntValue(1); break;  // SQL_NC_LOW
      case t::TGetInfoType::CLI_ORDER_BY_COLUMNS_IN_SELECT: r.infoValue.__set_stringValue("N"); break;
      case t::TGetInfoType::CLI_SPECIAL_CHARACTERS: r.infoValue.__set_stringValue(""); break;
      case t::TGetInfoType::CLI_OJ_CAPABILITIES: r.infoValue.__set_integerBitmask(0x1 | 0x2 | 0x4 | 0x8); break;
      case t::TGetInfoType::CLI_MAX_COLUMN_NAME_LEN:
      case t::TGetInfoType::CLI_MAX_SCHEMA_NAME_LEN:
      case t::TGetInfoType::CLI_MAX_CATALOG_NAME_LEN:
      case t::TGetInfoType::CLI_MAX_TABLE_NAME_LEN:
      case t::TGetInfoType::CLI_MAX_IDENTIFIER_LEN: r.infoValue.__set_smallIntValue(128); break;
      case t::TGetInfoType::CLI_MAX_COLUMNS_IN_SELECT:
      case t::TGetInfoType::CLI_MAX_COLUMNS_IN_TABLE:
      case t::TGetInfoType::CLI_MAX_TABLES_IN_SELECT:
      case t::TGetInfoType::CLI_MAX_ROW_SIZE:
      case t::TGetInfoType::CLI_MAX_STATEMENT_LEN: r.infoValue.__set_integerFlag(0); break;  // no fixed limit
      default:
        r.status =
            ErrorStatus("GetInfo: info type " + std::to_string(static_cast<int>(req.infoType)) + " is not supported");
        r.infoValue.__set_stringValue("");
    }
  }

  // ---- statements and metadata operations ----
  void ExecuteStatement(t::TExecuteStatementResp& r, const t::TExecuteStatementReq& req) override {
    auto session = FindSession(req.sessionHandle);
    if (!session) {
      r.status = ErrorStatus("invalid session handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    ++statements_;
    // The text is checked before anything parses or plans it.
    const std::string& sql = req.statement;
    if (static_cast<int64_t>(sql.size()) > o_.max_statement_bytes) {
      r.status = ErrorStatus("statement text is " + std::to_string(sql.size()) + " bytes; the server accepts at most " +
                                 std::to_string(o_.max_statement_bytes) + " (max_statement_bytes)",
                             t::TStatusCode::ERROR_STATUS, "54000");
      return;
    }
    if (const size_t nul = sql.find('\0'); nul != std::string::npos) {
      r.status = ErrorStatus("statement text has a NUL byte at offset " + std::to_string(nul),
                             t::TStatusCode::ERROR_STATUS, "42601");
      return;
    }
    // Refused at the operation caps before it is planned (Start checks again).
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (static_cast<int>(ops_.size()) >= o_.max_operations) {
        r.status = ErrorStatus("too many open operations: the server allows " + std::to_string(o_.max_operations) +
                               "; close finished operations and retry");
        return;
      }
      if (SessionOpsLocked(session->guid) >= o_.max_operations_per_session) {
        r.status = ErrorStatus("too many open operations in this session: the server allows " +
                               std::to_string(o_.max_operations_per_session) +
                               " per session; close finished operations and retry");
        return;
      }
      if (ClientOpsLocked(session->client) >= o_.max_operations_per_token) {
        r.status = TokenOpsError();
        return;
      }
    }
    auto op = std::make_shared<Operation>();
    auto stream = o_.executor->Execute(req.statement, &op->cancel, exec_pool_.get());
    if (!stream.ok()) {
      r.status = ErrorStatus(stream.status().ToString(), t::TStatusCode::ERROR_STATUS, SqlStateFor(stream.status()));
      return;
    }
    const bool can_download = req.__isset.canDownloadResult && req.canDownloadResult;
    const bool client_lz4 = req.__isset.canDecompressLZ4Result && req.canDecompressLZ4Result;
    Start(r, op, session, t::TOperationType::EXECUTE_STATEMENT,
          WithTimeAsText(std::move(stream).value(), exec_pool_.get()), can_download, client_lz4,
          req.__isset.getDirectResults ? &req.getDirectResults : nullptr);
  }

  template <typename Resp, typename Req>
  void MetadataOp(Resp& r, const Req& req, t::TOperationType::type type,
                  Result<std::unique_ptr<RecordBatchStream>> (*make)(const Req&, const StatementExecutor&,
                                                                     MemoryPool*)) {
    auto session = FindSession(req.sessionHandle);
    if (!session) {
      r.status = ErrorStatus("invalid session handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    auto stream = make(req, *o_.executor, exec_pool_.get());
    if (!stream.ok()) {
      r.status = ErrorStatus(stream.status().ToString(), t::TStatusCode::ERROR_STATUS, SqlStateFor(stream.status()));
      return;
    }
    auto op = std::make_shared<Operation>();
    t::TExecuteStatementResp er;
    Start(er, op, session, type, std::move(stream).value(), false, false,
          req.__isset.getDirectResults ? &req.getDirectResults : nullptr);
    r.status = er.status;
    if (er.__isset.operationHandle) r.__set_operationHandle(er.operationHandle);
    if (er.__isset.directResults) r.__set_directResults(er.directResults);
  }

  static Result<std::unique_ptr<RecordBatchStream>> MakeCatalogs(const t::TGetCatalogsReq&, const StatementExecutor&,
                                                                 MemoryPool* pool) {
    return CatalogsResult(pool);
  }
  static Result<std::unique_ptr<RecordBatchStream>> MakeSchemas(const t::TGetSchemasReq& req, const StatementExecutor&,
                                                                MemoryPool* pool) {
    return SchemasResult(req.__isset.catalogName ? req.catalogName : "", req.__isset.schemaName ? req.schemaName : "",
                         pool);
  }
  static Result<std::unique_ptr<RecordBatchStream>> MakeTables(const t::TGetTablesReq& req, const StatementExecutor& ex,
                                                               MemoryPool* pool) {
    return TablesResult(ex.ListTables(), req.__isset.catalogName ? req.catalogName : "",
                        req.__isset.schemaName ? req.schemaName : "", req.__isset.tableName ? req.tableName : "", pool);
  }
  static Result<std::unique_ptr<RecordBatchStream>> MakeColumns(const t::TGetColumnsReq& req,
                                                                const StatementExecutor& ex, MemoryPool* pool) {
    return ColumnsResult(ex.ListTables(), req.__isset.catalogName ? req.catalogName : "",
                         req.__isset.schemaName ? req.schemaName : "", req.__isset.tableName ? req.tableName : "",
                         req.__isset.columnName ? req.columnName : "", &HiveTypeInfo, pool);
  }
  static Result<std::unique_ptr<RecordBatchStream>> MakeTypeInfo(const t::TGetTypeInfoReq&, const StatementExecutor&,
                                                                 MemoryPool* pool) {
    return TypeInfoResult(pool);
  }

  static ColumnTypeInfo HiveTypeInfo(const DataType& type) {
    ColumnTypeInfo info;
    const auto id = HiveTypeId(type);
    auto it = t::_TTypeId_VALUES_TO_NAMES.find(static_cast<int>(id));
    std::string name = it != t::_TTypeId_VALUES_TO_NAMES.end() ? it->second : "STRING_TYPE";
    if (name.size() > 5 && name.substr(name.size() - 5) == "_TYPE") name.resize(name.size() - 5);
    info.type_name = name;
    if (type.id == TypeId::kDecimal) {
      info.type_name = "DECIMAL(" + std::to_string(type.precision) + "," + std::to_string(type.scale) + ")";
      info.column_size = type.precision;
      info.decimal_digits = type.scale;
    }
    info.jdbc_type = JdbcTypeCode(static_cast<int>(id));
    return info;
  }

  void GetTypeInfo(t::TGetTypeInfoResp& r, const t::TGetTypeInfoReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_TYPE_INFO, &MakeTypeInfo);
  }
  void GetCatalogs(t::TGetCatalogsResp& r, const t::TGetCatalogsReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_CATALOGS, &MakeCatalogs);
  }
  void GetSchemas(t::TGetSchemasResp& r, const t::TGetSchemasReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_SCHEMAS, &MakeSchemas);
  }
  void GetTables(t::TGetTablesResp& r, const t::TGetTablesReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_TABLES, &MakeTables);
  }
  void GetColumns(t::TGetColumnsResp& r, const t::TGetColumnsReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_COLUMNS, &MakeColumns);
  }

  // ---- operation RPCs ----
  void GetOperationStatus(t::TGetOperationStatusResp& r, const t::TGetOperationStatusReq& req) override {
    auto op = FindOperation(req.operationHandle);
    if (!op) {
      r.status =
          ErrorStatus("invalid operation handle (unknown, closed or expired)", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    r.status = OkStatus();
    FillStatus(op.get(), &r);
  }

  void CancelOperation(t::TCancelOperationResp& r, const t::TCancelOperationReq& req) override {
    auto op = FindOperation(req.operationHandle);
    if (!op) {
      r.status = ErrorStatus("invalid operation handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    if (op->remote) {
      // Another server runs it: leave a marker its owner polls.
      {
        std::lock_guard<std::mutex> lock(op->mu);
        if (op->done || op->failed || op->cancelled) {
          r.status = OkStatus();
          return;
        }
      }
      const Status st = o_.store->PutDocument(CancelDoc(Hex(op->guid)), "cancel");
      r.status = st.ok() ? OkStatus() : ErrorStatus("CancelOperation: " + st.ToString());
      return;
    }
    op->cancel = true;
    {
      std::lock_guard<std::mutex> lock(op->mu);
      if (!op->done && !op->failed) op->cancelled = true;
      op->cv.notify_all();
    }
    r.status = OkStatus();
  }

  void CloseOperation(t::TCloseOperationResp& r, const t::TCloseOperationReq& req) override {
    std::shared_ptr<Operation> op;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = ops_.find(req.operationHandle.operationId.guid);
      if (it != ops_.end() && fetch::ConstantTimeEquals(it->second->secret, req.operationHandle.operationId.secret)) {
        op = it->second;
        ops_.erase(it);
      } else if (!shared_ || !ValidHandle("operation", req.operationHandle.operationId)) {
        r.status = ErrorStatus("invalid operation handle", t::TStatusCode::INVALID_HANDLE_STATUS);
        return;
      }
    }
    if (op) {
      Finish(op, /*remove_documents=*/true);
      r.status = OkStatus();
      return;
    }
    // Another server's operation (or one published and reaped here).
    const Status st = CloseShared(Hex(req.operationHandle.operationId.guid));
    r.status = st.ok()           ? OkStatus()
               : st.IsKeyError() ? ErrorStatus("invalid operation handle (unknown, closed or expired)",
                                               t::TStatusCode::INVALID_HANDLE_STATUS)
                                 : ErrorStatus("CloseOperation: " + st.ToString());
  }

  void GetResultSetMetadata(t::TGetResultSetMetadataResp& r, const t::TGetResultSetMetadataReq& req) override {
    auto op = FindOperation(req.operationHandle);
    if (!op) {
      r.status = ErrorStatus("invalid operation handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    FillMetadata(op.get(), &r);
  }

  void FetchResults(t::TFetchResultsResp& r, const t::TFetchResultsReq& req) override {
    auto op = FindOperation(req.operationHandle);
    if (!op) {
      r.status = ErrorStatus("invalid operation handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    if (req.orientation != t::TFetchOrientation::FETCH_NEXT && req.orientation != t::TFetchOrientation::FETCH_FIRST) {
      r.status = ErrorStatus("FetchResults: only FETCH_NEXT and FETCH_FIRST are supported, got orientation " +
                             std::to_string(static_cast<int>(req.orientation)));
      return;
    }
    if (req.__isset.fetchType && req.fetchType != 0) {
      r.status = ErrorStatus("FetchResults: fetchType " + std::to_string(req.fetchType) + " (logs) is not supported");
      return;
    }
    const bool first = req.orientation == t::TFetchOrientation::FETCH_FIRST;
    const int64_t start_row = req.__isset.startRowOffset ? req.startRowOffset : -1;
    const bool shared_cursor = shared_ && op->published;
    if (shared_cursor && !first && start_row < 0) {
      // FETCH_NEXT continues from the cursor the last server saved (and a
      // retry of the request that saved it gets that page again).
      auto cursor = o_.store->GetDocument(CursorDoc(Hex(op->guid)));
      if (!cursor.ok()) {
        r.status = ErrorStatus("FetchResults: reading the fetch cursor: " + cursor.status().ToString());
        return;
      }
      std::lock_guard<std::mutex> lock(op->mu);
      ParseCursor(cursor->value_or("0"), op.get());
    }
    bool replayed = false;
    FillPage(op.get(), first, start_row, req.maxRows, &r, tls_seqid, &replayed);
    if (shared_cursor && !replayed && r.status.statusCode == t::TStatusCode::SUCCESS_STATUS) {
      const Status st = SaveCursor(op.get());
      if (!st.ok()) r.status = ErrorStatus("FetchResults: saving the fetch cursor: " + st.ToString());
    }
    if (req.__isset.includeResultSetMetadata && req.includeResultSetMetadata) {
      t::TGetResultSetMetadataResp m;
      FillMetadata(op.get(), &m);
      r.__set_resultSetMetadata(m);
    }
  }

  // ---- housekeeping ----
  int64_t ExpireIdle(int64_t now_ms) {
    if (shared_) SharedSweep(now_ms);
    std::vector<std::shared_ptr<Operation>> ops;
    int64_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (now_ms - it->second->last_used_ms.load() > o_.session_idle_timeout_ms) {
          auto more = TakeSessionOpsLocked(it->first);
          ops.insert(ops.end(), more.begin(), more.end());
          it = sessions_.erase(it);
          ++n;
          ++expired_sessions_;
        } else {
          ++it;
        }
      }
      for (auto it = ops_.begin(); it != ops_.end();) {
        Operation* op = it->second.get();
        if (o_.statement_timeout_ms > 0 && now_ms - op->started_ms > o_.statement_timeout_ms && !op->cancel) {
          std::lock_guard<std::mutex> l2(op->mu);
          if (!op->done && !op->failed && !op->cancelled) {
            op->timed_out = true;
            op->cancel = true;  // the producer stops at its next poll; Run reports the limit
          }
        }
        if (now_ms - it->second->last_used_ms.load() > o_.operation_idle_timeout_ms) {
          ops.push_back(it->second);
          it = ops_.erase(it);
          ++expired_operations_;
        } else {
          ++it;
        }
      }
    }
    n += static_cast<int64_t>(ops.size());
    for (auto& op : ops) Finish(op);
    return n;
  }

  ResultServiceStats Stats() {
    ResultServiceStats s;
    std::lock_guard<std::mutex> lock(mu_);
    s.open_sessions = static_cast<int64_t>(sessions_.size());
    s.open_operations = static_cast<int64_t>(ops_.size());
    for (auto& [k, op] : ops_) {
      std::lock_guard<std::mutex> l2(op->mu);
      if (!op->done && !op->failed && !op->cancelled) ++s.running_operations;
      if (op->paused) ++s.paused_operations;
    }
    s.rpcs = rpcs_;
    s.rpc_errors = rpc_errors_;
    s.statements = statements_;
    s.finished_operations = finished_operations_;
    s.producer_pauses = producer_pauses_;
    s.chunks_written = chunks_written_;
    s.chunk_ipc_bytes = chunk_ipc_bytes_;
    s.chunk_served_bytes = chunk_served_bytes_;
    s.expired_sessions = expired_sessions_;
    s.expired_operations = expired_operations_;
    return s;
  }

  ResultServiceOptions o_;
  std::shared_ptr<MemoryPool> exec_pool_, chunk_pool_, thrift_pool_;

 private:
  // The handle secret of a guid: HMAC-SHA256(key, kind || guid), 16 bytes.
  std::string HandleSecret(std::string_view kind, const std::string& guid) const {
    std::string message(kind);
    message += '\0';
    message += guid;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    HMAC(EVP_sha256(), handle_key_.data(), static_cast<int>(handle_key_.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
    return std::string(reinterpret_cast<const char*>(mac), kHandleBytes);
  }

  bool ValidHandle(std::string_view kind, const t::THandleIdentifier& id) const {
    return id.guid.size() == kHandleBytes && fetch::ConstantTimeEquals(HandleSecret(kind, id.guid), id.secret);
  }

  // Shared store: whether the session was closed (on any server). A store
  // that cannot be read says no: the RPC then meets the store's error
  // itself (a statement cannot start without writing to it).
  bool SessionClosedInStore(const std::string& guid) {
    auto doc = o_.store->GetDocument(ClosedSessionDoc(Hex(guid)));
    return doc.ok() && doc->has_value();
  }

  template <typename Handle>
  std::shared_ptr<Session> FindSession(const Handle& h) {
    if (shared_ && ValidHandle("session", h.sessionId) && SessionClosedInStore(h.sessionId.guid)) {
      // Closed on another server: forget it here too.
      std::lock_guard<std::mutex> lock(mu_);
      sessions_.erase(h.sessionId.guid);
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(h.sessionId.guid);
    if (it == sessions_.end() && shared_ && ValidHandle("session", h.sessionId) &&
        static_cast<int>(sessions_.size()) < o_.max_sessions) {
      // A session another server of the deployment opened.
      auto s = std::make_shared<Session>();
      s->guid = h.sessionId.guid;
      s->secret = h.sessionId.secret;
      it = sessions_.emplace(s->guid, s).first;
    }
    if (it == sessions_.end() || !fetch::ConstantTimeEquals(it->second->secret, h.sessionId.secret)) return nullptr;
    it->second->last_used_ms = NowEpochMs();
    return it->second;
  }

  std::shared_ptr<Operation> FindOperation(const t::TOperationHandle& h) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = ops_.find(h.operationId.guid);
      if (it != ops_.end() && fetch::ConstantTimeEquals(it->second->secret, h.operationId.secret)) {
        const int64_t now = NowEpochMs();
        it->second->last_used_ms = now;
        if (auto s = sessions_.find(it->second->session_guid); s != sessions_.end()) s->second->last_used_ms = now;
        if (it->second->close_requested) return nullptr;  // closed on another server (marker seen)
        std::lock_guard<std::mutex> l2(it->second->mu);
        if (!it->second->published) return it->second;
      }
    }
    if (!shared_ || !ValidHandle("operation", h.operationId)) return nullptr;
    return LoadShared(h.operationId.guid);
  }

  // An operation as its manifest in the store says (nullptr when there is
  // none: closed, expired or never started).
  std::shared_ptr<Operation> LoadShared(const std::string& guid) {
    auto text = o_.store->GetDocument(ManifestDoc(Hex(guid)));
    auto op = std::make_shared<Operation>();
    op->guid = guid;
    op->secret = HandleSecret("operation", guid);
    op->remote = true;
    if (!text.ok()) {
      // The store failed: an operation in ERROR naming it, not a bad handle.
      op->failed = true;
      op->error = "the result store could not be read: " + text.status().ToString();
      op->sql_state = "HY000";
      return op;
    }
    if (!text->has_value()) return nullptr;
    std::string state;
    if (!ParseManifest(**text, op.get(), &state)) {
      op->failed = true;
      op->error = "the operation's manifest in the result store is malformed";
      return op;
    }
    if (state == "finished") {
      op->published = true;
      op->done = true;
      op->decided = true;
    } else if (state == "failed") {
      op->failed = true;
    } else if (state == "cancelled") {
      op->cancelled = true;
    } else if (auto marker = o_.store->GetDocument(CancelDoc(Hex(guid)));
               marker.ok() && marker->has_value() && **marker == "close") {
      return nullptr;  // closed (its session or itself) on another server; the owner is removing it
    } else if (NowEpochMs() - op->heartbeat_ms > o_.owner_stale_ms) {
      op->failed = true;
      op->error = "the server running this statement stopped (no status update for " +
                  std::to_string((NowEpochMs() - op->heartbeat_ms) / 1000) + " s); run it again";
      op->sql_state = "HY000";
    }
    return op;
  }

  // Removes a shared operation's documents and chunks (CloseOperation on a
  // server that does not run it). A running operation gets a close marker
  // instead: its owner stops it and removes everything. KeyError when no
  // manifest exists.
  Status CloseShared(const std::string& op_hex) {
    auto guid = Unhex(op_hex);
    if (!guid || guid->size() != kHandleBytes) return Status::KeyError("malformed operation id");
    QUIVER_ASSIGN_OR_RETURN(auto text, o_.store->GetDocument(ManifestDoc(op_hex)));
    if (!text) return Status::KeyError("no such operation");
    Operation op;
    std::string state;
    if (ParseManifest(*text, &op, &state) && state == "running" &&
        NowEpochMs() - op.heartbeat_ms <= o_.owner_stale_ms) {
      return o_.store->PutDocument(CancelDoc(op_hex), "close");
    }
    QUIVER_RETURN_NOT_OK(o_.store->RemoveDocument(ManifestDoc(op_hex)));
    for (const auto& c : op.chunks) o_.store->Remove(c.id);
    RemoveSideDocuments(op_hex, op.session_guid, op.expiry_ms);
    return Status::OK();
  }

  void RemoveSideDocuments(const std::string& op_hex, const std::string& session_guid, int64_t expiry_ms) {
    (void)o_.store->RemoveDocument(CursorDoc(op_hex));
    (void)o_.store->RemoveDocument(CancelDoc(op_hex));
    if (!session_guid.empty()) (void)o_.store->RemoveDocument(SessionOpDoc(Hex(session_guid), op_hex));
    if (expiry_ms > 0) (void)o_.store->RemoveDocument(ExpiryDoc(expiry_ms, op_hex));
  }

  std::vector<std::shared_ptr<Operation>> TakeSessionOpsLocked(const std::string& session_guid) {
    std::vector<std::shared_ptr<Operation>> out;
    for (auto it = ops_.begin(); it != ops_.end();) {
      if (it->second->session_guid == session_guid) {
        out.push_back(it->second);
        it = ops_.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }

  // Open operations of one client's sessions (mu_ held).
  int ClientOpsLocked(const std::string& client) const {
    int n = 0;
    for (const auto& [k, op] : ops_) n += op->client == client;
    return n;
  }
  t::TStatus TokenOpsError() const {
    return ErrorStatus("too many open operations for this token: the server allows " +
                       std::to_string(o_.max_operations_per_token) + " per token; close finished operations and retry");
  }

  // Open operations of one session (mu_ held).
  int SessionOpsLocked(const std::string& session_guid) const {
    int n = 0;
    for (const auto& [k, op] : ops_) n += op->session_guid == session_guid;
    return n;
  }

  // Cancels, joins and removes the chunks of an operation already taken out
  // of ops_. A published operation (shared store) belongs to the store: its
  // chunks and documents are removed only when `remove_documents` (the
  // client closed it), otherwise the expiry sweep of any server does it.
  void Finish(const std::shared_ptr<Operation>& op, bool remove_documents = false) {
    op->cancel = true;
    {
      std::lock_guard<std::mutex> lock(op->mu);
      op->cv.notify_all();
    }
    if (op->worker.joinable()) op->worker.join();
    std::lock_guard<std::mutex> lock(op->mu);
    if (shared_ && op->published) {
      if (remove_documents) {
        (void)o_.store->RemoveDocument(ManifestDoc(Hex(op->guid)));
        for (const auto& c : op->chunks) o_.store->Remove(c.id);
        RemoveSideDocuments(Hex(op->guid), op->session_guid, op->expiry_ms);
      }
    } else {
      for (const auto& c : op->chunks) o_.store->Remove(c.id);
      if (shared_) {
        (void)o_.store->RemoveDocument(ManifestDoc(Hex(op->guid)));
        RemoveSideDocuments(Hex(op->guid), op->session_guid, op->expiry_ms);
      }
    }
    op->chunks.clear();
    op->stream.reset();
  }

  void Start(t::TExecuteStatementResp& r, const std::shared_ptr<Operation>& op, const std::shared_ptr<Session>& session,
             t::TOperationType::type type, std::unique_ptr<RecordBatchStream> stream, bool can_download,
             bool client_lz4, const t::TSparkGetDirectResults* direct) {
    op->guid = RandomHandleBytes(true);
    op->secret = HandleSecret("operation", op->guid);
    op->session_guid = session->guid;
    op->client = session->client;
    op->type = type;
    op->exec_seqid = tls_seqid;
    op->can_download = can_download;
    op->chunk_lz4 = can_download && o_.lz4;
    op->inline_lz4 = client_lz4 && o_.lz4;
    op->schema = stream->schema();
    op->stream = std::move(stream);
    op->started_ms = NowEpochMs();
    op->last_used_ms = op->started_ms;
    auto schema_message = SchemaMessage(op->schema, exec_pool_.get());
    if (!schema_message.ok()) {
      r.status = ErrorStatus("result schema: " + schema_message.status().ToString());
      return;
    }
    op->arrow_schema = std::move(schema_message).value();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (static_cast<int>(ops_.size()) >= o_.max_operations) {
        r.status = ErrorStatus("too many open operations: the server allows " + std::to_string(o_.max_operations) +
                               "; close finished operations and retry");
        return;
      }
      if (ClientOpsLocked(op->client) >= o_.max_operations_per_token) {
        r.status = TokenOpsError();
        return;
      }
      if (sessions_.find(session->guid) == sessions_.end()) {
        r.status = ErrorStatus("session closed while the statement started", t::TStatusCode::INVALID_HANDLE_STATUS);
        return;
      }
      if (SessionOpsLocked(session->guid) >= o_.max_operations_per_session) {
        r.status = ErrorStatus("too many open operations in this session: the server allows " +
                               std::to_string(o_.max_operations_per_session) +
                               " per session; close finished operations and retry");
        return;
      }
      ops_[op->guid] = op;
    }
    if (shared_) {
      // Visible to the other servers before the handle is handed out.
      op->heartbeat_ms = op->started_ms;
      Status st = o_.store->PutDocument(SessionOpDoc(Hex(session->guid), Hex(op->guid)), "");
      // A CloseSession on another server writes its marker before it lists
      // the session's operations: either it lists this one or this sees it.
      const bool closed = st.ok() && SessionClosedInStore(session->guid);
      if (st.ok() && !closed) st = o_.store->PutDocument(ManifestDoc(Hex(op->guid)), ManifestText(*op, "running"));
      if (!st.ok() || closed) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          ops_.erase(op->guid);
          if (closed) sessions_.erase(session->guid);
        }
        (void)o_.store->RemoveDocument(SessionOpDoc(Hex(session->guid), Hex(op->guid)));
        r.status = closed ? ErrorStatus("invalid session handle (closed)", t::TStatusCode::INVALID_HANDLE_STATUS)
                          : ErrorStatus("the statement cannot start: " + st.ToString());
        return;
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      op->worker = std::thread([this, op] { Run(op.get()); });
    }
    r.status = OkStatus();
    t::TOperationHandle h;
    h.operationId.guid = op->guid;
    h.operationId.secret = op->secret;
    h.operationType = type;
    h.hasResultSet = true;
    r.__set_operationHandle(h);
    if (direct) FillDirect(op, *direct, &r);
  }

  void DecideLocked(Operation* op) {
    if (op->decided) return;
    if (shared_ && !op->done) return;  // FINISHED = the whole result is in the store
    if (!op->can_download) {
      op->decided = true;
      op->inline_mode = true;
    } else if (op->done) {
      op->decided = true;
      op->inline_mode = op->total_ipc_bytes <= o_.inline_threshold_bytes;
    } else if (op->total_ipc_bytes > o_.inline_threshold_bytes || op->chunks.size() >= 2) {
      op->decided = true;
      op->inline_mode = false;
    }
  }

  // Registers a stored chunk with its operation (the client may fetch it).
  void AddChunk(Operation* op, const fetch::Chunk& chunk, const std::string& id) {
    const int64_t served_bytes = chunk.bytes->size();
    ++chunks_written_;
    chunk_ipc_bytes_ += chunk.ipc_bytes;
    chunk_served_bytes_ += served_bytes;
    ChunkRef ref{id,           chunk.start_row_offset,     chunk.row_count, chunk.ipc_bytes,
                 served_bytes, chunk.schema_message_bytes, chunk.lz4};
    std::lock_guard<std::mutex> lock(op->mu);
    op->total_ipc_bytes += chunk.ipc_bytes;
    op->total_served_bytes += served_bytes;
    op->chunks.push_back(std::move(ref));
    DecideLocked(op);
    op->cv.notify_all();
  }

  // One chunk upload in flight beside the producer (shared store: a PUT
  // takes as long as encoding the next chunk). The chunk's bytes stay
  // charged to the chunks pool until its upload ends.
  class UploadPipeline {
   public:
    UploadPipeline(Impl* impl, Operation* op) : impl_(impl), op_(op) {}
    ~UploadPipeline() { (void)Finish(); }
    void Start(fetch::Chunk chunk) {
      chunk_ = std::move(chunk);
      id_ = std::async(std::launch::async,
                       [store = impl_->o_.store, bytes = chunk_->bytes] { return store->Put(bytes, 0); });
    }
    // Waits for the upload in flight and registers its chunk.
    Status Finish() {
      if (!chunk_) return Status::OK();
      auto id = id_.get();
      fetch::Chunk chunk = std::move(*chunk_);
      chunk_.reset();
      if (!id.ok()) return id.status();
      impl_->AddChunk(op_, chunk, *id);
      return Status::OK();
    }

   private:
    Impl* impl_;
    Operation* op_;
    std::optional<fetch::Chunk> chunk_;
    std::future<Result<std::string>> id_;
  };

  void Run(Operation* op) {
    UploadPipeline uploads(this, op);
    fetch::ChunkWriterOptions wo;
    wo.pool = chunk_pool_.get();
    wo.target_chunk_bytes = o_.chunk_bytes;
    wo.lz4 = op->chunk_lz4;
    Status error;
    {
      auto writer = fetch::ChunkWriter::Make(op->stream.get(), wo);
      if (!writer.ok()) error = writer.status();
      while (error.ok()) {
        if (op->cancel) break;
        if (o_.max_unfetched_chunks > 0 && !shared_) {
          // Backpressure: wait until the client has taken enough chunks.
          std::unique_lock<std::mutex> lock(op->mu);
          while (!op->cancel && op->chunks.size() - op->handed_out >= static_cast<size_t>(o_.max_unfetched_chunks)) {
            if (!op->paused) ++producer_pauses_;
            op->paused = true;
            op->cv.wait_for(lock, std::chrono::milliseconds(100));
          }
          op->paused = false;
          if (op->cancel) break;
        }
        auto next = (*writer)->Next();  // with a shared store: encodes chunk k+1 while chunk k uploads
        if (!next.ok()) {
          error = next.status();
          break;
        }
        if (const Status st = uploads.Finish(); !st.ok()) {
          error = st;
          break;
        }
        if (!next->has_value()) break;
        fetch::Chunk chunk = std::move(**next);
        if (o_.max_result_bytes > 0) {
          // Every earlier chunk is registered here (the upload in flight
          // was finished above), so the total is what the store holds.
          int64_t stored = 0;
          size_t count = 0;
          {
            std::lock_guard<std::mutex> lock(op->mu);
            stored = op->total_served_bytes;
            count = op->chunks.size();
          }
          if (stored + chunk.bytes->size() > o_.max_result_bytes) {
            error =
                Status::Invalid("result too large: chunk " + std::to_string(count) + " would bring it to " +
                                std::to_string(stored + chunk.bytes->size()) + " bytes in the " + o_.store->Describe() +
                                ", past the server's limit of " + std::to_string(o_.max_result_bytes) +
                                " bytes per result (max_result_bytes); add a LIMIT or select fewer columns")
                    .WithSqlState("54000");
            break;
          }
        }
        if (shared_) {
          uploads.Start(std::move(chunk));
          continue;
        }
        auto id = o_.store->Put(chunk.bytes, 0);
        if (!id.ok()) {
          error = id.status();
          break;
        }
        AddChunk(op, chunk, *id);
      }
      // The upload in flight (also after an error or a cancel: its chunk is
      // then registered, so it is removed with the others).
      if (const Status st = uploads.Finish(); !st.ok() && error.ok()) error = st;
    }
    op->stream.reset();  // releases the statement's memory (exec pool) now
    ++finished_operations_;
    if (shared_) {
      Publish(op, error);
      return;
    }
    std::lock_guard<std::mutex> lock(op->mu);
    op->completed_ms = NowEpochMs();
    if (op->timed_out) {
      op->failed = true;
      op->error = "statement cancelled: it ran past the server's statement time limit of " +
                  std::to_string(o_.statement_timeout_ms) + " ms";
      op->sql_state = "57014";
    } else if (op->cancel) {
      op->cancelled = true;  // also when the producer stopped with Cancelled
    } else if (!error.ok()) {
      op->failed = true;
      op->error = error.ToString();
      op->sql_state = SqlStateFor(error);
    } else {
      op->done = true;
      DecideLocked(op);
    }
    op->cv.notify_all();
  }

  // Shared store: the producer has ended; its outcome goes to the store as
  // the manifest before any RPC can see FINISHED, so every server answers
  // the same. A failed or cancelled statement's chunks are removed at once;
  // one closed from another server (close marker) leaves nothing behind.
  void Publish(Operation* op, const Status& error) {
    const std::string op_hex = Hex(op->guid);
    std::string state, text;
    std::vector<std::string> drop;
    // A heartbeat writing "running" finishes before this manifest is built;
    // none starts after (ended).
    std::unique_lock<std::mutex> manifest_lock(op->manifest_mu);
    {
      std::lock_guard<std::mutex> lock(op->mu);
      op->ended = true;
      op->completed_ms = NowEpochMs();
      op->expiry_ms = op->completed_ms + o_.operation_idle_timeout_ms;
      if (op->timed_out) {
        op->error = "statement cancelled: it ran past the server's statement time limit of " +
                    std::to_string(o_.statement_timeout_ms) + " ms";
        op->sql_state = "57014";
        state = "failed";
      } else if (op->cancel) {
        state = "cancelled";
      } else if (!error.ok()) {
        op->error = error.ToString();
        op->sql_state = SqlStateFor(error);
        state = "failed";
      } else {
        state = "finished";
        op->inline_mode = !op->can_download || op->total_ipc_bytes <= o_.inline_threshold_bytes;
      }
      if (state != "finished") {
        for (const auto& c : op->chunks) drop.push_back(c.id);
        op->chunks.clear();
      }
      text = ManifestText(*op, state);
    }
    for (const auto& id : drop) o_.store->Remove(id);
    Status st;
    if (op->close_requested) {
      st = o_.store->RemoveDocument(ManifestDoc(op_hex));
      RemoveSideDocuments(op_hex, op->session_guid, 0);
    } else {
      st = o_.store->PutDocument(ManifestDoc(op_hex), text);
      if (st.ok()) st = o_.store->PutDocument(ExpiryDoc(op->expiry_ms, op_hex), "");
    }
    std::lock_guard<std::mutex> lock(op->mu);
    if (!st.ok() && state == "finished") {
      // Without a manifest no server can answer for the result: fail it.
      for (const auto& c : op->chunks) o_.store->Remove(c.id);
      op->chunks.clear();
      state = "failed";
      op->error = "the result could not be recorded in the store: " + st.ToString();
      op->sql_state = "HY000";
    }
    // Published: the store answers for it from now on (a failed or
    // cancelled one too, until it expires or is closed).
    op->published = st.ok() && !op->close_requested;
    if (state == "finished") {
      op->done = true;
      op->decided = true;
    } else if (state == "failed") {
      op->failed = true;
    } else {
      op->cancelled = true;
    }
    op->cv.notify_all();
  }

  // Shared store, every sweep: refreshes the status documents of the
  // statements running here, polls their cancel markers, and hands the
  // published ones over to the store (joins their finished threads).
  void SharedSweep(int64_t now_ms) {
    std::vector<std::shared_ptr<Operation>> running, reap;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = ops_.begin(); it != ops_.end();) {
        std::lock_guard<std::mutex> l2(it->second->mu);
        if (it->second->published || it->second->failed || it->second->cancelled) {
          // Ended: answered from the store from now on.
          if (it->second->published || now_ms - it->second->completed_ms > o_.owner_stale_ms) {
            reap.push_back(it->second);
            it = ops_.erase(it);
            continue;
          }
        } else if (!it->second->done) {
          running.push_back(it->second);
        }
        ++it;
      }
    }
    for (auto& op : reap) Finish(op);
    for (auto& op : running) {
      const std::string op_hex = Hex(op->guid);
      auto marker = o_.store->GetDocument(CancelDoc(op_hex));
      if (marker.ok() && marker->has_value()) {
        if (**marker == "close") op->close_requested = true;
        op->cancel = true;
        std::lock_guard<std::mutex> lock(op->mu);
        op->cv.notify_all();
        continue;
      }
      std::lock_guard<std::mutex> manifest_lock(op->manifest_mu);
      std::string text;
      {
        std::lock_guard<std::mutex> lock(op->mu);
        if (op->ended || op->done || op->failed || op->cancelled) continue;
        text = ManifestText(*op, "running");
      }
      (void)o_.store->PutDocument(ManifestDoc(op_hex), text);
    }
    if (now_ms - last_expiry_sweep_ms_ >= 5000) {
      last_expiry_sweep_ms_ = now_ms;
      ExpireShared(now_ms);
    }
  }

  // Removes the results whose expiry has passed, whichever server made
  // them (the expiry index is sorted by time).
  void ExpireShared(int64_t now_ms) {
    auto names = o_.store->ListDocuments("expiry/");
    if (!names.ok()) return;
    for (const auto& name : *names) {
      const std::string tail = name.substr(7);
      const size_t dash = tail.find('-');
      if (dash == std::string::npos) continue;
      const int64_t expiry = std::strtoll(tail.substr(0, dash).c_str(), nullptr, 10);
      if (expiry > now_ms) break;
      const std::string op_hex = tail.substr(dash + 1);
      if (op_hex.rfind(kSessionExpiryTag, 0) == 0) {
        // A closed session's marker has served its time.
        if (o_.store->RemoveDocument(ClosedSessionDoc(op_hex.substr(kSessionExpiryTag.size()))).ok()) {
          (void)o_.store->RemoveDocument(name);
        }
        continue;
      }
      const Status st = CloseShared(op_hex);
      if (st.ok() || st.IsKeyError()) {
        (void)o_.store->RemoveDocument(name);
        ++expired_operations_;
      }
    }
  }

  // Waits (bounded) until pred() under op->mu; returns pred().
  template <typename Pred>
  bool WaitFor(Operation* op, std::unique_lock<std::mutex>& lock, Pred pred) {
    return op->cv.wait_for(lock, std::chrono::milliseconds(o_.fetch_wait_ms), [&] {
      return pred() || op->failed || op->cancelled || op->cancel.load();
    }) && pred();
  }

  void FillStatus(Operation* op, t::TGetOperationStatusResp* r) {
    std::unique_lock<std::mutex> lock(op->mu);
    r->__set_operationStarted(op->started_ms);
    r->__set_hasResultSet(true);
    if (op->failed) {
      r->__set_operationState(t::TOperationState::ERROR_STATE);
      r->__set_errorMessage(op->error);
      r->__set_displayMessage(op->error);
      r->__set_sqlState(op->sql_state);
      r->__set_errorCode(3);
      r->__set_operationCompleted(op->completed_ms);
    } else if (op->cancelled) {
      r->__set_operationState(t::TOperationState::CANCELED_STATE);
    } else if (op->decided) {
      r->__set_operationState(t::TOperationState::FINISHED_STATE);
      if (op->completed_ms) r->__set_operationCompleted(op->completed_ms);
    } else {
      r->__set_operationState(t::TOperationState::RUNNING_STATE);
    }
  }

  void FillMetadata(Operation* op, t::TGetResultSetMetadataResp* r) {
    std::unique_lock<std::mutex> lock(op->mu);
    WaitFor(op, lock, [&] { return op->decided; });
    if (op->failed) {
      r->status = ErrorStatus(op->error, t::TStatusCode::ERROR_STATUS, op->sql_state);
      return;
    }
    if (!op->decided) {
      r->status = ErrorStatus("the operation is still running: poll GetOperationStatus until FINISHED",
                              t::TStatusCode::STILL_EXECUTING_STATUS);
      return;
    }
    r->status = OkStatus();
    r->__set_schema(op->hive_schema ? *op->hive_schema : HiveSchema(*op->schema));
    r->__set_resultFormat(op->inline_mode ? t::TSparkRowSetType::ARROW_BASED_SET : t::TSparkRowSetType::URL_BASED_SET);
    r->__set_lz4Compressed(op->inline_mode ? op->inline_lz4 : op->chunk_lz4);
    r->__set_arrowSchema(op->arrow_schema);
    if (op->done) {
      // Whole-result sizes, known once the statement has finished: the IPC
      // bytes, and the bytes the chunk files hold (LZ4 frames or raw IPC).
      r->__set_uncompressedBytes(op->total_ipc_bytes);
      r->__set_compressedBytes(op->total_served_bytes);
    }
    r->__set_isStagingOperation(false);
  }

  // Shared store: writes op's cursor and last page as its cursor document.
  Status SaveCursor(Operation* op) {
    std::string text;
    {
      std::lock_guard<std::mutex> lock(op->mu);
      text = CursorText(*op);
    }
    return o_.store->PutDocument(CursorDoc(Hex(op->guid)), text);
  }

  // One page of results from the cursor. `seqid` is the request's Thrift
  // sequence id (0 = none): a FETCH_NEXT without startRowOffset whose
  // seqid is that of the last page served is a retry of that request (the
  // reply was lost, or a balancer re-sent it to another server) and gets
  // the same chunks again, unless the client sent that seqid with its
  // ExecuteStatement too (a constant seqid says nothing); *replayed (when
  // given) says so. Any other page becomes the last page.
  void FillPage(Operation* op, bool first, int64_t start_row_offset, int64_t max_rows, t::TFetchResultsResp* r,
                int32_t seqid, bool* replayed) {
    std::vector<ChunkRef> refs;
    bool inline_mode = false;
    bool inline_lz4 = false;
    int64_t page_start = 0;
    {
      std::unique_lock<std::mutex> lock(op->mu);
      size_t end = SIZE_MAX;
      const bool replay = !first && start_row_offset < 0 && seqid != 0 && seqid != op->exec_seqid &&
                          op->last_seqid == seqid && op->last_end > op->last_begin && op->last_end <= op->chunks.size();
      if (replay) {
        op->cursor = op->last_begin;
        end = op->last_end;
      }
      if (replayed) *replayed = replay;
      if (first) op->cursor = 0;
      if (start_row_offset >= 0) {
        // Wait until the chunk holding that row exists (or the result ended).
        WaitFor(op, lock, [&] {
          return op->done || (!op->chunks.empty() &&
                              op->chunks.back().start_row_offset + op->chunks.back().row_count > start_row_offset);
        });
        size_t k = 0;
        while (k < op->chunks.size() && op->chunks[k].start_row_offset + op->chunks[k].row_count <= start_row_offset)
          ++k;
        op->cursor = k;
      }
      WaitFor(op, lock, [&] { return op->decided && (op->cursor < op->chunks.size() || op->done); });
      if (op->failed) {
        r->status = ErrorStatus(op->error, t::TStatusCode::ERROR_STATUS, op->sql_state);
        return;
      }
      if (op->cancelled || op->cancel) {
        r->status = ErrorStatus("the operation was cancelled", t::TStatusCode::ERROR_STATUS, "HY008");
        return;
      }
      if (!op->decided) {
        r->status = OkStatus();
        r->__set_hasMoreRows(true);
        r->results.startRowOffset = 0;
        r->__isset.results = true;
        return;
      }
      inline_mode = op->inline_mode;
      inline_lz4 = op->inline_lz4;
      page_start = op->cursor < op->chunks.size() ? op->chunks[op->cursor].start_row_offset
                   : op->chunks.empty()           ? 0
                                                  : op->chunks.back().start_row_offset + op->chunks.back().row_count;
      const size_t page_begin = op->cursor;
      int64_t rows = 0;
      int64_t page_ipc_bytes = 0;
      while (op->cursor < op->chunks.size() && op->cursor < end) {
        const ChunkRef& c = op->chunks[op->cursor];
        if (inline_mode) {
          // A page holds at least one chunk, then stops at maxRows rows or
          // kMaxInlinePageBytes IPC bytes (one reply stays bounded).
          if (!refs.empty() &&
              ((max_rows > 0 && rows + c.row_count > max_rows) || page_ipc_bytes + c.ipc_bytes > kMaxInlinePageBytes)) {
            break;
          }
          page_ipc_bytes += c.ipc_bytes;
        } else if (static_cast<int>(refs.size()) >= o_.max_links_per_fetch) {
          break;
        }
        rows += c.row_count;
        if (c.row_count > 0) refs.push_back(c);
        ++op->cursor;
      }
      r->__set_hasMoreRows(!(op->done && op->cursor >= op->chunks.size()));
      if (!replay) {
        op->last_seqid = seqid;
        op->last_begin = page_begin;
        op->last_end = op->cursor;
      }
      if (op->cursor > op->handed_out) {
        op->handed_out = op->cursor;
        op->cv.notify_all();  // a paused producer may go on
      }
    }
    r->status = OkStatus();
    r->results.startRowOffset = page_start;
    r->__isset.results = true;
    if (inline_mode) {
      std::vector<t::TSparkArrowBatch> batches;
      for (const auto& c : refs) {
        auto payload = InlinePayload(c, inline_lz4);
        if (!payload.ok()) {
          r->status = ErrorStatus("inline result chunk at row " + std::to_string(c.start_row_offset) + ": " +
                                  payload.status().ToString());
          return;
        }
        t::TSparkArrowBatch b;
        b.batch = std::move(payload).value();
        b.rowCount = c.row_count;
        batches.push_back(std::move(b));
      }
      r->results.__set_arrowBatches(std::move(batches));
    } else {
      std::vector<t::TSparkArrowResultLink> links;
      const int64_t expiry = NowEpochMs() + o_.link_expiry_ms;
      for (const auto& c : refs) {
        auto link = o_.store->Link(c.id, expiry);
        if (!link.ok()) {
          r->status = ErrorStatus("result chunk at row " + std::to_string(c.start_row_offset) + ": " +
                                  link.status().ToString());
          return;
        }
        t::TSparkArrowResultLink l;
        l.fileLink = link->url;
        l.expiryTime = link->expiry_ms;
        l.startRowOffset = c.start_row_offset;
        l.rowCount = c.row_count;
        l.bytesNum = c.ipc_bytes;
        l.__set_httpHeaders({});
        links.push_back(std::move(l));
      }
      r->results.__set_resultLinks(std::move(links));
    }
  }

  // A chunk as one inline TSparkArrowBatch: its record batch messages
  // (schema and end-of-stream cut off), LZ4-framed when asked.
  Result<std::string> InlinePayload(const ChunkRef& c, bool lz4) {
    QUIVER_ASSIGN_OR_RETURN(auto bytes, o_.store->Get(c.id));
    if (c.lz4) {
      QUIVER_ASSIGN_OR_RETURN(bytes, fetch::Lz4FrameDecompress(bytes->span(), exec_pool_.get(), c.ipc_bytes));
    }
    if (bytes->size() != c.ipc_bytes || c.ipc_bytes < c.schema_message_bytes + kEosBytes) {
      return Status::Invalid("chunk holds " + std::to_string(bytes->size()) + " IPC bytes, expected " +
                             std::to_string(c.ipc_bytes));
    }
    std::span<const uint8_t> messages(bytes->data() + c.schema_message_bytes,
                                      static_cast<size_t>(c.ipc_bytes - c.schema_message_bytes - kEosBytes));
    if (lz4) {
      QUIVER_ASSIGN_OR_RETURN(auto frame, fetch::Lz4FrameCompress(messages, exec_pool_.get()));
      return std::string(frame->view());
    }
    return std::string(reinterpret_cast<const char*>(messages.data()), messages.size());
  }

  void FillDirect(const std::shared_ptr<Operation>& op, const t::TSparkGetDirectResults& d,
                  t::TExecuteStatementResp* r) {
    t::TSparkDirectResults dr;
    t::TGetOperationStatusResp st;
    st.status = OkStatus();
    {
      std::unique_lock<std::mutex> lock(op->mu);
      WaitFor(op.get(), lock, [&] { return op->decided; });
    }
    FillStatus(op.get(), &st);
    dr.__set_operationStatus(st);
    bool decided, failed;
    {
      std::lock_guard<std::mutex> lock(op->mu);
      decided = op->decided;
      failed = op->failed;
    }
    if (decided && !failed) {
      t::TGetResultSetMetadataResp m;
      FillMetadata(op.get(), &m);
      dr.__set_resultSetMetadata(m);
      t::TFetchResultsResp page;
      FillPage(op.get(), false, -1, d.maxRows, &page, /*seqid=*/0, nullptr);
      if (shared_ && page.status.statusCode == t::TStatusCode::SUCCESS_STATUS) {
        const Status st = SaveCursor(op.get());
        if (!st.ok()) page.status = ErrorStatus("saving the fetch cursor: " + st.ToString());
      }
      const bool complete = page.status.statusCode == t::TStatusCode::SUCCESS_STATUS && !page.hasMoreRows;
      bool inline_mode;
      {
        std::lock_guard<std::mutex> lock(op->mu);
        inline_mode = op->inline_mode;
      }
      dr.__set_resultSet(page);
      if (complete && inline_mode) {
        // The whole result is in this reply: the client will not call
        // CloseOperation, so the operation closes now.
        std::shared_ptr<Operation> taken;
        {
          std::lock_guard<std::mutex> lock(mu_);
          auto it = ops_.find(op->guid);
          if (it != ops_.end()) {
            taken = it->second;
            ops_.erase(it);
          }
        }
        if (taken) Finish(taken, /*remove_documents=*/true);
        t::TCloseOperationResp c;
        c.status = OkStatus();
        dr.__set_closeOperation(c);
      }
    }
    r->__set_directResults(dr);
  }

  std::shared_ptr<apache::thrift::TConfiguration> config_;
  std::shared_ptr<t::TCLIServiceProcessor> processor_;
  bool shared_ = false;
  std::string handle_key_;
  int64_t last_expiry_sweep_ms_ = 0;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Session>> sessions_;
  std::unordered_map<std::string, std::shared_ptr<Operation>> ops_;
  std::atomic<int64_t> rpcs_{0}, rpc_errors_{0}, statements_{0}, finished_operations_{0}, producer_pauses_{0},
      chunks_written_{0}, chunk_ipc_bytes_{0}, chunk_served_bytes_{0}, expired_sessions_{0}, expired_operations_{0};
};

// ---------------------------------------------------------------------------

namespace {
// The processor holds a shared_ptr to its handler; the service owns the
// handler, so the processor gets a non-owning alias.
struct NoDelete {
  void operator()(t::TCLIServiceIf*) const {}
};
}  // namespace

Result<std::unique_ptr<ResultService>> ResultService::Make(ResultServiceOptions options) {
  if (!options.pool || !options.executor || !options.store) {
    return Status::Invalid("result service: pool, executor and store are required");
  }
  if (options.chunk_bytes < 1 || options.max_links_per_fetch < 1 || options.max_sessions < 1 ||
      options.max_operations < 1 || options.max_message_bytes < 1024 || options.link_expiry_ms < 1 ||
      options.fetch_wait_ms < 0 || options.max_statement_bytes < 1 || options.statement_timeout_ms < 0 ||
      options.max_unfetched_chunks == 1 || options.max_unfetched_chunks < 0 || options.max_operations_per_session < 1 ||
      options.max_sessions_per_token < 1 || options.max_operations_per_token < 1 || options.max_result_bytes < 0) {
    return Status::Invalid(
        "result service: chunk_bytes, max_links_per_fetch, max_sessions, max_operations, max_operations_per_session, "
        "max_sessions_per_token, max_operations_per_token, max_statement_bytes and "
        "link_expiry_ms must be >= 1, max_message_bytes >= 1024, statement_timeout_ms >= 0, max_result_bytes >= 0, "
        "max_unfetched_chunks 0 (none) or >= 2");
  }
  // Thrift's processor reports malformed messages on stderr; the service
  // answers them (Invalid -> HTTP 400) and counts them in rpc_errors instead.
  apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});
  auto impl = std::make_unique<Impl>(options);
  impl->SetProcessor(std::shared_ptr<t::TCLIServiceIf>(impl.get(), NoDelete{}));
  return std::unique_ptr<ResultService>(new ResultService(std::move(impl)));
}

Result<std::string> ReadClusterSecret(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cluster secret file '" + path + "' cannot be read");
  std::string secret((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.size() < 16) {
    return Status::Invalid("cluster secret file '" + path + "' holds " + std::to_string(secret.size()) +
                           " bytes; at least 16 are required");
  }
  return secret;
}

ResultService::ResultService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultService::~ResultService() = default;

Result<std::string> ResultService::Dispatch(std::span<const uint8_t> request, std::string_view client) {
  return impl_->Dispatch(request, client);
}
int64_t ResultService::ExpireIdle(int64_t now_ms) { return impl_->ExpireIdle(now_ms); }
ResultServiceStats ResultService::stats() const { return impl_->Stats(); }
MemoryPool* ResultService::exec_pool() const { return impl_->exec_pool_.get(); }
MemoryPool* ResultService::chunk_pool() const { return impl_->chunk_pool_.get(); }
MemoryPool* ResultService::thrift_pool() const { return impl_->thrift_pool_.get(); }

}  // namespace quiver::server
