// ChunkDecoder tests: every policy, LZ4 and raw, fed whole and byte-split;
// sizing from bytesNum / content size / nothing (mremap growth, tail
// give-back); integrity errors (bytesNum, truncated, corrupt checksum, ratio
// bombs); a very compressible body under a pool limit; the pool back to
// baseline after every case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "quiver/fetch/chunk_decoder.h"
#include "quiver/fetch/tests/chunk_fixtures.h"
#include "quiver/ipc/reader.h"
#include "quiver/testing/shared_data.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::fetch {
namespace {

using testing::IpcStream;
using testing::Lz4Frame;
using testing::SameRows;
using testing::SeqBatches;

struct Body {
  std::vector<RecordBatchPtr> batches;
  std::string raw;
};

Body MakeBody(MemoryPool* pool, int64_t rows, int64_t per_batch) {
  Body b;
  b.batches = SeqBatches(pool, 0, rows, per_batch);
  b.raw = IpcStream(pool, b.batches[0]->schema, b.batches);
  return b;
}

std::vector<RecordBatchPtr> ReadAll(const std::shared_ptr<Buffer>& buf, MemoryPool* pool) {
  ipc::ReadOptions ro;
  ro.pool = pool;
  auto r = ipc::RecordBatchReader::Open(buf, ro);
  EXPECT_OK(r);
  if (!r.ok()) return {};
  auto all = ipc::ReadAllBatches(r->get());
  EXPECT_OK(all);
  return all.ok() ? *all : std::vector<RecordBatchPtr>{};
}

const ChunkPolicy kPolicies[] = {ChunkPolicy::kHeap, ChunkPolicy::kMmapAfter, ChunkPolicy::kStreamMmap};

class PolicyTest : public ::testing::TestWithParam<std::tuple<ChunkPolicy, bool, int>> {};

// Every policy x {lz4, raw} x {whole, 1-byte, 4099-byte pieces}, bytesNum
// exact: the rows equal the source, the buffer is exactly the IPC size, the
// pool is back to baseline once the batches are dropped.
TEST_P(PolicyTest, RoundTripEqualsSource) {
  auto [policy, lz4, piece] = GetParam();
  auto src_pool = MemoryPool::MakeRoot({});
  Body body = MakeBody(src_pool.get(), 20000, 3000);
  const std::string wire = lz4 ? Lz4Frame(body.raw) : body.raw;
  auto pool = MemoryPool::MakeRoot({});
  {
    ChunkDecoderOptions o;
    o.pool = pool.get();
    o.policy = policy;
    o.lz4 = lz4;
    o.expected_bytes = static_cast<int64_t>(body.raw.size());
    o.bytes_num_is_exact = true;
    o.compressed_length = static_cast<int64_t>(wire.size());
    auto d = ChunkDecoder::Make(o);
    ASSERT_OK(d);
    const size_t step = piece == 0 ? wire.size() : static_cast<size_t>(piece);
    for (size_t i = 0; i < wire.size(); i += step) {
      auto part =
          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(wire.data()) + i, std::min(step, wire.size() - i));
      ASSERT_OK((*d)->Consume(part));
    }
    EXPECT_EQ((*d)->received_bytes(), static_cast<int64_t>(wire.size()));
    auto buf = (*d)->Finish();
    ASSERT_OK(buf);
    EXPECT_EQ((*buf)->size(), static_cast<int64_t>(body.raw.size()));
    EXPECT_EQ(0, std::memcmp((*buf)->data(), body.raw.data(), body.raw.size()));
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*buf)->data()) % 64, 0u);
    if (policy != ChunkPolicy::kHeap) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>((*buf)->data()) % 4096, 0u) << "a mapping is page aligned";
    }
    d->reset();  // the decoder's LZ4F scratch goes back with it
    auto got = ReadAll(*buf, pool.get());
    ASSERT_OK(SameRows(body.batches, got));
    // The pool holds the chunk (rounded to pages for mappings) while the batches live.
    EXPECT_GE(pool->held_bytes(), static_cast<int64_t>(body.raw.size()));
    EXPECT_LE(pool->held_bytes(), static_cast<int64_t>(body.raw.size()) + 4096);
  }
  EXPECT_EQ(pool->held_bytes(), 0);
}

