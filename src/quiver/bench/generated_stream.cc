// quiver/bench/generated_stream.cc — a generated table into an IPC stream file.
#include "quiver/bench/generated_stream.h"

#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::bench {

Result<int64_t> WriteGeneratedStream(const datagen::GenOptions& gen, const std::string& path, int64_t stop_at_bytes) {
  QUIVER_ASSIGN_OR_RETURN(auto generator, datagen::BatchGenerator::Make(gen));
  QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputStream(path));
  ipc::WriteOptions wo;
  wo.pool = gen.pool;
  QUIVER_ASSIGN_OR_RETURN(auto writer,
                          ipc::RecordBatchWriter::Make(sink.get(), generator->schema(), ipc::IpcFormat::kStream, wo));
  int64_t rows = 0;
  while (stop_at_bytes <= 0 || sink->position() < stop_at_bytes) {
    QUIVER_ASSIGN_OR_RETURN(auto batch, generator->Next());
    if (!batch) break;
    rows += batch->num_rows;
    QUIVER_RETURN_NOT_OK(writer->WriteBatch(*batch));
  }
  QUIVER_RETURN_NOT_OK(writer->Close());
  QUIVER_RETURN_NOT_OK(sink->Flush());
  return rows;
}

}  // namespace quiver::bench
