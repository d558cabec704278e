// quiver/server/http_routes.cc — request targets, routes, Range headers,
// and the answers of the RPC and chunk-file routes (http_routes.h).
#include "quiver/server/http_routes.h"

#include <algorithm>
#include <span>

#include "quiver/fetch/link_signer.h"
#include "quiver/server/http_server_impl.h"

namespace quiver::server {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Percent-decodes `text` ('+' stays '+'); a '%' not followed by two hex
/// digits is kept as is.
std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

bool ParseDecimal(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

/// Parses a Range value; false when it is not in the bytes-range syntax

}  // namespace

Target ParseTarget(std::string_view target) {
  Target t;
  const size_t q = target.find('?');
  t.path = PercentDecode(target.substr(0, q));
  if (q == std::string_view::npos) return t;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    std::string name = PercentDecode(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    t.params.emplace(std::move(name), std::move(value));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return t;
}

/// One byte range of a Range header ("bytes=a-b", "bytes=a-", "bytes=-n").

Route MatchRoute(std::string_view path) {
  static constexpr std::string_view kRpcPrefix = "/sql/1.0/warehouses/";
  static constexpr std::string_view kFilesPrefix = "/files/";
  auto segment_after = [&](std::string_view prefix) {
    return path.substr(0, prefix.size()) == prefix && path.find('/', prefix.size()) == std::string_view::npos;
  };
  if (segment_after(kRpcPrefix)) return {RouteKind::kRpc, path.substr(kRpcPrefix.size())};
  if (segment_after(kFilesPrefix)) return {RouteKind::kFile, path.substr(kFilesPrefix.size())};
  if (path == "/metrics") return {RouteKind::kMetrics, {}};
  return {};
}

bool ParseRanges(std::string_view value, std::vector<ByteRange>* out) {
  constexpr std::string_view kUnit = "bytes=";
  if (value.substr(0, kUnit.size()) != kUnit) return false;
  value.remove_prefix(kUnit.size());
  while (true) {
    const size_t comma = value.find(',');
    std::string_view one = value.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    const size_t dash = one.find('-');
    if (dash == std::string_view::npos) return false;
    ByteRange r;
    const std::string_view a = one.substr(0, dash), b = one.substr(dash + 1);
    if (a.empty()) {
      r.first = -1;
      if (!ParseDecimal(b, &r.last)) return false;
    } else {
      if (!ParseDecimal(a, &r.first)) return false;
      if (!b.empty()) {
        if (!ParseDecimal(b, &r.last) || r.last < r.first) return false;
      }
    }
    out->push_back(r);
    if (comma == std::string_view::npos) return true;
    value.remove_prefix(comma + 1);
  }
}

std::unique_ptr<Reply> ResultServer::Impl::HandleRpc(std::string body, const std::string& client) {
  auto reply =
      service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(body.data()), body.size()), client);
  std::string().swap(body);
  if (!reply.ok()) {
    return Reply::Text(reply.status().IsOutOfMemory() ? 503 : 400, reply.status().ToString() + "\n");
  }
  // The reply stays charged to the thrift pool until it has been sent.
  auto out = std::make_unique<Reply>();
  out->text = std::move(reply).value();
  auto pool = service->thrift_pool()->shared_from_this();
  if (!pool->Reserve(static_cast<int64_t>(out->text.size())).ok()) {
    return Reply::Text(503, "no memory for the reply\n");
  }
  out->charged_pool = std::move(pool);
  out->charged_bytes = static_cast<int64_t>(out->text.size());
  out->content_type = "application/x-thrift";
  return out;
}

std::unique_ptr<Reply> ResultServer::Impl::HandleFile(const std::string& id,
                                                      const std::map<std::string, std::string>& params,
                                                      const std::string& range) {
  if (!fetch::IsValidChunkId(id)) {
    ++link_rejections;
    return Reply::Text(400, "not a chunk id\n");
  }
  const auto e = params.find("e");
  const auto s = params.find("s");
  const fetch::LinkCheck check = store->signer().Verify(id, e == params.end() ? "" : e->second,
                                                        s == params.end() ? "" : s->second, fetch::NowEpochMs());
  if (check != fetch::LinkCheck::kOk) {
    ++link_rejections;
    return Reply::Text(403, "link refused: " + std::string(fetch::LinkCheckName(check)) + "\n");
  }
  auto bytes = store->Get(id);
  if (!bytes.ok()) return Reply::Text(404, "chunk removed (its operation was closed or expired)\n");
  auto out = std::make_unique<Reply>();
  out->content_type = "application/octet-stream";
  out->chunk = std::move(bytes).value();
  const int64_t n = out->chunk->size();
  out->length = static_cast<size_t>(n);
  std::vector<ByteRange> ranges;
  // One range: 206 (or 416); several: the whole chunk with 200 (RFC 7233
  // lets a server ignore Range; clients resume with one range); a Range that
  // does not parse is ignored too.
  if (!range.empty() && ParseRanges(range, &ranges) && ranges.size() == 1) {
    int64_t first = ranges[0].first;
    int64_t last = ranges[0].last;
    bool satisfiable = true;
    if (first < 0) {  // suffix: the last `last` bytes
      satisfiable = last > 0 && n > 0;
      first = std::max<int64_t>(0, n - last);
      last = n - 1;
    } else {
      if (last < 0 || last >= n) last = n - 1;
      satisfiable = first < n && first <= last;
    }
    if (!satisfiable) {
      auto refused = Reply::Text(416, "range not satisfiable: the chunk has " + std::to_string(n) + " bytes\n");
      refused->headers.emplace_back("Content-Range", "bytes */" + std::to_string(n));
      return refused;
    }
    out->status = 206;
    out->offset = static_cast<size_t>(first);
    out->length = static_cast<size_t>(last - first + 1);
    out->headers.emplace_back("Content-Range",
                              "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(n));
  }
  out->headers.emplace_back("Accept-Ranges", "bytes");
  // The whole chunk: once it is sent, it leaves memory (issue 35 #11).
  if (out->offset == 0 && static_cast<int64_t>(out->length) == n) out->served_chunk_id = id;
  return out;
}

}  // namespace quiver::server
