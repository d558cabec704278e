// OperationRegistry: registering operations against the caps, and never
// over an operation of the same handle that is already here.
#include "quiver/server/operation_registry.h"

#include <gtest/gtest.h>

namespace quiver::server {
namespace {

std::shared_ptr<Operation> NewOperation(const std::string& guid, const Session& session) {
  auto op = std::make_shared<Operation>();
  op->guid = guid;
  op->session_guid = session.guid;
  op->client = session.client;
  return op;
}

TEST(OperationRegistry, AnOperationOfAGuidAlreadyHereIsRefusedAndTheFirstStays) {
  ResultServiceOptions options;
  OperationRegistry registry(options, "key");
  auto session = std::make_shared<Session>();
  session->guid = "s1";
  session->client = "token-0";
  ASSERT_EQ(registry.AddSession(session).statusCode, t::TStatusCode::SUCCESS_STATUS);
  auto first = NewOperation("op-1", *session);
  ASSERT_EQ(registry.AddOperation(first, *session).statusCode, t::TStatusCode::SUCCESS_STATUS);
  auto second = NewOperation("op-1", *session);
  const t::TStatus again = registry.AddOperation(second, *session);
  EXPECT_EQ(again.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(again.errorMessage.find("already running here"), std::string::npos) << again.errorMessage;
  // The handle still finds the first operation.
  t::THandleIdentifier id;
  id.guid = "op-1";
  id.secret = registry.HandleSecret("operation", "op-1", "token-0");
  first->secret = id.secret;
  std::shared_ptr<Operation> found;
  EXPECT_EQ(registry.FindOperation(id, "token-0", &found), OperationRegistry::Lookup::kFound);
  EXPECT_EQ(found.get(), first.get());
  // A different guid registers.
  EXPECT_EQ(registry.AddOperation(NewOperation("op-2", *session), *session).statusCode, t::TStatusCode::SUCCESS_STATUS);
}

}  // namespace
}  // namespace quiver::server
