// Loading a record batch body in the IPC reader:
//  - body statistics (ReadOptions::collect_body_stats): off by default, and
//    then empty; filled per column when asked; the record batch message's
//    custom metadata handed through as stored, unparsed (the codec level key
//    is quiver's writer's business and `quiver stats`');
//  - the passes: every buffer of a batch is located and bounds-checked
//    before any is decompressed, so a structurally broken batch costs no
//    decompression.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "quiver/compression/body_region.h"
#include "quiver/ipc/metadata_internal.h"  // the flatbuffer API, for hand-built messages
#include "quiver/ipc/tests/ipc_test_batches.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::ipc {
namespace {

void ExpectEmpty(const BatchBodyStats& s) {
  EXPECT_EQ(s.message_index, 0);
  EXPECT_EQ(s.num_rows, 0);
  EXPECT_EQ(s.codec, CompressionType::kNone);
  EXPECT_TRUE(s.message_metadata.empty());
  EXPECT_EQ(s.metadata_bytes, 0);
  EXPECT_EQ(s.body_bytes, 0);
  EXPECT_TRUE(s.columns.empty());
}

class BodyStats : public ::testing::TestWithParam<std::tuple<IpcFormat, CompressionType>> {};

TEST_P(BodyStats, OffByDefaultAndThenEmpty) {
  EXPECT_FALSE(ReadOptions{}.collect_body_stats);
  auto [format, codec] = GetParam();
  Fixture f;
  auto batch = TestBatch(f.pool.get(), 500);
  ASSERT_OK_AND_ASSIGN(auto bytes, Write({batch, batch}, format, codec, f.pool.get()));
  std::unique_ptr<RecordBatchReader> reader;
  ASSERT_OK_AND_ASSIGN(auto back, Read(bytes, f.pool.get(), &reader));
  ASSERT_EQ(back.size(), 2u);
  ExpectEmpty(reader->last_batch_stats());
}

TEST_P(BodyStats, OnFillsEachColumnAndChangesNothingElse) {
  auto [format, codec] = GetParam();
  Fixture f;
  auto batch = TestBatch(f.pool.get(), 500);
  ASSERT_OK_AND_ASSIGN(auto bytes, Write({batch, batch}, format, codec, f.pool.get()));

  auto read_pool_off = f.pool->MakeChild({"off"});
  auto read_pool_on = f.pool->MakeChild({"on"});
  std::unique_ptr<RecordBatchReader> off, on;
  ASSERT_OK_AND_ASSIGN(auto back_off, Read(bytes, read_pool_off.get(), &off));
  ASSERT_OK_AND_ASSIGN(auto back_on, Read(bytes, read_pool_on.get(), &on, /*collect_body_stats=*/true));
  // The same batches, from the same memory.
  ASSERT_EQ(back_on.size(), back_off.size());
  for (size_t i = 0; i < back_on.size(); ++i) {
    ASSERT_OK(CompareBatches(*back_off[i], *back_on[i], CompareOptions{0, 0, true}));
  }
  EXPECT_EQ(read_pool_on->held_bytes(), read_pool_off->held_bytes());
  EXPECT_EQ(read_pool_on->peak_bytes(), read_pool_off->peak_bytes());

  const BatchBodyStats& s = on->last_batch_stats();
  // Stream: schema (0), dictionary (1), batch (2), batch (3); file: block 1.
  EXPECT_EQ(s.message_index, format == IpcFormat::kStream ? 3 : 1);
  EXPECT_EQ(s.num_rows, 500);
  EXPECT_EQ(s.codec, codec);
  EXPECT_GT(s.metadata_bytes, 0);
  EXPECT_GT(s.body_bytes, 0);
  if (codec == CompressionType::kNone) {
    EXPECT_TRUE(s.message_metadata.empty());
  } else {
    // quiver's writer records its level (ZSTD's default 3, LZ4 0), and the
    // reader hands it on as a plain pair.
    const KeyValueMetadata expected{
        {std::string(kCompressionLevelMetadataKey), codec == CompressionType::kZstd ? "3" : "0"}};
    EXPECT_EQ(s.message_metadata, expected);
  }
  ASSERT_EQ(s.columns.size(), 5u);
  const std::vector<std::string> names{"i", "s", "b", "l", "d"};
  // IPC buffers per column, depth-first: validity + data; validity +
  // offsets + data; validity + bits; validity + offsets, then the child's
  // validity + data; the dictionary's indices: validity + data.
  const std::vector<size_t> num_buffers{2, 3, 2, 4, 2};
  int64_t stored = 0;
  for (size_t c = 0; c < s.columns.size(); ++c) {
    SCOPED_TRACE(names[c]);
    const ColumnBodyStats& col = s.columns[c];
    EXPECT_EQ(col.name, names[c]);
    EXPECT_EQ(col.stored_buffer_bytes.size(), num_buffers[c]);
    EXPECT_EQ(col.stored_bytes,
              std::accumulate(col.stored_buffer_bytes.begin(), col.stored_buffer_bytes.end(), int64_t{0}));
    EXPECT_GT(col.uncompressed_bytes, 0);
    if (codec == CompressionType::kNone) {
      EXPECT_EQ(col.uncompressed_bytes, col.stored_bytes);
    }
    stored += col.stored_bytes;
  }
  EXPECT_LE(stored, s.body_bytes);
}

INSTANTIATE_TEST_SUITE_P(All, BodyStats,
                         ::testing::Combine(::testing::Values(IpcFormat::kStream, IpcFormat::kFile),
                                            ::testing::Values(CompressionType::kNone, CompressionType::kLz4Frame,
                                                              CompressionType::kZstd)));

/// A framed message: continuation, length, `fbb`'s flatbuffer padded to 8.
void AppendMessage(const flatbuffers::FlatBufferBuilder& fbb, std::vector<uint8_t>* out) {
  const size_t padded = (fbb.GetSize() + 7) / 8 * 8;
  const uint32_t continuation = 0xFFFFFFFFu;
  const int32_t len = static_cast<int32_t>(padded);
  const size_t at = out->size();
  out->resize(at + 8 + padded, 0);
  std::memcpy(out->data() + at, &continuation, 4);
  std::memcpy(out->data() + at + 4, &len, 4);
  std::memcpy(out->data() + at + 8, fbb.GetBufferPointer(), fbb.GetSize());
}

TEST(BodyStatsMetadata, MessageMetadataIsHandedOnAsStored) {
  Fixture f;
  // The schema message of a one-column int32 stream (the writer's bytes,
  // end-of-stream marker cut off) ...
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("x", int32(), false)};
  BufferOutputStream sink;
  WriteOptions wo;
  wo.pool = f.pool.get();
  ASSERT_OK(WriteTable(&sink, schema, {}, IpcFormat::kStream, wo));
  std::vector<uint8_t> bytes = sink.bytes();
  ASSERT_GE(bytes.size(), 8u);
  bytes.resize(bytes.size() - 8);
  // ... then an empty record batch whose custom metadata repeats a key,
  // lacks a value, and holds quiver's level key with a value that is no
  // number: the reader interprets none of it.
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<fb::FieldNode> nodes{fb::FieldNode(0, 0)};
  const std::vector<fb::Buffer> buffers{fb::Buffer(0, 0), fb::Buffer(0, 0)};
  auto nodes_off = fbb.CreateVectorOfStructs(nodes);
  auto buffers_off = fbb.CreateVectorOfStructs(buffers);
  auto rb = fb::CreateRecordBatch(fbb, 0, nodes_off, buffers_off);
  std::vector<flatbuffers::Offset<fb::KeyValue>> kvs;
  kvs.push_back(fb::CreateKeyValue(fbb, fbb.CreateString("a"), fbb.CreateString("1")));
  kvs.push_back(fb::CreateKeyValue(fbb, fbb.CreateString("a"), fbb.CreateString("2")));
  kvs.push_back(fb::CreateKeyValue(fbb, fbb.CreateString(std::string(kCompressionLevelMetadataKey)),
                                   fbb.CreateString("not a number")));
  kvs.push_back(fb::CreateKeyValue(fbb, fbb.CreateString("no value")));
  auto md = fbb.CreateVector(kvs);
  fbb.Finish(fb::CreateMessage(fbb, fb::MetadataVersion::V5, fb::MessageHeader::RecordBatch, rb.Union(), 0, md));
  AppendMessage(fbb, &bytes);
  bytes.insert(bytes.end(), {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0});

