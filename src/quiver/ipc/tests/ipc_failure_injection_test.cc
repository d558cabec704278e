// Failure injection at every allocation of an IPC read, a write and a batch
// unload (each codec and output policy): failures are clean OutOfMemory
// errors that release everything they made.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "quiver/ipc/tests/ipc_test_batches.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::ipc {
namespace {

class FailureInjection : public ::testing::TestWithParam<CompressionType> {};

TEST_P(FailureInjection, EveryAllocationOfAWriteCanFailCleanly) {
  auto root = MemoryPool::MakeRoot({});
  auto data_pool = root->MakeChild({"data"});
  auto batch = TestBatch(data_pool.get(), 700);
  auto sliced = *SliceBatch(batch, 3, 600);  // odd offset: compaction allocates too
  auto write_pool = root->MakeChild({"write"});
  int64_t failures = 0;
  for (int64_t n = 1; n < 10000; ++n) {
    const int64_t before = write_pool->held_bytes();
    write_pool->InjectFailureAt(n);
    auto bytes = Write({sliced, batch}, IpcFormat::kFile, GetParam(), write_pool.get());
    write_pool->InjectFailureAt(0);
    EXPECT_EQ(write_pool->held_bytes(), before) << "after failing allocation " << n;
    if (bytes.ok()) break;
    EXPECT_TRUE(bytes.status().IsOutOfMemory()) << bytes.status().ToString();
    ++failures;
  }
  EXPECT_GT(failures, 3);
  EXPECT_EQ(write_pool->held_bytes(), 0);
}

TEST_P(FailureInjection, EveryAllocationOfAReadCanFailCleanly) {
  auto root = MemoryPool::MakeRoot({});
  auto data_pool = root->MakeChild({"data"});
  auto batch = TestBatch(data_pool.get(), 700);
  auto bytes = Write({batch, batch}, IpcFormat::kStream, GetParam(), data_pool.get());
  ASSERT_OK(bytes);
  auto read_pool = root->MakeChild({"read"});
  int64_t failures = 0;
  for (int64_t n = 1; n < 10000; ++n) {
    read_pool->InjectFailureAt(n);
    bool ok;
    {
      auto back = Read(*bytes, read_pool.get());
      ok = back.ok();
      if (!ok) {
        EXPECT_TRUE(back.status().IsOutOfMemory()) << back.status().ToString();
      }
    }
    read_pool->InjectFailureAt(0);
    EXPECT_EQ(read_pool->held_bytes(), 0) << "after failing allocation " << n;
    if (ok) break;
    ++failures;
  }
  if (GetParam() != CompressionType::kNone) {
    EXPECT_GT(failures, 3);
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, FailureInjection,
                         ::testing::Values(CompressionType::kNone, CompressionType::kLz4Frame, CompressionType::kZstd));

// Failure injection at every allocation index of unloading a multi-column,
// multi-buffer batch, under each output policy: a failed unload releases
// every buffer it made (held returns to its value before the call); a
// successful one holds its outputs until released.
class UnloadPolicies : public ::testing::TestWithParam<OutputPolicy> {};

TEST_P(UnloadPolicies, EveryAllocationIndexFailsCleanly) {
  auto root = MemoryPool::MakeRoot({});
  auto data = root->MakeChild({"data"});
  auto batch = *SliceBatch(TestBatch(data.get(), 5000), 1, 4000);  // odd offset: compaction allocates too
  auto outputs = root->MakeChild({"outputs", -1, RoundingPolicy::kPowerOfTwo});
  BodyCompressionOptions o;
  o.codec = CompressionType::kZstd;
  o.output_policy = GetParam();
  auto compressor = *BufferCompressor::Make(o, outputs.get());
  int64_t failures = 0;
  for (int64_t n = 1; n < 10000; ++n) {
    compressor->ReleaseScratch();
    const int64_t before = outputs->held_bytes();
    outputs->InjectFailureAt(n);
    auto u = BatchUnloader(outputs.get(), compressor.get()).Unload(*batch);
    outputs->InjectFailureAt(0);
    if (u.ok()) {
      EXPECT_GT(u->held_bytes(), 0);
      u = Status::Cancelled("released");
      compressor->ReleaseScratch();
      EXPECT_EQ(outputs->held_bytes(), 0);
      break;
    }
    EXPECT_TRUE(u.status().IsOutOfMemory()) << u.status().ToString();
    compressor->ReleaseScratch();
    EXPECT_EQ(outputs->held_bytes(), before) << "after failing allocation " << n;
    ++failures;
  }
  EXPECT_GT(failures, 5);
}

TEST_P(UnloadPolicies, SerializedBytesDoNotDependOnThePolicy) {
  auto pool = MemoryPool::MakeRoot({});
  auto batch = TestBatch(pool.get(), 3000);
  WriteOptions wo;
  wo.pool = pool.get();
  wo.compression = CompressionType::kZstd;
  BufferOutputStream a, b;
  wo.output_policy = OutputPolicy::kKeep;
  ASSERT_OK(WriteTable(&a, batch->schema, {batch}, IpcFormat::kStream, wo));
  wo.output_policy = GetParam();
  ASSERT_OK(WriteTable(&b, batch->schema, {batch}, IpcFormat::kStream, wo));
  EXPECT_EQ(a.bytes(), b.bytes());
}

INSTANTIATE_TEST_SUITE_P(All, UnloadPolicies,
                         ::testing::Values(OutputPolicy::kKeep, OutputPolicy::kShrinkIfHalves, OutputPolicy::kExact),
                         [](const auto& info) {
                           std::string n(OutputPolicyName(info.param));
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

}  // namespace
}  // namespace quiver::ipc