INSTANTIATE_TEST_SUITE_P(All, PolicyTest,
                         ::testing::Combine(::testing::ValuesIn(kPolicies), ::testing::Bool(),
                                            ::testing::Values(0, 1, 4099)));

TEST(ChunkDecoder, PolicyNames) {
  for (ChunkPolicy p : kPolicies) {
    auto r = ParseChunkPolicy(ChunkPolicyName(p));
    ASSERT_OK(r);
    EXPECT_EQ(*r, p);
  }
  auto bad = ParseChunkPolicy("mmap");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("stream-mmap"), std::string::npos);
}

// No content size and no bytesNum: grown with mremap, then the tail is given
// back; the result is exactly the stream.
TEST(ChunkDecoder, NoSizeHintGrowsAndTrims) {
  auto pool = MemoryPool::MakeRoot({});
  Body body = MakeBody(pool.get(), 300000, 50000);  // ~2.4 MB IPC
  const std::string wire = Lz4Frame(body.raw, /*content_size=*/false);
  const MappingStats before = GetMappingStats();
  {
    ChunkDecoderOptions o;
    o.pool = pool.get();
    o.expected_bytes = -1;
    auto d = ChunkDecoder::Make(o);
    ASSERT_OK(d);
    for (size_t i = 0; i < wire.size(); i += 10000) {
      ASSERT_TRUE(
          (*d)->Consume({reinterpret_cast<const uint8_t*>(wire.data()) + i, std::min<size_t>(10000, wire.size() - i)})
              .ok());
    }
    auto buf = (*d)->Finish();
    ASSERT_OK(buf);
    EXPECT_EQ((*buf)->size(), static_cast<int64_t>(body.raw.size()));
    EXPECT_EQ((*buf)->capacity_bytes(), (static_cast<int64_t>(body.raw.size()) + 4095) / 4096 * 4096);
    EXPECT_FALSE((*d)->used_heap_fallback());
    const MappingStats after = GetMappingStats();
    EXPECT_GT(after.mremap_grows, before.mremap_grows);
    EXPECT_GT(after.tail_trims, before.tail_trims);
    EXPECT_OK(SameRows(body.batches, ReadAll(*buf, pool.get())));
  }
  // Only the source batches remain.
  std::vector<RecordBatchPtr>().swap(body.batches);
  EXPECT_EQ(pool->held_bytes(), 0);
}

// bytesNum as a loose hint (the REST API's compressed byte_count): a too
// small hint grows, a too large one is trimmed.
TEST(ChunkDecoder, LooseHintTooSmallAndTooLarge) {
  auto pool = MemoryPool::MakeRoot({});
  Body body = MakeBody(pool.get(), 50000, 10000);
  for (int64_t hint : {int64_t{100}, static_cast<int64_t>(body.raw.size()) * 3}) {
    for (bool content : {false, true}) {
      ChunkDecoderOptions o;
      o.pool = pool.get();
      o.expected_bytes = hint;
      o.bytes_num_is_exact = false;
      const std::string wire = Lz4Frame(body.raw, content);
      auto buf = DecodeChunk({reinterpret_cast<const uint8_t*>(wire.data()), wire.size()}, o);
      ASSERT_OK(buf) << hint;
      EXPECT_EQ((*buf)->size(), static_cast<int64_t>(body.raw.size()));
      EXPECT_EQ(0, std::memcmp((*buf)->data(), body.raw.data(), body.raw.size()));
    }
  }
}

