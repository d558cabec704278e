// Tests of the chunk writer, the chunk store and the link signer.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "quiver/columnar/compare.h"
#include "quiver/fetch/chunk_store.h"
#include "quiver/fetch/chunk_writer.h"
#include "quiver/fetch/link_signer.h"
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

class VectorStream : public RecordBatchStream {
 public:
  VectorStream(SchemaPtr schema, std::vector<RecordBatchPtr> batches)
      : schema_(std::move(schema)), batches_(std::move(batches)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (next_ == batches_.size()) return RecordBatchPtr();
    return batches_[next_++];
  }

 private:
  SchemaPtr schema_;
  std::vector<RecordBatchPtr> batches_;
  size_t next_ = 0;
};

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
    VectorStream stream(schema, batches);
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
  VectorStream stream(Int64Schema(), {});
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
  VectorStream stream(Int64Schema(), {});
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
  EXPECT_FALSE(Lz4FrameDecompress(std::span<const uint8_t>(frame->data(), frame->size() / 2), pool.get(), 1 << 20).ok());
}

std::array<uint8_t, LinkSigner::kSecretBytes> FixedSecret(uint8_t seed) {
  std::array<uint8_t, LinkSigner::kSecretBytes> s{};
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(seed + i);
  return s;
}

TEST(LinkSigner, KnownHmacValue) {
  // HMAC-SHA256(key = 00 01 .. 1f, "0123456789abcdef0123456789abcdef\n1700000000000"),
  // computed independently with Python's hmac module.
  LinkSigner signer(FixedSecret(0));
  const std::string sig = signer.Sign("0123456789abcdef0123456789abcdef", 1700000000000);
  EXPECT_EQ(sig.size(), 64u);
  EXPECT_EQ(sig, "a68e964414f8b2fcfa0eb1806b4ff81c587d3bc4663da07f2018be0079fd62e9");
}

TEST(LinkSigner, VerifyOutcomes) {
  LinkSigner signer(FixedSecret(1));
  const std::string id = NewChunkId().value();
  ASSERT_TRUE(IsValidChunkId(id));
  const int64_t now = 1'800'000'000'000;
  const std::string sig = signer.Sign(id, now + 1000);
  const std::string exp = std::to_string(now + 1000);
  EXPECT_EQ(signer.Verify(id, exp, sig, now), LinkCheck::kOk);
  EXPECT_EQ(signer.Verify(id, exp, sig, now + 1000), LinkCheck::kExpired);
  // Forged: another secret, a changed expiry, a flipped digit, another id.
  EXPECT_EQ(LinkSigner(FixedSecret(2)).Verify(id, exp, sig, now), LinkCheck::kBadSignature);
  EXPECT_EQ(signer.Verify(id, std::to_string(now + 99999), sig, now), LinkCheck::kBadSignature);
  std::string flipped = sig;
  flipped[10] = flipped[10] == 'a' ? 'b' : 'a';
  EXPECT_EQ(signer.Verify(id, exp, flipped, now), LinkCheck::kBadSignature);
  std::string other = id;
  other[0] = other[0] == '0' ? '1' : '0';
  EXPECT_EQ(signer.Verify(other, exp, sig, now), LinkCheck::kBadSignature);
  // Malformed: truncated signature, uppercase, path tricks, junk expiry.
  EXPECT_EQ(signer.Verify(id, exp, sig.substr(0, 63), now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify("../../etc/passwd", exp, sig, now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify(id, "12x", sig, now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify(id, "", sig, now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify(id, "0" + exp, sig, now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify(id, std::string(40, '9'), sig, now), LinkCheck::kMalformed);
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
}

TEST(ChunkStore, BudgetSpillsAndRemovesEverything) {
  auto pool = MemoryPool::MakeRoot({});
  LocalChunkStoreOptions o;
  o.memory_budget_bytes = 1500;
  o.link_base_url = "https://127.0.0.1:1";
  std::string dir;
  {
    auto store = LocalChunkStore::Make(o, LinkSigner(FixedSecret(3))).value();
    dir = store->spill_dir();
    std::vector<std::string> ids;
    for (int i = 0; i < 4; ++i) {
      auto b = Buffer::Allocate(pool.get(), 1000).value();
      std::memset(b->mutable_data(), 'a' + i, 1000);
      ids.push_back(store->Put(b, 0).value());
    }
    EXPECT_EQ(pool->held_bytes(), 1000) << "only the in-memory chunk stays charged";
    auto st = store->stats();
    EXPECT_EQ(st.chunks, 4);
    EXPECT_EQ(st.memory_bytes, 1000);
    EXPECT_EQ(st.spilled_chunks, 3);
    EXPECT_EQ(store->CountSpillFiles(), 3);
    for (int i = 0; i < 4; ++i) {
      auto got = store->Get(ids[i]).value();
      ASSERT_EQ(got->size(), 1000);
      EXPECT_EQ(got->data()[999], 'a' + i);
    }
    auto link = store->Link(ids[2], 1234).value();
    EXPECT_EQ(link.url, "https://127.0.0.1:1/files/" + ids[2] + "?e=1234&s=" + store->signer().Sign(ids[2], 1234));
    store->Remove(ids[0]);
    store->Remove(ids[1]);
    store->Remove(ids[1]);  // idempotent
    EXPECT_TRUE(store->Get(ids[1]).status().IsKeyError());
    EXPECT_TRUE(store->Link(ids[1], 1).status().IsKeyError());
    EXPECT_EQ(pool->held_bytes(), 0);
    EXPECT_EQ(store->CountSpillFiles(), 2);
    // Expiry.
    auto b = Buffer::Allocate(pool.get(), 10).value();
    auto id = store->Put(b, 5000).value();
    b.reset();
    EXPECT_EQ(store->RemoveExpired(4999), 0);
    EXPECT_EQ(store->RemoveExpired(5000), 1);
    EXPECT_TRUE(store->Get(id).status().IsKeyError());
  }
  EXPECT_EQ(pool->held_bytes(), 0);
  std::ifstream gone(dir);
  EXPECT_FALSE(gone.good()) << "private spill dir removed: " << dir;
}

TEST(ChunkStore, FullBudgetAndSpillLimitFailsCleanly) {
  auto pool = MemoryPool::MakeRoot({});
  LocalChunkStoreOptions o;
  o.memory_budget_bytes = 100;
  o.spill_limit_bytes = 150;
  auto store = LocalChunkStore::Make(o, LinkSigner(FixedSecret(4))).value();
  auto b = Buffer::Allocate(pool.get(), 100).value();
  ASSERT_TRUE(store->Put(b, 0).ok());
  ASSERT_TRUE(store->Put(b, 0).ok());  // spilled
  auto r = store->Put(b, 0);
  ASSERT_TRUE(r.status().IsOutOfMemory());
  EXPECT_NE(r.status().message().find("spill limit"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(store->stats().chunks, 2);
}

}  // namespace
}  // namespace quiver::fetch
