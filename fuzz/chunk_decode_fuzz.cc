// libFuzzer target: arbitrary bytes as one CloudFetch chunk body (an LZ4
// frame sequence or a raw Arrow IPC stream) through the streaming
// ChunkDecoder, then the IPC reader zero-copy over its output, under a
// 256 MiB pool with full validation. The first input byte picks the options
// (LZ4 or raw, policy, whether bytesNum is exact, the feeding piece size);
// the next four give bytesNum. A crash, hang, leak or runaway allocation is a
// bug; an error Status is the right answer for bad input. Every byte charged
// must be back when the output is dropped.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "quiver/columnar/validate.h"
#include "quiver/fetch/chunk_decoder.h"
#include "quiver/ipc/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quiver;
  if (size < 5) return 0;
  const uint8_t flags = data[0];
  uint32_t hint = 0;
  std::memcpy(&hint, data + 1, 4);
  data += 5;
  size -= 5;
  auto pool = MemoryPool::MakeRoot({"fuzz", int64_t{256} << 20});
  {
    fetch::ChunkDecoderOptions o;
    o.pool = pool.get();
    o.lz4 = (flags & 1) == 0;
    o.policy = static_cast<fetch::ChunkPolicy>((flags >> 1) % 3);
    o.bytes_num_is_exact = (flags & 8) == 0;
    o.expected_bytes = (flags & 16) ? -1 : static_cast<int64_t>(hint % (64u << 20));
    o.compressed_length = (flags & 32) ? -1 : static_cast<int64_t>(size);
    o.max_decompressed_bytes = int64_t{128} << 20;
    const size_t piece = (flags & 64) ? 1 + (hint % 4096) : size;
    auto decoder = fetch::ChunkDecoder::Make(o);
    if (decoder.ok()) {
      bool ok = true;
      for (size_t i = 0; i < size && ok; i += piece) {
        const size_t n = piece < size - i ? piece : size - i;
        ok = (*decoder)->Consume({data + i, n}).ok();
      }
      if (ok) {
        auto body = (*decoder)->Finish();
        if (body.ok()) {
          if (o.bytes_num_is_exact && o.expected_bytes > 0 && (*body)->size() != o.expected_bytes) __builtin_trap();
          ipc::ReadOptions ro;
          ro.pool = pool.get();
          auto reader = ipc::RecordBatchReader::Open(*body, ro);
          if (reader.ok()) {
            while (true) {
              auto batch = (*reader)->Next();
              if (!batch.ok() || *batch == nullptr) break;
              if (!ValidateBatch(**batch, ValidationLevel::kFull).ok()) __builtin_trap();
            }
          }
        }
      }
    }
  }
  if (pool->held_bytes() != 0) __builtin_trap();  // everything released
  return 0;
}