// bytesNum is a hint by default (issue 21): the compressed size, 0, too
// small or too large, with and without content size, one or several frames:
// the output is exactly the stream, in a mapping of its size (pages).
TEST(ChunkDecoder, HintIsTheDefault) {
  auto pool = MemoryPool::MakeRoot({});
  Body body = MakeBody(pool.get(), 60000, 9000);
  const int64_t n = static_cast<int64_t>(body.raw.size());
  for (int frames : {1, 4}) {
    for (bool content : {true, false}) {
      std::string wire;
      const size_t piece = body.raw.size() / static_cast<size_t>(frames) + 1;
      for (size_t at = 0; at < body.raw.size(); at += piece) wire += Lz4Frame(body.raw.substr(at, piece), content);
      const int64_t w = static_cast<int64_t>(wire.size());
      for (int64_t hint : {w, int64_t{0}, n / 7, n * 5}) {
        for (ChunkPolicy p : kPolicies) {
          SCOPED_TRACE("frames " + std::to_string(frames) + " content " + std::to_string(content) + " hint " +
                       std::to_string(hint) + " " + std::string(ChunkPolicyName(p)));
          ChunkDecoderOptions o;
          o.pool = pool.get();
          o.policy = p;
          o.expected_bytes = hint;
          auto d = ChunkDecoder::Make(o);
          ASSERT_OK(d);
          for (size_t i = 0; i < wire.size(); i += 5000) {
            ASSERT_OK((*d)->Consume(
                {reinterpret_cast<const uint8_t*>(wire.data()) + i, std::min<size_t>(5000, wire.size() - i)}));
          }
          auto buf = (*d)->Finish();
          ASSERT_OK(buf);
          EXPECT_EQ((*buf)->size(), n);
          EXPECT_EQ(0, std::memcmp((*buf)->data(), body.raw.data(), body.raw.size()));
          if (p != ChunkPolicy::kHeap && !(*d)->used_heap_fallback()) {
            EXPECT_EQ((*buf)->capacity_bytes(), (n + 4095) / 4096 * 4096) << "tail given back";
          }
        }
      }
    }
  }
}

// A hint the pool cannot grant (or beyond max_decompressed_bytes) is not an
// error: the decoder starts small and grows with the data.
TEST(ChunkDecoder, HintTooLargeForThePoolStartsSmall) {
  auto src = MemoryPool::MakeRoot({});
  Body body = MakeBody(src.get(), 50000, 10000);
  const std::string wire = Lz4Frame(body.raw, /*content_size=*/false);
  for (int64_t hint : {int64_t{1} << 30, int64_t{64} << 30}) {
    MemoryPoolOptions po;
    po.limit_bytes = int64_t{8} << 20;
    auto pool = MemoryPool::MakeRoot(po);
    ChunkDecoderOptions o;
    o.pool = pool.get();
    o.expected_bytes = hint;
    auto buf = DecodeChunk({reinterpret_cast<const uint8_t*>(wire.data()), wire.size()}, o);
    ASSERT_OK(buf) << hint;
    EXPECT_EQ((*buf)->size(), static_cast<int64_t>(body.raw.size()));
    EXPECT_EQ(0, std::memcmp((*buf)->data(), body.raw.data(), body.raw.size()));
  }
}