  std::unique_ptr<RecordBatchReader> reader;
  ASSERT_OK_AND_ASSIGN(auto back, Read(bytes, f.pool.get(), &reader, /*collect_body_stats=*/true));
  ASSERT_EQ(back.size(), 1u);
  const BatchBodyStats& s = reader->last_batch_stats();
  EXPECT_EQ(s.message_index, 1);
  EXPECT_EQ(s.num_rows, 0);
  EXPECT_EQ(s.body_bytes, 0);
  const KeyValueMetadata expected{
      {"a", "1"}, {"a", "2"}, {std::string(kCompressionLevelMetadataKey), "not a number"}, {"no value", ""}};
  EXPECT_EQ(s.message_metadata, expected);
  ASSERT_EQ(s.columns.size(), 1u);
  EXPECT_EQ(s.columns[0].name, "x");
  EXPECT_EQ(s.columns[0].stored_buffer_bytes, (std::vector<int64_t>{0, 0}));

  // Without collection the same stream reads the same, with nothing kept.
  ASSERT_OK_AND_ASSIGN(back, Read(bytes, f.pool.get(), &reader));
  ASSERT_EQ(back.size(), 1u);
  ExpectEmpty(reader->last_batch_stats());
}

/// The stream bytes of `schema` without batches, end-of-stream marker cut off.
std::vector<uint8_t> SchemaMessageBytes(const SchemaPtr& schema, MemoryPool* pool) {
  BufferOutputStream sink;
  WriteOptions wo;
  wo.pool = pool;
  EXPECT_OK(WriteTable(&sink, schema, {}, IpcFormat::kStream, wo));
  std::vector<uint8_t> bytes = sink.bytes();
  bytes.resize(bytes.size() >= 8 ? bytes.size() - 8 : 0);
  return bytes;
}

