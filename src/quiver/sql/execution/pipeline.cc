// quiver/sql/execution/pipeline.cc — see pipeline.h.
#include "quiver/sql/execution/pipeline.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {

int DegreeOf(const ExecContext& ctx, const PhysicalNode& node) {
  return node.parallel() && ctx.threads > 1 && ctx.scheduler ? ctx.threads : 1;
}

namespace {

// What the producers of a Gather share with its consumer. Instances are
// claimed under the mutex; a claimed instance is owned by its claimer.
struct GatherState {
  std::mutex mutex;
  std::condition_variable not_empty, not_full, idle;
  std::vector<OperatorPtr> instances;
  size_t next = 0;      // next unclaimed instance
  int active = 0;       // producers running on workers
  size_t finished = 0;  // instances run to their end (or stopped)
  size_t capacity = 2;  // queue bound (batches)
  bool stop = false;    // consumer gone or an error
  Status error;
  std::deque<RecordBatchPtr> queue;

  // Claims the next instance (nullptr when none is left or stopping).
  OperatorPtr Claim(bool producer) {
    std::lock_guard<std::mutex> lock(mutex);
    if (stop || next >= instances.size()) return nullptr;
    OperatorPtr op = std::move(instances[next++]);
    if (producer) ++active;
    return op;
  }

  void Fail(const Status& st) {
    std::lock_guard<std::mutex> lock(mutex);
    if (error.ok()) error = st;
    stop = true;
    not_empty.notify_all();
    not_full.notify_all();
  }

  // A worker's task: drain one instance into the queue.
  void Produce() {
    OperatorPtr op = Claim(true);
    if (!op) return;
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (stop) break;
      }
      auto r = op->Next();
      if (!r.ok()) {
        Fail(r.status());
        break;
      }
      if (!*r) break;
      if ((*r)->num_rows == 0) continue;
      std::unique_lock<std::mutex> lock(mutex);
      not_full.wait(lock, [&] { return stop || queue.size() < capacity; });
      if (stop) break;
      queue.push_back(std::move(*r));
      not_empty.notify_one();
    }
    op.reset();  // its memory goes back before the count says so
    std::lock_guard<std::mutex> lock(mutex);
    ++finished;
    --active;
    not_empty.notify_all();
    idle.notify_all();
  }
};

class GatherOp : public RecordBatchStream {
 public:
  GatherOp(ExecContext* ctx, NodePtr node, std::vector<OperatorPtr> instances)
      : ctx_(ctx), node_(std::move(node)), state_(std::make_shared<GatherState>()) {
    schema_ = node_->schema();
    state_->capacity = 2 * instances.size();
    state_->instances = std::move(instances);
    // One worker task per instance but the first (the consumer takes that
    // one, or whichever no worker has started, when the queue runs dry).
    for (size_t i = 1; i < state_->instances.size(); ++i) {
      auto s = state_;
      ctx_->scheduler->Submit([s] { s->Produce(); });
    }
  }
  ~GatherOp() override { Stop(); }
  const SchemaPtr& schema() const override { return schema_; }

  Result<RecordBatchPtr> Next() override {
    if (done_) return RecordBatchPtr{};
    GatherState& s = *state_;
    const size_t n = s.instances.size();
    while (true) {
      {
        std::unique_lock<std::mutex> lock(s.mutex);
        if (!s.error.ok()) {
          Status st = s.error;
          lock.unlock();
          Stop();
          return st;
        }
        if (!s.queue.empty()) {
          RecordBatchPtr b = std::move(s.queue.front());
          s.queue.pop_front();
          s.not_full.notify_one();
          return b;
        }
        if (s.finished == n) break;
        if (!own_ && s.next >= n) {
          // every instance is claimed and running on a worker: wait
          s.not_empty.wait(lock, [&] { return !s.error.ok() || !s.queue.empty() || s.finished == n; });
          continue;
        }
      }
      if (!own_) own_ = s.Claim(false);
      if (!own_) continue;
      auto r = own_->Next();
      if (!r.ok()) {
        s.Fail(r.status());
        own_.reset();
        continue;
      }
      if (*r) {
        if ((*r)->num_rows == 0) continue;
        return r;
      }
      own_.reset();
      std::lock_guard<std::mutex> lock(s.mutex);
      ++s.finished;
    }
    Stop();
    return RecordBatchPtr{};
  }

