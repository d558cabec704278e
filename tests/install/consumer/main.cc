// Reads an Arrow IPC file with an installed quiver, compresses it (LZ4_FRAME
// IPC stream in memory), reads the compressed copy back and prints its row
// count: "consumer: N rows (B bytes compressed)". Exit 1 on any error.
#include <cstdio>

#include "quiver/ipc/io.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/memory/memory_pool.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer FILE\n");
    return 2;
  }
  auto pool = quiver::MemoryPool::MakeRoot();
  auto fail = [](const quiver::Status& st) {
    std::fprintf(stderr, "consumer: %s\n", st.ToString().c_str());
    return 1;
  };
  quiver::ipc::ReadOptions ro;
  ro.pool = pool.get();
  auto reader = quiver::ipc::RecordBatchReader::OpenPath(argv[1], ro);
  if (!reader.ok()) return fail(reader.status());
  auto batches = quiver::ipc::ReadAllBatches(reader->get());
  if (!batches.ok()) return fail(batches.status());

  quiver::ipc::BufferOutputStream sink;
  quiver::ipc::WriteOptions wo;
  wo.pool = pool.get();
  wo.compression = quiver::CompressionType::kLz4Frame;
  auto writer = quiver::ipc::RecordBatchWriter::Make(&sink, (*reader)->schema(), quiver::ipc::IpcFormat::kStream, wo);
  if (!writer.ok()) return fail(writer.status());
  for (const auto& b : *batches) {
    if (auto st = (*writer)->WriteBatch(*b); !st.ok()) return fail(st);
  }
  if (auto st = (*writer)->Close(); !st.ok()) return fail(st);

  const auto compressed_bytes = static_cast<long long>(sink.mutable_bytes().size());
  auto owner = std::make_shared<std::vector<uint8_t>>(std::move(sink.mutable_bytes()));
  auto bytes = quiver::Buffer::Wrap(owner->data(), static_cast<int64_t>(owner->size()), owner);
  auto back = quiver::ipc::RecordBatchReader::Open(bytes, ro);
  if (!back.ok()) return fail(back.status());
  auto back_batches = quiver::ipc::ReadAllBatches(back->get());
  if (!back_batches.ok()) return fail(back_batches.status());
  long long rows = 0;
  for (const auto& b : *back_batches) rows += b->num_rows;
  std::printf("consumer: %lld rows (%lld bytes compressed)\n", rows, compressed_bytes);
  return 0;
}
