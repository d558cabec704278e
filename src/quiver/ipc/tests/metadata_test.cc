// Direct tests for quiver/ipc/metadata_internal.h VerifyMessage: the flatbuffer
// verifier's limits and the metadata version window (V4..V5), on messages
// built here with the generated flatbuffer API.
#include "quiver/ipc/metadata_internal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "quiver/testing/status_assertions.h"

namespace quiver::ipc {
namespace {

/// 8-byte aligned copy of a finished flatbuffer (VerifyMessage requires
/// the alignment); `bytes()` spans exactly the message.
struct AlignedBytes {
  std::vector<uint64_t> storage;
  size_t size = 0;
  explicit AlignedBytes(std::span<const uint8_t> src) : storage((src.size() + 7) / 8), size(src.size()) {
    if (!src.empty()) std::memcpy(storage.data(), src.data(), src.size());
  }
  std::span<const uint8_t> bytes() const { return {reinterpret_cast<const uint8_t*>(storage.data()), size}; }
};

/// A Message holding an empty Schema header, with the given version.
AlignedBytes SchemaMessage(fb::MetadataVersion version, int64_t body_length = 0) {
  flatbuffers::FlatBufferBuilder b;
  auto schema =
      fb::CreateSchema(b, fb::Endianness::Little, b.CreateVector(std::vector<flatbuffers::Offset<fb::Field>>{}));
  auto message = fb::CreateMessage(b, version, fb::MessageHeader::Schema, schema.Union(), body_length);
  b.Finish(message);
  return AlignedBytes({b.GetBufferPointer(), b.GetSize()});
}

TEST(VerifyMessageTest, AcceptsV4AndV5) {
  for (auto version : {fb::MetadataVersion::V4, fb::MetadataVersion::V5}) {
    AlignedBytes msg = SchemaMessage(version, 64);
    ASSERT_OK_AND_ASSIGN(const fb::Message* m, VerifyMessage(msg.bytes(), ReadOptions{}));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->version(), version);
    EXPECT_EQ(m->header_type(), fb::MessageHeader::Schema);
    EXPECT_EQ(m->body_length(), 64);
  }
}

TEST(VerifyMessageTest, RefusesOlderVersions) {
  AlignedBytes msg = SchemaMessage(fb::MetadataVersion::V3);
  ASSERT_RAISES_WITH_MESSAGE(NotImplemented, "metadata version V3 is older than the oldest supported (V4)",
                             VerifyMessage(msg.bytes(), ReadOptions{}));
}

TEST(VerifyMessageTest, RefusesNewerVersions) {
  const auto v6 = static_cast<fb::MetadataVersion>(static_cast<int16_t>(fb::MetadataVersion::V5) + 1);
  AlignedBytes msg = SchemaMessage(v6);
  ASSERT_RAISES_WITH_MESSAGE(NotImplemented, "metadata version 6 is newer than the newest supported (V5)",
                             VerifyMessage(msg.bytes(), ReadOptions{}));
}

TEST(VerifyMessageTest, RefusesFewerThanEightBytes) {
  AlignedBytes msg = SchemaMessage(fb::MetadataVersion::V5);
  ASSERT_RAISES_WITH_MESSAGE(Invalid, "message flatbuffer of 7 bytes is too small",
                             VerifyMessage(msg.bytes().first(7), ReadOptions{}));
  ASSERT_RAISES_WITH_MESSAGE(Invalid, "message flatbuffer of 0 bytes is too small", VerifyMessage({}, ReadOptions{}));
}

TEST(VerifyMessageTest, RefusesGarbageAndTruncation) {
  std::vector<uint8_t> junk(64, 0xFF);
  AlignedBytes garbage(junk);
  ASSERT_RAISES_WITH_MESSAGE(Invalid, "message flatbuffer failed verification (64 bytes)",
                             VerifyMessage(garbage.bytes(), ReadOptions{}));
  AlignedBytes msg = SchemaMessage(fb::MetadataVersion::V5);
  // Every truncation of at least 8 bytes fails verification cleanly.
  for (size_t n = 8; n < msg.size; ++n) {
    EXPECT_RAISES(Invalid, VerifyMessage(msg.bytes().first(n), ReadOptions{})) << n << " bytes";
  }
}

TEST(VerifyMessageTest, TableLimitApplies) {
  AlignedBytes msg = SchemaMessage(fb::MetadataVersion::V5);
  ReadOptions tight;
  tight.max_flatbuffer_tables = 1;  // the message and its schema are two tables
  ASSERT_RAISES_WITH_MESSAGE(Invalid, "failed verification", VerifyMessage(msg.bytes(), tight));
}

}  // namespace
}  // namespace quiver::ipc
