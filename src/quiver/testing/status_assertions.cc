// quiver/testing/status_assertions.cc — failure texts of the Status assertions.
#include "quiver/testing/status_assertions.h"

#include <string>

namespace quiver::testing {

::testing::AssertionResult CheckOk(const char* expr_text, const Status& st) {
  if (st.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << expr_text << "' failed: " << st.ToString();
}

::testing::AssertionResult CheckRaises(const char* expr_text, StatusCode code, std::string_view message_part,
                                       const Status& st) {
  const bool code_matches = !st.ok() && st.code() == code;
  const bool message_matches = message_part.empty() || st.message().find(message_part) != std::string::npos;
  if (code_matches && message_matches) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  failure << "'" << expr_text << "' was expected to fail with " << StatusCodeName(code);
  if (!message_part.empty()) failure << " and a message containing \"" << message_part << "\"";
  failure << ", but returned " << st.ToString();
  return failure;
}

}  // namespace quiver::testing
