// quiver/server/tests/http_test_clients.h — clients for the attacker tests
// of the result server's HTTP layer (http_limits_test.cc): a raw TLS client
// that sends exactly the bytes given, from a chosen loopback source address
// (127.0.0.2, 127.0.0.3, ... stand for other hosts on Linux), and a Thrift
// client over cpp-httplib bound the same way. Test code: failures are
// reported through the return values, never thrown.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "quiver/server/http_server.h"
#include "quiver/tcli/TCLIService.h"

namespace quiver::server::http_attack {

/// Binds `fd` to `source` (an IPv4 address, port 0); true on success.
inline bool BindSource(int fd, const std::string& source) {
  sockaddr_in local{};
  local.sin_family = AF_INET;
  if (inet_pton(AF_INET, source.c_str(), &local.sin_addr) != 1) return false;
  return bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0;
}

/// A TCP connection to 127.0.0.1:`port` from `source`; -1 when refused.
inline int ConnectFrom(int port, const std::string& source) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!BindSource(fd, source) || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// True when the server has closed `fd` (a read would return 0 or fail).
inline bool ClosedByPeer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLHUP | POLLERR)) != 0) return true;
  char byte;
  return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

/// A raw TLS client: sends exactly the bytes given, when given.
class RawTls {
 public:
  RawTls(int port, const std::string& source = "127.0.0.1") {
    std::signal(SIGPIPE, SIG_IGN);  // writes to a connection the server closed fail instead
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    fd_ = ConnectFrom(port, source);
    if (fd_ < 0) return;
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    connected_ = SSL_connect(ssl_) == 1;
    // Non-blocking from here: a readable socket may carry only a TLS
    // record without application data (a TLS 1.3 session ticket).
    fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  ~RawTls() {
    if (ssl_) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
    SSL_CTX_free(ctx_);
  }
  RawTls(const RawTls&) = delete;
  RawTls& operator=(const RawTls&) = delete;

  bool connected() const { return connected_; }
  /// False once the server has closed (or reset) the connection, or it
  /// took no bytes for 5 s.
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const int n = SSL_write(ssl_, bytes.data(), static_cast<int>(std::min<size_t>(bytes.size(), 1 << 16)));
      if (n > 0) {
        bytes.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (!Wait(SSL_get_error(ssl_, n), 5000)) return false;
    }
    return true;
  }
  /// What arrives within `timeout_ms` (one read); "" when nothing did or the
  /// server closed.
  std::string ReadSome(int timeout_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    char buf[16384];
    while (true) {
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n > 0) return std::string(buf, static_cast<size_t>(n));
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !Wait(SSL_get_error(ssl_, n), static_cast<int>(left.count()))) return "";
    }
  }
  /// The status code of the first response line, or -1.
  static int StatusOf(const std::string& response) {
    if (response.compare(0, 9, "HTTP/1.1 ") != 0 || response.size() < 12) return -1;
    return std::atoi(response.substr(9, 3).c_str());
  }

 private:
  // Waits for the socket as OpenSSL asks (`error` of the last call); false
  // for another error or when `timeout_ms` passes.
  bool Wait(int error, int timeout_ms) {
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) return false;
    pollfd p{fd_, static_cast<short>(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
    return poll(&p, 1, timeout_ms) > 0;
  }

  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
};

/// Thrift RPCs over HTTPS (cpp-httplib, trusting the server's certificate)
/// with a bearer token, from `source`.
class ThriftClient {
 public:
  ThriftClient(const ResultServer& server, const std::string& token, const std::string& source)
      : http_("127.0.0.1", server.port()), path_(server.rpc_path()), token_(token) {
    http_.set_ca_cert_path(server.cert_path());
    http_.enable_server_certificate_verification(true);
    http_.set_connection_timeout(5, 0);
    http_.set_read_timeout(10, 0);
    http_.set_socket_options([source](int fd) { BindSource(fd, source); });
    out_ = std::make_shared<apache::thrift::transport::TMemoryBuffer>();
    in_ = std::make_shared<apache::thrift::transport::TMemoryBuffer>();
    client_ =
        std::make_unique<tcli::TCLIServiceClient>(std::make_shared<apache::thrift::protocol::TBinaryProtocol>(in_),
                                                  std::make_shared<apache::thrift::protocol::TBinaryProtocol>(out_));
  }
  tcli::TCLIServiceClient& c() { return *client_; }
  /// Posts what the client wrote; the HTTP status (-1 without an answer),
  /// with the reply loaded for recv_*.
  int Send() {
    const std::string body = out_->getBufferAsString();
    out_->resetBuffer();
    httplib::Headers h{{"Authorization", "Bearer " + token_}};
    auto r = http_.Post(path_.c_str(), h, body, "application/x-thrift");
    if (!r) return -1;
    last_ = r->body;
    if (last_.empty()) {
      in_->resetBuffer();
    } else {
      in_->resetBuffer(reinterpret_cast<uint8_t*>(last_.data()), static_cast<uint32_t>(last_.size()),
                       apache::thrift::transport::TMemoryBuffer::COPY);
    }
    return r->status;
  }

