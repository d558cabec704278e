// quiver/base/status.h — error values returned across every quiver API.
//
// Follows the Status/Result habit of Apache Arrow C++ (cpp/src/arrow/status.h):
// errors are values, never exceptions across the API. A Status is either OK
// (no allocation, a null pointer inside) or carries a code and a message.
//
// Thread safety: a Status is an immutable value; copies may be used from any
// thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace quiver {

/// The fixed error taxonomy (design notes, "Status and Result").
enum class StatusCode : int {
  kOk = 0,
  kInvalid,         ///< malformed input (bytes, arguments, metadata)
  kNotImplemented,  ///< valid but unsupported
  kIOError,         ///< the OS or a transport failed
  kOutOfMemory,     ///< a pool limit or an allocator refused bytes
  kEndOfStream,     ///< no more data where more was required
  kTimeout,
  kCancelled,
  kKeyError,  ///< a named thing (column, field) does not exist
};

/// Returns the human name of a code, e.g. "Invalid".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(StatusCode code, std::string message);

  static Status OK() { return Status(); }
  static Status Invalid(std::string msg) { return {StatusCode::kInvalid, std::move(msg)}; }
  static Status NotImplemented(std::string msg) { return {StatusCode::kNotImplemented, std::move(msg)}; }
  static Status IOError(std::string msg) { return {StatusCode::kIOError, std::move(msg)}; }
  static Status OutOfMemory(std::string msg) { return {StatusCode::kOutOfMemory, std::move(msg)}; }
  static Status EndOfStream(std::string msg) { return {StatusCode::kEndOfStream, std::move(msg)}; }
  static Status Timeout(std::string msg) { return {StatusCode::kTimeout, std::move(msg)}; }
  static Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
  static Status KeyError(std::string msg) { return {StatusCode::kKeyError, std::move(msg)}; }

  bool ok() const noexcept { return state_ == nullptr; }
  StatusCode code() const noexcept { return state_ ? state_->code : StatusCode::kOk; }
  /// The message without the code name; empty when OK.
  const std::string& message() const noexcept;
  /// "Code: message", or "OK".
  std::string ToString() const;

  bool IsInvalid() const noexcept { return code() == StatusCode::kInvalid; }
  bool IsNotImplemented() const noexcept { return code() == StatusCode::kNotImplemented; }
  bool IsIOError() const noexcept { return code() == StatusCode::kIOError; }
  bool IsOutOfMemory() const noexcept { return code() == StatusCode::kOutOfMemory; }
  bool IsEndOfStream() const noexcept { return code() == StatusCode::kEndOfStream; }
  bool IsKeyError() const noexcept { return code() == StatusCode::kKeyError; }

  /// Returns a copy whose message is "context: message" (same code, same
  /// SQLSTATE). Used to add where an error happened (message index, field
  /// path...).
  Status WithContext(std::string_view context) const;

  /// The SQLSTATE the code that raised the error gave it (five characters,
  /// e.g. "42P01" undefined table, "42703" undefined column), or empty when
  /// none was given: servers then map the code (Invalid -> 42601, ...).
  /// Carried through WithContext and copies; never derived from the message.
  std::string_view sql_state() const noexcept;
  /// A copy carrying `sql_state` (an OK status stays OK and carries none).
  Status WithSqlState(std::string sql_state) const;

 private:
  struct State {
    StatusCode code;
    std::string message;
    std::string sql_state;
  };
  std::shared_ptr<const State> state_;
};

}  // namespace quiver

#define QUIVER_CONCAT_INNER(a, b) a##b
#define QUIVER_CONCAT(a, b) QUIVER_CONCAT_INNER(a, b)

/// Returns the Status of `expr` from the enclosing function when not OK.
#define QUIVER_RETURN_NOT_OK(expr)           \
  do {                                       \
    ::quiver::Status _quiver_st = (expr);    \
    if (!_quiver_st.ok()) return _quiver_st; \
  } while (false)

/// As QUIVER_RETURN_NOT_OK, adding `ctx` (a std::string expression) in front
/// of the message.
#define QUIVER_RETURN_NOT_OK_CTX(expr, ctx)                   \
  do {                                                        \
    ::quiver::Status _quiver_st = (expr);                     \
    if (!_quiver_st.ok()) return _quiver_st.WithContext(ctx); \
  } while (false)
