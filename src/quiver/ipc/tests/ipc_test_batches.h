// quiver/ipc/tests/ipc_test_batches.h — the hand-built batches and the
// in-memory write/read helpers shared by the IPC reader/writer tests
// (ipc_roundtrip_test.cc, ipc_compression_test.cc, ipc_stream_input_test.cc,
// ipc_failure_injection_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/compare.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::ipc {
namespace {

using quiver::testing::BoolArray;
using quiver::testing::Int32Array;
using quiver::testing::ListArray;
using quiver::testing::MakeArray;
using quiver::testing::StringArray;

struct Fixture {
  std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({});
};

inline ArrayDataPtr DictArray(MemoryPool* pool, ArrayDataPtr dict, const std::vector<std::optional<int32_t>>& idx) {
  auto indices = Int32Array(pool, idx);
  auto a = std::make_shared<ArrayData>(*indices);
  a->type = dictionary(int32(), utf8());
  a->dictionary = std::move(dict);
  return a;
}

inline SchemaPtr TestSchema() {
  auto s = std::make_shared<Schema>();
  s->fields = {field("i", int32()), field("s", utf8()), field("b", boolean()), field("l", list(field("item", int32()))),
               field("d", dictionary(int32(), utf8()), true, {}, 7)};
  s->metadata = {{"origin", "quiver-test"}};
  return s;
}

inline RecordBatchPtr TestBatch(MemoryPool* pool, int64_t rows, ArrayDataPtr dict = nullptr) {
  std::vector<std::optional<int32_t>> ints;
  std::vector<std::optional<std::string>> strs;
  std::vector<std::optional<bool>> bools;
  std::vector<int32_t> offsets{0};
  std::vector<std::optional<int32_t>> items;
  std::vector<std::optional<int32_t>> idx;
  for (int64_t r = 0; r < rows; ++r) {
    ints.push_back(r % 7 == 3 ? std::nullopt : std::optional<int32_t>(static_cast<int32_t>(r * 3)));
    strs.push_back(r % 5 == 1 ? std::nullopt : std::optional<std::string>("value-" + std::to_string(r % 13)));
    bools.push_back(r % 11 == 0 ? std::nullopt : std::optional<bool>(r % 2 == 0));
    for (int k = 0; k < r % 4; ++k) items.push_back(static_cast<int32_t>(r + k));
    offsets.push_back(static_cast<int32_t>(items.size()));
    idx.push_back(r % 9 == 4 ? std::nullopt : std::optional<int32_t>(static_cast<int32_t>(r % 2)));
  }
  if (!dict) dict = StringArray(pool, {"red", "green"});
  auto b = std::make_shared<RecordBatch>();
  b->schema = TestSchema();
  b->num_rows = rows;
  b->columns = {Int32Array(pool, ints), StringArray(pool, strs), BoolArray(pool, bools),
                ListArray(pool, Int32Array(pool, items), offsets), DictArray(pool, dict, idx)};
  return b;
}

inline Result<std::vector<uint8_t>> Write(const std::vector<RecordBatchPtr>& batches, IpcFormat format,
                                          CompressionType codec, MemoryPool* pool, int64_t max_rows = 0) {
  BufferOutputStream sink;
  WriteOptions wo;
  wo.pool = pool;
  wo.compression = codec;
  QUIVER_RETURN_NOT_OK(WriteTable(&sink, batches[0]->schema, batches, format, wo, max_rows));
  return sink.bytes();
}

/// Reads every batch of `bytes`; `keep` receives the reader (for its
/// last_batch_stats(), filled only with `collect_body_stats`).
inline Result<std::vector<RecordBatchPtr>> Read(const std::vector<uint8_t>& bytes, MemoryPool* pool,
                                                std::unique_ptr<RecordBatchReader>* keep = nullptr,
                                                bool collect_body_stats = false) {
  ReadOptions ro;
  ro.pool = pool;
  ro.collect_body_stats = collect_body_stats;
  QUIVER_ASSIGN_OR_RETURN(
      auto reader, RecordBatchReader::Open(Buffer::Unowned(bytes.data(), static_cast<int64_t>(bytes.size())), ro));
  auto batches = ReadAllBatches(reader.get());
  if (keep) *keep = std::move(reader);
  return batches;
}

// Builds a one-column int64 stream whose only data buffer is replaced by
// `region` (compressed with `codec`).
inline std::vector<uint8_t> StreamWithRegion(CompressionType codec, int64_t rows, MemoryPool* pool) {
  std::vector<std::optional<int32_t>> v(static_cast<size_t>(rows), 5);
  auto b = std::make_shared<RecordBatch>();
  auto s = std::make_shared<Schema>();
  s->fields = {field("x", int32(), false)};
  b->schema = s;
  b->num_rows = rows;
  b->columns = {Int32Array(pool, v)};
  return *Write({b}, IpcFormat::kStream, codec, pool);
}

}  // namespace
}  // namespace quiver::ipc
