// libFuzzer target: any bytes as an Arrow IPC stream or file (format detected
// from content), read under a 256 MiB pool with full validation, twice: from
// memory (RecordBatchReader::Open, zero-copy slices) and sequentially
// (OpenStream, the stream reader that grows buffers as bytes arrive). Every
// batch that comes back is validated again. A crash, hang, leak or runaway
// allocation is a bug; an error Status is the right answer for bad input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "quiver/columnar/validate.h"
#include "quiver/ipc/reader.h"

namespace {

/// The input as a sequential source, in reads of at most 4093 bytes (so
/// messages straddle reads).
class FuzzInput : public quiver::ipc::InputStream {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  quiver::Result<int64_t> Read(std::span<uint8_t> out) override {
    const size_t n = std::min({out.size(), size_ - pos_, size_t{4093}});
    if (n > 0) std::memcpy(out.data(), data_ + pos_, n);
    pos_ += n;
    return static_cast<int64_t>(n);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void ReadAll(quiver::Result<std::unique_ptr<quiver::ipc::RecordBatchReader>> reader) {
  if (!reader.ok()) return;
  while (true) {
    auto batch = (*reader)->Next();
    if (!batch.ok() || *batch == nullptr) break;
    if (!quiver::ValidateBatch(**batch, quiver::ValidationLevel::kFull).ok()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quiver;
  auto pool = MemoryPool::MakeRoot({"fuzz", int64_t{256} << 20});
  {
    ipc::ReadOptions ro;
    ro.pool = pool.get();
    ReadAll(ipc::RecordBatchReader::Open(Buffer::Unowned(data, static_cast<int64_t>(size)), ro));
    ReadAll(ipc::RecordBatchReader::OpenStream(std::make_unique<FuzzInput>(data, size), ro));
  }
  if (pool->held_bytes() != 0) __builtin_trap();  // everything released
  return 0;
}