 private:
  // Stops the producers, waits for those running, drops what is left.
  void Stop() {
    if (done_) return;
    done_ = true;
    own_.reset();
    GatherState& s = *state_;
    std::vector<OperatorPtr> unclaimed;
    {
      std::unique_lock<std::mutex> lock(s.mutex);
      s.stop = true;
      s.not_full.notify_all();
      for (size_t i = s.next; i < s.instances.size(); ++i) unclaimed.push_back(std::move(s.instances[i]));
      s.next = s.instances.size();
      s.idle.wait(lock, [&] { return s.active == 0; });
      s.queue.clear();
    }
    unclaimed.clear();
    node_->Release();
  }

  ExecContext* ctx_;
  NodePtr node_;
  SchemaPtr schema_;
  std::shared_ptr<GatherState> state_;
  OperatorPtr own_;
  bool done_ = false;
};

// Keeps a scan chain's order: morsel k's output is emitted before morsel
// k + 1's. Workers (and the consumer, when nothing is ready) take the next
// morsel and its number under one lock, run the chain over it, and leave
// the output in slot k.
struct OrderedState {
  std::mutex mutex;
  std::condition_variable ready, room, idle;
  PhysicalNode* node = nullptr;
  SharedScan* source = nullptr;
  int64_t next_seq = 0;  // next morsel number to take
  int64_t end_seq = -1;  // number of morsels, once the source is done
  int64_t emit_seq = 0;  // next morsel number to emit
  int64_t window = 8;    // morsels taken ahead of emit_seq at most
  int active = 0;
  bool stop = false;
  Status error;
  std::map<int64_t, std::vector<RecordBatchPtr>> done;

  void Fail(const Status& st) {
    std::lock_guard<std::mutex> lock(mutex);
    if (error.ok()) error = st;
    stop = true;
    ready.notify_all();
    room.notify_all();
  }

  // Takes and runs one morsel. Returns false when there is none to take
  // (end, stop, or — for the consumer, `wait` false — the window is full).
  bool RunOne(bool wait) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (wait) room.wait(lock, [&] { return stop || end_seq >= 0 || next_seq - emit_seq < window; });
      if (stop || end_seq >= 0 || next_seq - emit_seq >= window) return false;
      ++next_seq;  // a reservation against the window
    }
    // The morsel and its number come from the source (validated outside
    // any lock held here).
    int64_t seq = 0;
    auto r = source->Next(&seq);
    if (!r.ok()) {
      Fail(r.status());
      return false;
    }
    if (!*r) {
      std::lock_guard<std::mutex> lock(mutex);
      end_seq = seq;
      ready.notify_all();
      room.notify_all();
      return false;
    }
    RecordBatchPtr morsel = std::move(*r);
    std::vector<RecordBatchPtr> out;
    Status st;
    auto op = node->InstantiateOn(std::move(morsel));
    if (!op.ok()) {
      st = op.status();
    } else {
      while (true) {
        auto b = (*op)->Next();
        if (!b.ok()) {
          st = b.status();
          break;
        }
        if (!*b) break;
        if ((*b)->num_rows > 0) out.push_back(std::move(*b));
      }
    }
    if (!st.ok()) {
      Fail(st);
      return false;
    }
    std::lock_guard<std::mutex> lock(mutex);
    done.emplace(seq, std::move(out));
    ready.notify_all();
    return true;
  }

  void Produce() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stop) return;
      ++active;
    }
    while (RunOne(true)) {
    }
    std::lock_guard<std::mutex> lock(mutex);
    --active;
    idle.notify_all();
  }
};

class OrderedGatherOp : public RecordBatchStream {
 public:
  OrderedGatherOp(ExecContext* ctx, NodePtr node, int workers)
      : node_(std::move(node)), state_(std::make_shared<OrderedState>()) {
    schema_ = node_->schema();
    state_->node = node_.get();
    state_->source = node_->morsel_source();
    state_->window = 4 * static_cast<int64_t>(workers);
    for (int i = 1; i < workers; ++i) {
      auto s = state_;
      ctx->scheduler->Submit([s] { s->Produce(); });
    }
  }
  ~OrderedGatherOp() override { Stop(); }
  const SchemaPtr& schema() const override { return schema_; }

