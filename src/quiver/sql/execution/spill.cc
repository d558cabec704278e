// quiver/sql/execution/spill.cc — see spill.h.
#include "quiver/sql/execution/spill.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "quiver/ipc/io.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/memory/spill_directory.h"

namespace quiver::sql {

namespace fs = std::filesystem;

SpillManager::SpillManager(std::string root, CompressionType codec, std::shared_ptr<DiskBudget> budget)
    : root_(std::move(root)), codec_(codec), budget_(std::move(budget)) {
  if (root_.empty()) root_ = DefaultSpillRoot();
}

SpillManager::~SpillManager() { RemoveAll(); }

void SpillManager::RemoveAll() {
  std::unordered_map<std::string, DiskReservation> charges;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
      dir_.clear();
    }
    charges.swap(charges_);
  }
  // `charges` goes here: every removed file's bytes back to the budget.
}

std::string SpillManager::directory() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dir_;
}

int64_t SpillManager::charged_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t n = 0;
  for (const auto& [path, charge] : charges_) n += charge.bytes();
  return n;
}

Result<std::string> SpillManager::NextPath() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (dir_.empty()) {
    QUIVER_ASSIGN_OR_RETURN(dir_, MakeSpillDirectory(root_));
  }
  return dir_ + "/spill-" + std::to_string(next_file_++) + ".arrows";
}

void SpillManager::Adopt(const std::string& path, DiskReservation charge) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A file of a directory RemoveAll already took: nothing is on disk.
  if (dir_.empty() || path.rfind(dir_ + "/", 0) != 0) return;
  charges_[path] = std::move(charge);
}

void SpillManager::Forget(const std::string& path) {
  DiskReservation charge;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = charges_.find(path);
  if (it == charges_.end()) return;
  charge = std::move(it->second);
  charges_.erase(it);
}

namespace {

// An upper bound of the bytes `data`'s buffers take in an IPC body: each
// buffer whole, plus its length prefix and padding (a buffer that does
// not compress is stored raw).
int64_t ArrayBodyBound(const ArrayData& data) {
  int64_t n = 0;
  for (const auto& b : data.buffers) n += (b ? b->size() : 0) + 16;
  for (const auto& c : data.children) {
    if (c) n += ArrayBodyBound(*c);
  }
  if (data.dictionary) n += ArrayBodyBound(*data.dictionary);
  return n;
}

// The bytes a batch may add to a spill file: its body, its metadata (a
// field node and buffers per array) and the schema message before the
// first batch.
int64_t BatchBound(const RecordBatch& batch) {
  int64_t n = 8192;
  for (const auto& c : batch.columns) {
    if (c) n += ArrayBodyBound(*c) + 256;
  }
  return n;
}

constexpr int64_t kFinishBoundBytes = 4096;  // end-of-stream marker or file footer

}  // namespace

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
  w->charge_ = DiskReservation(budget_);
  auto sink = ipc::OpenOutputStream(path);
  if (!sink.ok()) return sink.status().WithContext("spill (" + what + ")");
  w->impl_->sink = std::move(*sink);
  ipc::WriteOptions wo;
  wo.pool = pool;
  wo.compression = codec_;
  // The schema message is written here: charged like a batch.
  const int64_t schema_bound = 4096 + 512 * static_cast<int64_t>(schema->fields.size());
  QUIVER_RETURN_NOT_OK(w->charge_.Grow(schema_bound, what));
  auto writer = ipc::RecordBatchWriter::Make(w->impl_->sink.get(), schema, ipc::IpcFormat::kStream, wo);
  const int64_t written = w->impl_->sink->position();
  if (written > schema_bound) {
    QUIVER_RETURN_NOT_OK(w->charge_.Grow(written - schema_bound, what));
  } else {
    w->charge_.Shrink(schema_bound - written);
  }
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
  // charge_ (an unfinished file's bytes) goes back with it.
}

// Reserves `bound` bytes, runs `write`, then keeps only what the file grew
// by (more than the bound is charged too, or the write fails).
template <typename Fn>
Status SpillWriter::Charged(int64_t bound, Fn&& write) {
  const int64_t before = impl_->sink->position();
  QUIVER_RETURN_NOT_OK(charge_.Grow(bound, what_));
  Status st = write();
  const int64_t grew = impl_->sink->position() - before;
  if (grew > bound) {
    if (Status more = charge_.Grow(grew - bound, what_); !more.ok() && st.ok()) st = more;
  } else {
    charge_.Shrink(bound - grew);
  }
  return st;
}

Status SpillWriter::Write(const RecordBatch& batch) {
  if (finished_) return Status::Invalid("spill (" + what_ + "): write after finish");
  Status st = Charged(BatchBound(batch), [&] { return impl_->writer->WriteBatch(batch); });
  if (!st.ok()) return st.WithContext("spill (" + what_ + ") '" + file_.path + "'");
  file_.rows += batch.num_rows;
  ++file_.batches;
  return Status::OK();
}

Result<SpillFile> SpillWriter::Finish() {
  if (finished_) return Status::Invalid("spill (" + what_ + "): finished twice");
  Status st = Charged(kFinishBoundBytes, [&] {
    QUIVER_RETURN_NOT_OK(impl_->writer->Close());
    return impl_->sink->Flush();
  });
  if (!st.ok()) return st.WithContext("spill (" + what_ + ") '" + file_.path + "'");
  file_.bytes = impl_->sink->position();
  impl_.reset();
  finished_ = true;
  manager_->bytes_.fetch_add(file_.bytes);
  manager_->Adopt(file_.path, std::move(charge_));
  return file_;
}

// Reads a spill file; removes it at the end or on destruction, giving its
// bytes back to the manager's budget (when the manager is still there: a
// manager that went first took the whole directory and every charge).
class SpillReader : public RecordBatchStream {
 public:
  SpillReader(std::unique_ptr<ipc::RecordBatchReader> reader, std::string path, bool keep,
              std::weak_ptr<SpillManager> manager)
      : reader_(std::move(reader)), path_(std::move(path)), keep_(keep), manager_(std::move(manager)) {}
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
    if (auto m = manager_.lock()) m->Forget(path_);
  }
  std::unique_ptr<ipc::RecordBatchReader> reader_;
  std::string path_;
  bool keep_ = false;
  bool done_ = false;
  std::weak_ptr<SpillManager> manager_;
};

Result<std::unique_ptr<RecordBatchStream>> SpillManager::Open(const SpillFile& file, MemoryPool* pool, bool keep) {
  ipc::ReadOptions ro;
  ro.pool = pool;
  ro.validation = ValidationLevel::kFull;
  auto r = ipc::RecordBatchReader::OpenPath(file.path, ro);
  if (!r.ok()) return r.status().WithContext("spill file");
  return std::unique_ptr<RecordBatchStream>(
      std::make_unique<SpillReader>(std::move(*r), file.path, keep, weak_from_this()));
}

void SpillManager::Remove(const SpillFile& file) {
  std::error_code ec;
  fs::remove(file.path, ec);
  Forget(file.path);
}

}  // namespace quiver::sql