// Several concatenated frames (and a skippable frame) make one body.
TEST(ChunkDecoder, ConcatenatedFrames) {
  auto pool = MemoryPool::MakeRoot({});
  Body body = MakeBody(pool.get(), 40000, 7000);
  const size_t cut = body.raw.size() / 3;
  std::string wire = Lz4Frame(body.raw.substr(0, cut)) + Lz4Frame(body.raw.substr(cut, cut), false);
  // Skippable frame: magic 0x184D2A50, 4-byte length, payload.
  const uint8_t skip[] = {0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'};
  wire.append(reinterpret_cast<const char*>(skip), sizeof skip);
  wire += Lz4Frame(body.raw.substr(2 * cut), true, false);
  for (ChunkPolicy p : kPolicies) {
    ChunkDecoderOptions o;
    o.pool = pool.get();
    o.policy = p;
    o.expected_bytes = static_cast<int64_t>(body.raw.size());
    auto d = ChunkDecoder::Make(o);
    ASSERT_OK(d);
    for (size_t i = 0; i < wire.size(); i += 777) {
      ASSERT_OK(
          (*d)->Consume({reinterpret_cast<const uint8_t*>(wire.data()) + i, std::min<size_t>(777, wire.size() - i)}));
    }
    auto buf = (*d)->Finish();
    ASSERT_OK(buf) << ChunkPolicyName(p);
    EXPECT_OK(SameRows(body.batches, ReadAll(*buf, pool.get())));
  }
}

Status DecodeErr(const std::string& wire, int64_t expected, int64_t compressed_length, ChunkPolicy p, MemoryPool* pool,
                 bool lz4 = true, bool verify_checksums = true) {
  ChunkDecoderOptions o;
  o.verify_lz4_checksums = verify_checksums;
  o.pool = pool;
  o.policy = p;
  o.lz4 = lz4;
  o.expected_bytes = expected;
  o.bytes_num_is_exact = true;
  o.compressed_length = compressed_length;
  o.chunk_label = "chunk 7 (rows 700..799)";
  auto d = ChunkDecoder::Make(o);
  if (!d.ok()) return d.status();
  Status st = (*d)->Consume({reinterpret_cast<const uint8_t*>(wire.data()), wire.size()});
  if (!st.ok()) return st;
  auto r = (*d)->Finish();
  return r.status();
}

TEST(ChunkDecoder, IntegrityErrorsNameTheChunk) {
  auto src = MemoryPool::MakeRoot({});
  Body body = MakeBody(src.get(), 30000, 10000);
  const std::string wire = Lz4Frame(body.raw);
  const int64_t n = static_cast<int64_t>(body.raw.size());
  const int64_t w = static_cast<int64_t>(wire.size());
  auto pool = MemoryPool::MakeRoot({});
  for (ChunkPolicy p : kPolicies) {
    SCOPED_TRACE(std::string(ChunkPolicyName(p)));
    // Wrong bytesNum, smaller and larger than the truth (content size present).
    Status st = DecodeErr(wire, n - 10, w, p, pool.get());
    EXPECT_TRUE(st.IsInvalid()) << st.ToString();
    EXPECT_NE(st.message().find("chunk 7 (rows 700..799)"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("bytesNum"), std::string::npos) << st.ToString();
    st = DecodeErr(wire, n + 10, w, p, pool.get());
    EXPECT_NE(st.message().find("expected " + std::to_string(n + 10) + " bytes, actual " + std::to_string(n)),
              std::string::npos)
        << st.ToString();
    // Wrong bytesNum without content size: caught while decoding / at the end.
    const std::string nocs = Lz4Frame(body.raw, false);
    st = DecodeErr(nocs, n - 10, static_cast<int64_t>(nocs.size()), p, pool.get());
    EXPECT_NE(st.message().find("exceeds bytesNum"), std::string::npos) << st.ToString();
    st = DecodeErr(nocs, n + 10, static_cast<int64_t>(nocs.size()), p, pool.get());
    EXPECT_NE(st.message().find("differs from bytesNum"), std::string::npos) << st.ToString();
    // Truncated body (Content-Length unknown): frame cut.
    st = DecodeErr(wire.substr(0, wire.size() / 2), n, -1, p, pool.get());
    EXPECT_NE(st.message().find("truncated LZ4 frame"), std::string::npos) << st.ToString();
    // Truncated body with Content-Length known.
    st = DecodeErr(wire.substr(0, wire.size() - 3), n, w, p, pool.get());
    EXPECT_NE(st.message().find("body cut short: expected " + std::to_string(w) + " bytes, actual " +
                                std::to_string(w - 3) + " bytes"),
              std::string::npos)
        << st.ToString();
    // Corrupt content checksum (last 4 bytes of the frame).
    std::string bad = wire;
    bad[bad.size() - 1] ^= 0x55;
    st = DecodeErr(bad, n, w, p, pool.get());
    EXPECT_TRUE(st.IsInvalid());
    EXPECT_NE(st.message().find("corrupt LZ4 data"), std::string::npos) << st.ToString();
    // Checksums skipped (bodies received over TLS): the same bytes decode.
    EXPECT_OK(DecodeErr(bad, n, w, p, pool.get(), true, /*verify_checksums=*/false));
    // Not LZ4 at all.
    st = DecodeErr(body.raw, n, n, p, pool.get());
    EXPECT_NE(st.message().find("not an LZ4 frame"), std::string::npos) << st.ToString();
    // bytesNum larger than the compressed bytes can produce: refused before mapping.
    st = DecodeErr(wire, w * 1000, w, p, pool.get());
    EXPECT_NE(st.message().find("can produce"), std::string::npos) << st.ToString();
    // Raw body longer than bytesNum.
    st = DecodeErr(body.raw, n - 1, n, p, pool.get(), false);
    EXPECT_TRUE(st.IsInvalid()) << st.ToString();
    EXPECT_EQ(pool->held_bytes(), 0);
  }
}

// A frame header claiming a huge content size from a few bytes of data is
// refused before any memory is taken.
TEST(ChunkDecoder, ContentSizeBombRefused) {
  std::string raw(1000, 'x');
  std::string wire = Lz4Frame(raw, true, false);
  // Patch the 8-byte content size field (after magic, FLG, BD) to 2^40.
  uint64_t huge = uint64_t{1} << 40;
  std::memcpy(&wire[6], &huge, 8);
  // The header checksum byte (HC) now mismatches: LZ4F rejects the header.
  auto pool = MemoryPool::MakeRoot({});
  Status st = DecodeErr(wire, -1, -1, ChunkPolicy::kStreamMmap, pool.get());
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_LE(pool->peak_bytes(), 1024) << "only the LZ4F context (~350 bytes) was ever charged";
}

// 64 MiB of one repeated batch compresses to well under 1 MiB; under a pool
// limit smaller than the output the decode fails with OutOfMemory and gives
// everything back; with enough limit the stream-mmap peak is the output
// size alone (the compressed body is never held).
TEST(ChunkDecoder, VeryCompressibleUnderLimit) {
  const int64_t n = int64_t{64} << 20;
  std::string raw(static_cast<size_t>(n), '\0');
  for (size_t i = 0; i < raw.size(); i += 4096) raw[i] = static_cast<char>(i / 4096);
  const std::string wire = Lz4Frame(raw, true, true, LZ4F_max4MB);
  ASSERT_LT(wire.size(), size_t{1} << 20);
  {
    MemoryPoolOptions po;
    po.limit_bytes = int64_t{16} << 20;
    auto pool = MemoryPool::MakeRoot(po);
    ChunkDecoderOptions o;
    o.pool = pool.get();
    o.expected_bytes = n;
    auto d = ChunkDecoder::Make(o);
    ASSERT_OK(d);
    Status st = (*d)->Consume({reinterpret_cast<const uint8_t*>(wire.data()), wire.size()});
    EXPECT_TRUE(st.IsOutOfMemory()) << st.ToString();
    EXPECT_EQ(pool->held_bytes(), 0);
  }
  {
    MemoryPoolOptions po;
    po.limit_bytes = n + (int64_t{10} << 20);
    auto pool = MemoryPool::MakeRoot(po);
    ChunkDecoderOptions o;
    o.pool = pool.get();
    o.expected_bytes = n;
    o.compressed_length = static_cast<int64_t>(wire.size());
    auto d = ChunkDecoder::Make(o);
    ASSERT_OK(d);
    for (size_t i = 0; i < wire.size(); i += 16384) {
      ASSERT_OK(
          (*d)->Consume({reinterpret_cast<const uint8_t*>(wire.data()) + i, std::min<size_t>(16384, wire.size() - i)}));
    }
    auto buf = (*d)->Finish();
    ASSERT_OK(buf);
    // The output plus LZ4F's two 4 MiB block buffers (charged, mapped).
    EXPECT_GE(pool->peak_bytes(), n);
    EXPECT_LE(pool->peak_bytes(), n + (int64_t{9} << 20));
    EXPECT_EQ(0, std::memcmp((*buf)->data(), raw.data(), raw.size()));
    buf = Status::Cancelled("drop");
    d->reset();
    EXPECT_EQ(pool->held_bytes(), 0);
  }
}

// Decoders sharing an Lz4ContextCache: a successful Finish gives the context
// (with LZ4F's block buffers, still charged) back, the next decoder of the
// same pool takes it (no new scratch), another pool's decoder does not, a
// failed decoder frees its own, and Clear() hands everything back. The rows
// are right every time.
TEST(ChunkDecoder, ContextCacheReusesLz4BuffersAcrossChunks) {
  auto src_pool = MemoryPool::MakeRoot({});
  Body body = MakeBody(src_pool.get(), 20000, 3000);
  const std::string wire = Lz4Frame(body.raw, true, true, LZ4F_max1MB);
  auto pool = MemoryPool::MakeRoot({});
  auto cache = std::make_shared<Lz4ContextCache>(2);
  auto decode = [&](MemoryPool* p, const std::string& bytes) {
    ChunkDecoderOptions o;
    o.pool = p;
    o.lz4_contexts = cache;
    o.compressed_length = static_cast<int64_t>(bytes.size());
    auto d = ChunkDecoder::Make(o);
    EXPECT_OK(d);
    // 16 KiB pieces, as curl hands them: every block goes through LZ4F's buffer.
    for (size_t i = 0; i < bytes.size(); i += 16384) {
      Status st = (*d)->Consume(
          {reinterpret_cast<const uint8_t*>(bytes.data()) + i, std::min<size_t>(16384, bytes.size() - i)});
      if (!st.ok()) return Result<std::shared_ptr<Buffer>>(st);
    }
    return (*d)->Finish();
  };
  ASSERT_OK_AND_ASSIGN(auto first, decode(pool.get(), wire));
  EXPECT_OK(SameRows(ReadAll(first, pool.get()), body.batches));
  EXPECT_EQ(cache->kept(), 1);
  first.reset();
  const int64_t scratch = pool->held_bytes();
  EXPECT_GT(scratch, int64_t{256} << 10) << "LZ4F's block buffer stays with the kept context";

  const int64_t peak_before = pool->peak_bytes();
  ASSERT_OK_AND_ASSIGN(auto second, decode(pool.get(), wire));
  EXPECT_OK(SameRows(ReadAll(second, pool.get()), body.batches));
  EXPECT_EQ(cache->kept(), 1);
  EXPECT_EQ(pool->peak_bytes(), peak_before) << "the second chunk made no new scratch";
  second.reset();
  EXPECT_EQ(pool->held_bytes(), scratch);

  auto other = MemoryPool::MakeRoot({});
  ASSERT_OK_AND_ASSIGN(auto third, decode(other.get(), wire));
  EXPECT_EQ(cache->kept(), 2) << "another pool's decoder made its own context";
  third.reset();

  std::string corrupt = wire;
  corrupt[corrupt.size() / 2] = static_cast<char>(corrupt[corrupt.size() / 2] ^ 0x5a);
  EXPECT_FALSE(decode(pool.get(), corrupt).ok());
  EXPECT_EQ(cache->kept(), 1) << "a failed decoder freed the context it took";
  EXPECT_EQ(pool->held_bytes(), 0);

  cache->Clear();
  EXPECT_EQ(cache->kept(), 0);
  EXPECT_EQ(other->held_bytes(), 0);
}

// Past the live-mapping limit, chunks fall back to the heap (and still decode).
TEST(ChunkDecoder, MapCountLimitFallsBackToHeap) {
  auto pool = MemoryPool::MakeRoot({});
  Body body = MakeBody(pool.get(), 1000, 1000);
  const std::string wire = Lz4Frame(body.raw);
  std::vector<std::shared_ptr<Buffer>> live;
  const int64_t base = GetMappingStats().live_mappings;
  for (int i = 0; i < 6; ++i) {
    ChunkDecoderOptions o;
    o.pool = pool.get();
    o.expected_bytes = static_cast<int64_t>(body.raw.size());
    o.max_live_mappings = base + 3;
    auto d = ChunkDecoder::Make(o);
    ASSERT_OK(d);
    ASSERT_OK((*d)->Consume({reinterpret_cast<const uint8_t*>(wire.data()), wire.size()}));
    auto buf = (*d)->Finish();
    ASSERT_OK(buf);
    EXPECT_EQ((*d)->used_heap_fallback(), i >= 3) << i;
    live.push_back(*buf);
  }
  EXPECT_EQ(GetMappingStats().live_mappings, base + 3);
  live.clear();
  EXPECT_EQ(GetMappingStats().live_mappings, base);
  EXPECT_GT(SystemMaxMapCount(), 0);
}

// Reset drops a partial body (a retry restarting the chunk).
TEST(ChunkDecoder, ResetDropsPartialBody) {
  auto pool = MemoryPool::MakeRoot({});
  Body body = MakeBody(pool.get(), 10000, 10000);
  const std::string wire = Lz4Frame(body.raw);
  const int64_t base = pool->held_bytes();
  ChunkDecoderOptions o;
  o.pool = pool.get();
  o.expected_bytes = static_cast<int64_t>(body.raw.size());
  auto d = ChunkDecoder::Make(o);
  ASSERT_OK(d);
  ASSERT_OK((*d)->Consume({reinterpret_cast<const uint8_t*>(wire.data()), wire.size() / 2}));
  EXPECT_GT(pool->held_bytes(), base);
  (*d)->Reset();
  EXPECT_LE(pool->held_bytes(), base + 1024) << "only a fresh LZ4F context";
  ASSERT_OK((*d)->Consume({reinterpret_cast<const uint8_t*>(wire.data()), wire.size()}));
  auto buf = (*d)->Finish();
  ASSERT_OK(buf);
  EXPECT_OK(SameRows(body.batches, ReadAll(*buf, pool.get())));
}

}  // namespace
}  // namespace quiver::fetch