 private:
  httplib::SSLClient http_;
  std::string path_, token_, last_;
  std::shared_ptr<apache::thrift::transport::TMemoryBuffer> out_, in_;
  std::unique_ptr<tcli::TCLIServiceClient> client_;
};

/// Opens a session, runs `sql` (with direct results, so one round trip
/// answers a small result), checks that it returns `rows` rows, closes.
/// Returns the seconds it took, or a negative value with `*error` set.
inline double TimedQuery(const ResultServer& server, const std::string& token, const std::string& source,
                         const std::string& sql, int64_t rows, std::string* error) {
  const auto t0 = std::chrono::steady_clock::now();
  ThriftClient rpc(server, token, source);
  tcli::TOpenSessionReq open;
  open.client_protocol = tcli::TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10;
  open.__set_client_protocol_i64(tcli::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8);
  rpc.c().send_OpenSession(open);
  int status = rpc.Send();
  if (status != 200) {
    *error = "OpenSession: HTTP " + std::to_string(status);
    return -1;
  }
  tcli::TOpenSessionResp session;
  rpc.c().recv_OpenSession(session);
  if (session.status.statusCode != tcli::TStatusCode::SUCCESS_STATUS) {
    *error = "OpenSession: " + session.status.errorMessage;
    return -1;
  }
  tcli::TExecuteStatementReq ex;
  ex.sessionHandle = session.sessionHandle;
  ex.statement = sql;
  ex.__set_runAsync(false);
  ex.__set_canReadArrowResult(true);
  tcli::TSparkGetDirectResults direct;
  direct.maxRows = 100000;
  ex.__set_getDirectResults(direct);
  rpc.c().send_ExecuteStatement(ex);
  status = rpc.Send();
  if (status != 200) {
    *error = "ExecuteStatement: HTTP " + std::to_string(status);
    return -1;
  }
  tcli::TExecuteStatementResp exr;
  rpc.c().recv_ExecuteStatement(exr);
  if (exr.status.statusCode != tcli::TStatusCode::SUCCESS_STATUS) {
    *error = "ExecuteStatement: " + exr.status.errorMessage;
    return -1;
  }
  int64_t got = 0;
  for (const auto& b : exr.directResults.resultSet.results.arrowBatches) got += b.rowCount;
  bool more = !exr.directResults.__isset.resultSet || exr.directResults.resultSet.hasMoreRows;
  // The rest, if the direct results did not carry them all (at most 100 pages).
  for (int page = 0; more && got < rows && page < 100; ++page) {
    tcli::TFetchResultsReq fetch;
    fetch.operationHandle = exr.operationHandle;
    fetch.orientation = tcli::TFetchOrientation::FETCH_NEXT;
    fetch.maxRows = 100000;
    rpc.c().send_FetchResults(fetch);
    status = rpc.Send();
    if (status != 200) {
      *error = "FetchResults: HTTP " + std::to_string(status);
      return -1;
    }
    tcli::TFetchResultsResp fr;
    rpc.c().recv_FetchResults(fr);
    if (fr.status.statusCode != tcli::TStatusCode::SUCCESS_STATUS &&
        fr.status.statusCode != tcli::TStatusCode::SUCCESS_WITH_INFO_STATUS) {
      *error = "FetchResults: " + fr.status.errorMessage;
      return -1;
    }
    for (const auto& b : fr.results.arrowBatches) got += b.rowCount;
    more = fr.hasMoreRows;
  }
  if (got != rows) {
    *error = std::to_string(got) + " rows instead of " + std::to_string(rows);
    return -1;
  }
  tcli::TCloseSessionReq close_req;
  close_req.sessionHandle = session.sessionHandle;
  rpc.c().send_CloseSession(close_req);
  if (rpc.Send() == 200) {
    tcli::TCloseSessionResp close_resp;
    rpc.c().recv_CloseSession(close_resp);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace quiver::server::http_attack
