// quiver/sql/execution/spill.cc — see spill.h.
#include "quiver/sql/execution/spill.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "quiver/ipc/io.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"

namespace quiver::sql {

namespace fs = std::filesystem;

SpillManager::SpillManager(std::string root, CompressionType codec) : root_(std::move(root)), codec_(codec) {
  if (root_.empty()) {
    const char* t = std::getenv("TMPDIR");
    root_ = t && *t ? t : "/tmp";
  }
}

SpillManager::~SpillManager() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

std::string SpillManager::directory() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dir_;
}

Result<std::string> SpillManager::NextPath() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (dir_.empty()) {
    static std::atomic<int64_t> counter{0};
    const std::string dir =
        root_ + "/quiver-spill-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1));
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::IOError("spill: cannot create directory '" + dir + "': " + ec.message());
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    dir_ = dir;
  }
  return dir_ + "/spill-" + std::to_string(next_file_++) + ".arrows";
}

struct SpillWriter::Impl {
  std::unique_ptr<ipc::OutputStream> sink;
  std::unique_ptr<ipc::RecordBatchWriter> writer;
};

Result<std::unique_ptr<SpillWriter>> SpillManager::Create(const SchemaPtr& schema, const std::string& what,
                                                          MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(std::string path, NextPath());
  std::unique_ptr<SpillWriter> w(new SpillWriter());
  w->manager_ = this;
  w->what_ = what;
  w->file_.path = path;
  w->impl_ = std::make_unique<SpillWriter::Impl>();
  auto sink = ipc::OpenOutputStream(path);
  if (!sink.ok()) return sink.status().WithContext("spill (" + what + ")");
  w->impl_->sink = std::move(*sink);
  ipc::WriteOptions wo;
  wo.pool = pool;
  wo.compression = codec_;
  auto writer = ipc::RecordBatchWriter::Make(w->impl_->sink.get(), schema, ipc::IpcFormat::kStream, wo);
  if (!writer.ok()) return writer.status().WithContext("spill (" + what + ")");
  w->impl_->writer = std::move(*writer);
  files_.fetch_add(1);
  return w;
}

SpillWriter::~SpillWriter() {
  if (!finished_ && impl_) {
    impl_.reset();
    std::error_code ec;
    fs::remove(file_.path, ec);
  }
}

Status SpillWriter::Write(const RecordBatch& batch) {
  if (finished_) return Status::Invalid("spill (" + what_ + "): write after finish");
  Status st = impl_->writer->WriteBatch(batch);
  if (!st.ok()) return st.WithContext("spill (" + what_ + ") '" + file_.path + "'");
  file_.rows += batch.num_rows;
  ++file_.batches;
  return Status::OK();
}

Result<SpillFile> SpillWriter::Finish() {
  if (finished_) return Status::Invalid("spill (" + what_ + "): finished twice");
  Status st = impl_->writer->Close();
  if (st.ok()) st = impl_->sink->Flush();
  if (!st.ok()) return st.WithContext("spill (" + what_ + ") '" + file_.path + "'");
  file_.bytes = impl_->sink->position();
  impl_.reset();
  finished_ = true;
  manager_->bytes_.fetch_add(file_.bytes);
  return file_;
}

namespace {

// Reads a spill file; removes it at the end or on destruction.
class SpillReader : public RecordBatchStream {
 public:
  SpillReader(std::unique_ptr<ipc::RecordBatchReader> reader, std::string path, bool keep)
      : reader_(std::move(reader)), path_(std::move(path)), keep_(keep) {}
  ~SpillReader() override { Done(); }
  const SchemaPtr& schema() const override { return reader_->schema(); }
  Result<RecordBatchPtr> Next() override {
    if (done_) return RecordBatchPtr{};
    auto r = reader_->Next();
    if (!r.ok()) return r.status().WithContext("spill file '" + path_ + "'");
    return r;
  }

 private:
  void Done() {
    if (done_) return;
    done_ = true;
    if (keep_) return;
    std::error_code ec;
    fs::remove(path_, ec);  // the mapping (if any) stays valid until the batches go
  }
  std::unique_ptr<ipc::RecordBatchReader> reader_;
  std::string path_;
  bool keep_ = false;
  bool done_ = false;
};

}  // namespace

Result<std::unique_ptr<RecordBatchStream>> SpillManager::Open(const SpillFile& file, MemoryPool* pool, bool keep) {
  ipc::ReadOptions ro;
  ro.pool = pool;
  ro.validation = ValidationLevel::kFull;
  auto r = ipc::RecordBatchReader::OpenPath(file.path, ro);
  if (!r.ok()) return r.status().WithContext("spill file");
  return std::unique_ptr<RecordBatchStream>(std::make_unique<SpillReader>(std::move(*r), file.path, keep));
}

void SpillManager::Remove(const SpillFile& file) {
  std::error_code ec;
  fs::remove(file.path, ec);
}

}  // namespace quiver::sql