  Result<RecordBatchPtr> Next() override {
    if (done_) return RecordBatchPtr{};
    OrderedState& s = *state_;
    while (true) {
      if (!pending_.empty()) {
        RecordBatchPtr b = std::move(pending_.front());
        pending_.pop_front();
        return b;
      }
      {
        std::unique_lock<std::mutex> lock(s.mutex);
        if (!s.error.ok()) {
          Status st = s.error;
          lock.unlock();
          Stop();
          return st;
        }
        auto it = s.done.find(s.emit_seq);
        if (it != s.done.end()) {
          for (auto& b : it->second) pending_.push_back(std::move(b));
          s.done.erase(it);
          ++s.emit_seq;
          s.room.notify_all();
          continue;
        }
        if (s.end_seq >= 0 && s.emit_seq >= s.end_seq) break;
      }
      // Nothing ready: run a morsel here, or wait for the workers'.
      if (!s.RunOne(false)) {
        std::unique_lock<std::mutex> lock(s.mutex);
        s.ready.wait(lock, [&] {
          return !s.error.ok() || s.done.count(s.emit_seq) || (s.end_seq >= 0 && s.emit_seq >= s.end_seq) ||
                 (s.end_seq < 0 && s.next_seq - s.emit_seq < s.window && s.active == 0);
        });
      }
    }
    Stop();
    return RecordBatchPtr{};
  }

 private:
  void Stop() {
    if (done_) return;
    done_ = true;
    pending_.clear();
    OrderedState& s = *state_;
    {
      std::unique_lock<std::mutex> lock(s.mutex);
      s.stop = true;
      s.room.notify_all();
      s.idle.wait(lock, [&] { return s.active == 0; });
      s.done.clear();
    }
    node_->Release();
  }

  NodePtr node_;
  SchemaPtr schema_;
  std::shared_ptr<OrderedState> state_;
  std::deque<RecordBatchPtr> pending_;
  bool done_ = false;
};

// A single instance that releases its node when it ends or goes away.
class ReleasingStream : public RecordBatchStream {
 public:
  ReleasingStream(NodePtr node, OperatorPtr op) : node_(std::move(node)), op_(std::move(op)) {}
  ~ReleasingStream() override { End(); }
  const SchemaPtr& schema() const override { return node_->schema(); }
  Result<RecordBatchPtr> Next() override {
    if (!op_) return RecordBatchPtr{};
    auto r = op_->Next();
    if (!r.ok() || !*r) End();
    return r;
  }

 private:
  void End() {
    if (!op_) return;
    op_.reset();
    node_->Release();
  }
  NodePtr node_;
  OperatorPtr op_;
};

class BatchesStream : public RecordBatchStream {
 public:
  BatchesStream(SchemaPtr schema, std::vector<RecordBatchPtr> batches)
      : schema_(std::move(schema)), batches_(std::move(batches)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (next_ >= batches_.size()) {
      batches_.clear();
      return RecordBatchPtr{};
    }
    return std::move(batches_[next_++]);
  }

 private:
  SchemaPtr schema_;
  std::vector<RecordBatchPtr> batches_;
  size_t next_ = 0;
};

}  // namespace

Result<OperatorPtr> Gathered(ExecContext* ctx, const NodePtr& node) {
  QUIVER_RETURN_NOT_OK(node->Prepare());
  const int degree = DegreeOf(*ctx, *node);
  if (degree <= 1) {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr op, node->Instantiate());
    return OperatorPtr(std::make_unique<ReleasingStream>(node, std::move(op)));
  }
  if (node->ordered_source() && node->morsel_source() != nullptr)
    return OperatorPtr(std::make_unique<OrderedGatherOp>(ctx, node, degree));
  std::vector<OperatorPtr> instances;
  for (int i = 0; i < degree; ++i) {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr op, node->Instantiate());
    instances.push_back(std::move(op));
  }
  return OperatorPtr(std::make_unique<GatherOp>(ctx, node, std::move(instances)));
}

Status RunPipeline(ExecContext* ctx, const NodePtr& node,
                   const std::function<Status(int, RecordBatchStream*, const std::atomic<bool>&)>& sink) {
  QUIVER_RETURN_NOT_OK(node->Prepare());
  const int degree = DegreeOf(*ctx, *node);
  std::vector<OperatorPtr> instances;
  for (int i = 0; i < degree; ++i) {
    auto op = node->Instantiate();
    if (!op.ok()) {
      instances.clear();
      node->Release();
      return op.status();
    }
    instances.push_back(std::move(*op));
  }
  std::atomic<bool> stop{false};
  Status st = ParallelFor(
      degree > 1 ? ctx->scheduler.get() : nullptr, degree,
      [&](int worker) -> Status {
        OperatorPtr op = std::move(instances[static_cast<size_t>(worker)]);
        if (stop.load()) return Status::OK();
        return sink(worker, op.get(), stop);
      },
      &stop);
  instances.clear();
  node->Release();
  return st;
}

OperatorPtr MakeBatchesStream(SchemaPtr schema, std::vector<RecordBatchPtr> batches) {
  return std::make_unique<BatchesStream>(std::move(schema), std::move(batches));
}

}  // namespace quiver::sql
