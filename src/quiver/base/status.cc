#include "quiver/base/status.h"

namespace quiver {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalid: return "Invalid";
    case StatusCode::kNotImplemented: return "NotImplemented";
    case StatusCode::kIOError: return "IOError";
    case StatusCode::kOutOfMemory: return "OutOfMemory";
    case StatusCode::kEndOfStream: return "EndOfStream";
    case StatusCode::kTimeout: return "Timeout";
    case StatusCode::kCancelled: return "Cancelled";
    case StatusCode::kKeyError: return "KeyError";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) {
    state_ = std::make_shared<const State>(State{code, std::move(message), std::string()});
  }
}

const std::string& Status::message() const noexcept {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(state_->code));
  out += ": ";
  out += state_->message;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok() || context.empty()) return *this;
  std::string msg(context);
  msg += ": ";
  msg += state_->message;
  Status out;
  out.state_ = std::make_shared<const State>(State{state_->code, std::move(msg), state_->sql_state});
  return out;
}

std::string_view Status::sql_state() const noexcept {
  return state_ ? std::string_view(state_->sql_state) : std::string_view();
}

Status Status::WithSqlState(std::string sql_state) const {
  if (ok()) return *this;
  Status out;
  out.state_ = std::make_shared<const State>(State{state_->code, state_->message, std::move(sql_state)});
  return out;
}

}  // namespace quiver
