// quiver/server/http_routes.h — what an HTTP request asks for: its decoded
// path and query, which route the path names (the RPC path, a chunk file,
// /metrics), and the parsing of a Range header. The answers of the routes
// are ResultServer::Impl::HandleRpc and HandleFile (http_routes.cc).
//
// Internal to the server layer. Every function is pure and thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace quiver::server {

/// The decoded path and query parameters of a request target.
struct Target {
  std::string path;
  std::map<std::string, std::string> params;  ///< first occurrence of each name wins
};

/// Splits a request target at '?', percent-decodes the path and each
/// name=value of the query ('+' stays '+'; a '%' not followed by two hex
/// digits is kept as is).
Target ParseTarget(std::string_view target);

enum class RouteKind {
  kRpc,      ///< /sql/1.0/warehouses/<id>: a Thrift call (POST)
  kFile,     ///< /files/<id>: a result chunk (GET)
  kMetrics,  ///< /metrics (GET)
  kNone,     ///< anything else: 404
};

/// The route a decoded path names; `tail` (a view into `path`) is the
/// warehouse id or chunk id, one path segment (no further '/').
struct Route {
  RouteKind kind = RouteKind::kNone;
  std::string_view tail;
};
Route MatchRoute(std::string_view path);

/// One byte range of a Range header ("bytes=a-b", "bytes=a-", "bytes=-n").
/// first < 0 means a suffix of `last` bytes; last < 0 means to the end.
struct ByteRange {
  int64_t first = 0;
  int64_t last = -1;
};

/// Parses a Range value; false when it is not in the bytes-range syntax
/// (the caller then ignores it, as RFC 7233 allows). Numbers over 18
/// digits are refused.
bool ParseRanges(std::string_view value, std::vector<ByteRange>* out);

}  // namespace quiver::server
