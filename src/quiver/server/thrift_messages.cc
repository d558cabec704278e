// quiver/server/thrift_messages.cc — TStatus replies, SQLSTATEs and the
// message header's sequence id (thrift_messages.h).
#include "quiver/server/thrift_messages.h"

namespace quiver::server {

t::TStatus OkStatus() {
  t::TStatus s;
  s.statusCode = t::TStatusCode::SUCCESS_STATUS;
  return s;
}

t::TStatus ErrorStatus(const std::string& message, t::TStatusCode::type code, const std::string& sql_state) {
  t::TStatus s;
  s.statusCode = code;
  s.__set_errorMessage(message);
  s.__set_displayMessage(message);
  s.__set_sqlState(sql_state);
  s.__set_errorCode(code == t::TStatusCode::INVALID_HANDLE_STATUS ? 4 : 3);
  return s;
}

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

}  // namespace quiver::server