namespace quiver::fetch {
namespace {

// The fuzz corpus (fuzz/corpus/chunk_decode) decodes with the options its
// first byte selects, to batches that read back (what the fuzz target does).
TEST(ChunkDecoder, FuzzCorpusDecodes) {
  const std::string dir = (::quiver::testing::SourceDir() / "fuzz" / "corpus" / "chunk_decode").string();
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ASSERT_GE(bytes.size(), 5u);
    const uint8_t flags = static_cast<uint8_t>(bytes[0]);
    uint32_t hint = 0;
    std::memcpy(&hint, bytes.data() + 1, 4);
    auto pool = MemoryPool::MakeRoot({});
    ChunkDecoderOptions o;
    o.pool = pool.get();
    o.lz4 = (flags & 1) == 0;
    o.policy = static_cast<ChunkPolicy>((flags >> 1) % 3);
    o.bytes_num_is_exact = (flags & 8) == 0;
    o.expected_bytes = (flags & 16) ? -1 : static_cast<int64_t>(hint);
    auto body = DecodeChunk({reinterpret_cast<const uint8_t*>(bytes.data()) + 5, bytes.size() - 5}, o);
    ASSERT_OK(body) << entry.path();
    EXPECT_FALSE(ReadAll(*body, pool.get()).empty()) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 8);
}

}  // namespace
}  // namespace quiver::fetch
