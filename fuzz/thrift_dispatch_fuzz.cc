// libFuzzer target: any bytes as the body of a Thrift RPC (POST to the
// warehouse path) dispatched by the result service, with a small in-memory
// table behind it. A crash, hang or leak is a bug; an Invalid status (HTTP
// 400) or an ERROR / INVALID_HANDLE reply is the right answer for bad input.
// Corpus: fuzz/corpus/thrift_dispatch (valid calls of every RPC).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "quiver/fetch/chunk_store.h"
#include "quiver/server/catalog_results.h"
#include "quiver/server/result_service.h"

namespace {

using namespace quiver;

// Answers every statement with 1000 rows of one int64 column.
class FixedExecutor : public server::StatementExecutor {
 public:
  explicit FixedExecutor(MemoryPool* pool) {
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("x", int64(), false)};
    schema_ = schema;
    auto data = Buffer::Allocate(pool, 8000).value();
    for (int i = 0; i < 1000; ++i) reinterpret_cast<int64_t*>(data->mutable_data())[i] = i;
    auto a = std::make_shared<ArrayData>();
    a->type = int64();
    a->length = 1000;
    a->buffers = {nullptr, data};
    auto b = std::make_shared<RecordBatch>();
    b->schema = schema;
    b->num_rows = 1000;
    b->columns = {a};
    batch_ = b;
  }
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement, const std::atomic<bool>*,
                                                     MemoryPool*) override {
    if (statement.find("fail") != std::string_view::npos) return Status::NotImplemented("fuzz: 'fail' statement");
    return std::unique_ptr<RecordBatchStream>(new server::BatchVectorStream(schema_, {batch_}));
  }
  std::vector<server::TableInfo> ListTables() const override { return {{"t", schema_}}; }

 private:
  SchemaPtr schema_;
  RecordBatchPtr batch_;
};

struct World {
  std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({"fuzz", int64_t{512} << 20});
  std::unique_ptr<FixedExecutor> executor = std::make_unique<FixedExecutor>(pool.get());
  std::unique_ptr<fetch::LocalChunkStore> store;
  std::unique_ptr<server::ResultService> service;
  World() {
    fetch::LocalChunkStoreOptions so;
    so.memory_budget_bytes = 64 << 20;
    so.spill_limit_bytes = 0;
    so.link_base_url = "https://127.0.0.1:1";
    store = fetch::LocalChunkStore::Make(so, fetch::LinkSigner::MakeRandom().value()).value();
    server::ResultServiceOptions o;
    o.pool = pool.get();
    o.executor = executor.get();
    o.store = store.get();
    o.chunk_bytes = 4096;
    o.max_sessions = 8;
    o.max_operations = 16;
    o.max_message_bytes = 1 << 20;
    o.fetch_wait_ms = 50;
    service = server::ResultService::Make(o).value();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World();
  const int64_t thrift_before = world->service->thrift_pool()->held_bytes();
  auto reply = world->service->Dispatch(std::span<const uint8_t>(data, size));
  (void)reply;
  if (world->service->thrift_pool()->held_bytes() != thrift_before) __builtin_trap();  // request bytes released
  // Bound the state the fuzzer can build up: expire everything now and then.
  static int calls = 0;
  if (++calls % 64 == 0) world->service->ExpireIdle(INT64_MAX / 2);
  return 0;
}