TEST(BodyLoading, EveryBufferIsLocatedBeforeAnyIsDecompressed) {
  Fixture f;
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("x", int32(), false), field("y", int32(), false)};
  // One ZSTD region holding 4096 int32 values (16 KiB decompressed).
  const int64_t rows = 4096, raw_bytes = rows * 4;
  const std::vector<int32_t> values(static_cast<size_t>(rows), 5);
  ASSERT_OK_AND_ASSIGN(auto codec, Codec::Make(CompressionType::kZstd));
  std::vector<uint8_t> body(static_cast<size_t>(kRegionPrefixBytes + codec->MaxCompressedBytes(raw_bytes)));
  EncodeRegionPrefix(raw_bytes, body.data());
  ASSERT_OK_AND_ASSIGN(
      int64_t frame, codec->Compress({reinterpret_cast<const uint8_t*>(values.data()), static_cast<size_t>(raw_bytes)},
                                     {body.data() + kRegionPrefixBytes, body.size() - 8}));
  const int64_t region = kRegionPrefixBytes + frame;
  body.resize(static_cast<size_t>((region + 7) / 8 * 8), 0);
  const int64_t body_len = static_cast<int64_t>(body.size());
  // x's data is that region; y's data the same region (a good batch), or
  // one past the end of the body.
  auto stream = [&](int64_t y_offset) {
    std::vector<uint8_t> bytes = SchemaMessageBytes(schema, f.pool.get());
    flatbuffers::FlatBufferBuilder fbb;
    const std::vector<fb::FieldNode> nodes{fb::FieldNode(rows, 0), fb::FieldNode(rows, 0)};
    const std::vector<fb::Buffer> buffers{fb::Buffer(0, 0), fb::Buffer(0, region), fb::Buffer(0, 0),
                                          fb::Buffer(y_offset, region)};
    auto nodes_off = fbb.CreateVectorOfStructs(nodes);
    auto buffers_off = fbb.CreateVectorOfStructs(buffers);
    auto compression = fb::CreateBodyCompression(fbb, fb::CompressionType::ZSTD, fb::BodyCompressionMethod::BUFFER);
    auto rb = fb::CreateRecordBatch(fbb, rows, nodes_off, buffers_off, compression);
    fbb.Finish(fb::CreateMessage(fbb, fb::MetadataVersion::V5, fb::MessageHeader::RecordBatch, rb.Union(), body_len));
    AppendMessage(fbb, &bytes);
    bytes.insert(bytes.end(), body.begin(), body.end());
    bytes.insert(bytes.end(), {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0});
    return bytes;
  };
  {
    auto pool = f.pool->MakeChild({"good"});
    ASSERT_OK_AND_ASSIGN(auto back, Read(stream(0), pool.get()));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0]->columns[1]->length, rows);
    EXPECT_GE(pool->peak_bytes(), 2 * raw_bytes);  // both regions decompressed
  }
  {
    // y's region is outside the body: the error names it, and x's region,
    // which comes first, was never decompressed.
    auto pool = f.pool->MakeChild({"bad"});
    ASSERT_RAISES_WITH_MESSAGE(Invalid,
                               "message 1: field 'y' buffer 3 (data): region [" + std::to_string(body_len) + ", +" +
                                   std::to_string(region) + ") is outside the body of " + std::to_string(body_len) +
                                   " bytes",
                               Read(stream(body_len), pool.get()));
    EXPECT_LT(pool->peak_bytes(), raw_bytes);
    EXPECT_EQ(pool->held_bytes(), 0);
  }
}

}  // namespace
}  // namespace quiver::ipc
