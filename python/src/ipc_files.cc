// python/src/ipc_files.cc — Arrow IPC files (ipc_files.h).
#include "ipc_files.h"

#include "capsules.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"

namespace quiver::python {

std::shared_ptr<Table> ReadIpc(const std::string& path) {
  auto table = std::make_shared<Table>();
  Status st;
  {
    py::gil_scoped_release nogil;
    st = [&]() -> Status {
      ipc::ReadOptions ro;
      ro.pool = ModulePool();
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(path, ro));
      table->schema = reader->schema();
      QUIVER_ASSIGN_OR_RETURN(table->batches, ipc::ReadAllBatches(reader.get()));
      return Status::OK();
    }();
  }
  Check(st);
  return table;
}

namespace {

Result<CompressionType> CodecNamed(const std::string& name) {
  if (name == "none" || name.empty()) return CompressionType::kNone;
  if (name == "lz4" || name == "lz4_frame") return CompressionType::kLz4Frame;
  if (name == "zstd") return CompressionType::kZstd;
  return Status::Invalid("unknown compression '" + name + "' (expected none, lz4 or zstd)");
}

}  // namespace

void WriteIpc(const py::object& obj, const std::string& path, const std::string& compression,
              const std::string& format) {
  std::shared_ptr<Table> table;
  try {
    table = obj.cast<std::shared_ptr<Table>>();
  } catch (const py::cast_error&) {
    table = TableFromArrow(obj);
  }
  const CompressionType codec = Unwrap(CodecNamed(compression));
  if (format != "file" && format != "stream") {
    Raise(Status::Invalid("unknown format '" + format + "' (expected file or stream)"));
  }
  Status st;
  {
    py::gil_scoped_release nogil;
    st = [&]() -> Status {
      // Written beside the target and renamed on success: a failed write
      // leaves nothing that reads as a valid file.
      const std::string tmp = path + ".quiver-tmp";
      Status s = [&]() -> Status {
        QUIVER_ASSIGN_OR_RETURN(auto out, ipc::OpenOutputStream(tmp));
        ipc::WriteOptions wo;
        wo.pool = ModulePool();
        wo.compression = codec;
        QUIVER_ASSIGN_OR_RETURN(
            auto writer,
            ipc::RecordBatchWriter::Make(out.get(), table->schema,
                                         format == "file" ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream, wo));
        for (const auto& b : table->batches) QUIVER_RETURN_NOT_OK(writer->WriteBatch(*b));
        QUIVER_RETURN_NOT_OK(writer->Close());
        return out->Flush();
      }();
      if (!s.ok()) {
        std::remove(tmp.c_str());
        return s;
      }
      if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        return Status::IOError("rename " + tmp + " -> " + path + ": " + std::strerror(errno));
      }
      return Status::OK();
    }();
  }
  Check(st);
}

}  // namespace quiver::python
