// Tests of the chunk writer and the LZ4 frame helpers.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "quiver/fetch/chunk_writer.h"
#include "quiver/ipc/reader.h"

namespace quiver::fetch {
namespace {

RecordBatchPtr MakeInt64Batch(MemoryPool* pool, const SchemaPtr& schema, int64_t first, int64_t rows) {
  auto data = Buffer::Allocate(pool, rows * 8).value();
  auto* v = reinterpret_cast<int64_t*>(data->mutable_data());
  for (int64_t i = 0; i < rows; ++i) v[i] = first + i;
  auto array = std::make_shared<ArrayData>();
  array->type = int64();
  array->length = rows;
  array->buffers = {nullptr, data};
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = rows;
  batch->columns = {array};
  return batch;
}

SchemaPtr Int64Schema() {
  auto s = std::make_shared<Schema>();
  s->fields = {field("x", int64(), false)};
  return s;
}

// Decodes a chunk's IPC stream and returns all x values.
std::vector<int64_t> DecodeChunk(const Chunk& chunk, MemoryPool* pool) {
  std::shared_ptr<Buffer> ipc = chunk.bytes;
  if (chunk.lz4) ipc = Lz4FrameDecompress(chunk.bytes->span(), pool, int64_t{1} << 30).value();
  EXPECT_EQ(ipc->size(), chunk.ipc_bytes);
  ipc::ReadOptions ro;
  ro.pool = pool;
  auto reader = ipc::RecordBatchReader::Open(ipc, ro).value();
  std::vector<int64_t> out;
  while (true) {
    auto b = reader->Next().value();
    if (!b) break;
    const auto* v = b->columns[0]->GetValues<int64_t>(1) + b->columns[0]->offset;
    out.insert(out.end(), v, v + b->num_rows);
  }
  return out;
}

void CheckChunks(bool lz4) {
  auto pool = MemoryPool::MakeRoot({});
  {
    auto schema = Int64Schema();
    std::vector<RecordBatchPtr> batches;
    int64_t next = 0;
    for (int64_t rows : {10000, 3, 50000, 1, 20000}) {
      batches.push_back(MakeInt64Batch(pool.get(), schema, next, rows));
      next += rows;
    }
    BatchVectorStream stream(schema, batches);
    ChunkWriterOptions o;
    o.pool = pool.get();
    o.target_chunk_bytes = 64 << 10;  // 8192 int64 rows of body per chunk
    o.lz4 = lz4;
    auto writer = ChunkWriter::Make(&stream, o).value();
    std::vector<int64_t> all;
    int64_t expected_start = 0;
    int64_t index = 0;
    while (true) {
      auto chunk = writer->Next().value();
      if (!chunk) break;
      EXPECT_EQ(chunk->index, index++);
      EXPECT_EQ(chunk->start_row_offset, expected_start);
      EXPECT_EQ(chunk->lz4, lz4);
      EXPECT_EQ(chunk->bytes->capacity_bytes(), chunk->bytes->size()) << "exact-size output";
      if (lz4) {
        // LZ4 frame magic, and the FLG byte has content size (bit 3) and checksum (bit 2).
        const uint8_t* p = chunk->bytes->data();
        EXPECT_EQ(p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24, 0x184D2204u);
        EXPECT_TRUE(p[4] & 0x08);
        EXPECT_TRUE(p[4] & 0x04);
      } else {
        EXPECT_EQ(chunk->bytes->size(), chunk->ipc_bytes);
      }
      EXPECT_LE(chunk->ipc_bytes, o.target_chunk_bytes + 2048);
      auto values = DecodeChunk(*chunk, pool.get());
      EXPECT_EQ(static_cast<int64_t>(values.size()), chunk->row_count);
      for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], chunk->start_row_offset + int64_t(i));
      all.insert(all.end(), values.begin(), values.end());
      expected_start += chunk->row_count;
    }
    EXPECT_EQ(static_cast<int64_t>(all.size()), next);
    EXPECT_GE(index, 10);  // 80004 rows * 8 bytes / 64 KiB
    EXPECT_EQ(writer->rows_written(), next);
  }
  EXPECT_EQ(pool->held_bytes(), 0);
}

TEST(ChunkWriter, CutsIntoCompleteIpcStreamsLz4) { CheckChunks(true); }
TEST(ChunkWriter, CutsIntoCompleteIpcStreamsRaw) { CheckChunks(false); }

TEST(ChunkWriter, EmptyInputMakesOneEmptyChunk) {
  auto pool = MemoryPool::MakeRoot({});
  BatchVectorStream stream(Int64Schema(), {});
  ChunkWriterOptions o;
  o.pool = pool.get();
  auto writer = ChunkWriter::Make(&stream, o).value();
  auto chunk = writer->Next().value();
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->row_count, 0);
  EXPECT_TRUE(DecodeChunk(*chunk, pool.get()).empty());
  EXPECT_FALSE(writer->Next().value().has_value());
}

TEST(ChunkWriter, RejectsBadOptions) {
  auto pool = MemoryPool::MakeRoot({});
  BatchVectorStream stream(Int64Schema(), {});
  ChunkWriterOptions o;
  EXPECT_TRUE(ChunkWriter::Make(&stream, o).status().IsInvalid());
  o.pool = pool.get();
  o.target_chunk_bytes = 0;
  EXPECT_TRUE(ChunkWriter::Make(&stream, o).status().IsInvalid());
}

TEST(Lz4Frame, RejectsCorruptionAndBombs) {
  auto pool = MemoryPool::MakeRoot({});
  std::vector<uint8_t> data(100000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 % 13);
  auto frame = Lz4FrameCompress(data, pool.get()).value();
  auto back = Lz4FrameDecompress(frame->span(), pool.get(), 1 << 20).value();
  ASSERT_EQ(back->size(), 100000);
  EXPECT_EQ(std::memcmp(back->data(), data.data(), data.size()), 0);
  EXPECT_FALSE(Lz4FrameDecompress(frame->span(), pool.get(), 99999).ok());
  std::vector<uint8_t> bad(frame->data(), frame->data() + frame->size());
  bad[bad.size() - 2] ^= 0x40;  // content checksum
  EXPECT_FALSE(Lz4FrameDecompress(bad, pool.get(), 1 << 20).ok());
  EXPECT_FALSE(
      Lz4FrameDecompress(std::span<const uint8_t>(frame->data(), frame->size() / 2), pool.get(), 1 << 20).ok());
}

}  // namespace
}  // namespace quiver::fetch
