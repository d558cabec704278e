// quiver/sql/execution/grace_join.cc — grace hash joins and the
// spillable serial join (grace_join.h).
#include "quiver/sql/execution/grace_join.h"

#include <deque>

#include "quiver/columnar/take.h"
#include "quiver/sql/execution/group_table.h"
#include "quiver/sql/execution/hash_join_op.h"
#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {
namespace {

// The grace partition of each row of `keys` (evaluated join keys, of one
// common type per position on both sides): equal keys go to the same
// partition; rows with a NULL key to the last bucket (kGracePartitions).
std::vector<std::vector<int64_t>> PartitionRows(const std::vector<Vec>& keys, int64_t n) {
  std::vector<std::vector<int64_t>> parts(kGracePartitions + 1);
  for (int64_t r = 0; r < n; ++r) {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    bool null = false;
    for (const Vec& v : keys) {
      if (v.IsNull(r)) {
        null = true;
        break;
      }
      uint64_t k = 0;
      switch (ClassOf(*v.type())) {
        case TypeClass::kString: {
          const std::string_view sv = v.StringAt(r);
          k = HashBytes(reinterpret_cast<const uint8_t*>(sv.data()), sv.size());
          break;
        }
        case TypeClass::kFloat: {
          double d = v.FloatAt(r);
          if (d == 0) d = 0;
          k = HashBytes(reinterpret_cast<const uint8_t*>(&d), sizeof d);
          break;
        }
        default: {
          const i128 x = v.type()->id == TypeId::kBool ? i128{v.BoolAt(r)} : v.ExactAt(r);
          k = HashBytes(reinterpret_cast<const uint8_t*>(&x), sizeof x);
          break;
        }
      }
      h = (h ^ k) * 0xff51afd7ed558ccdULL;
      h ^= h >> 29;
    }
    const size_t p = null ? kGracePartitions : static_cast<size_t>((h >> 52) & (kGracePartitions - 1));
    parts[p].push_back(r);
  }
  return parts;
}

}  // namespace

Status GraceSide::Write(const RecordBatchPtr& raw, const std::vector<Vec>& keys) {
  auto parts = PartitionRows(keys, raw->num_rows);
  const auto& nulls = parts[kGracePartitions];
  rows_ += raw->num_rows;
  null_key_rows_ += static_cast<int64_t>(nulls.size());
  if (!drop_null_keys_) parts[0].insert(parts[0].end(), nulls.begin(), nulls.end());
  for (int p = 0; p < kGracePartitions; ++p) {
    const auto& rows = parts[static_cast<size_t>(p)];
    if (rows.empty()) continue;
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr taken, TakeRows(raw, rows, ctx_->pool.get()));
    RecordBatchPtr b = MakeBatch(schema_, taken->num_rows, taken->columns);
    std::lock_guard<std::mutex> lock(locks_[static_cast<size_t>(p)]);
    auto& w = writers_[static_cast<size_t>(p)];
    if (!w) {
      QUIVER_ASSIGN_OR_RETURN(
          w, ctx_->spill->Create(schema_, what_ + " partition " + std::to_string(p), ctx_->pool.get()));
    }
    QUIVER_RETURN_NOT_OK(w->Write(*b));
  }
  return Status::OK();
}

Status GraceSide::Finish() {
  for (int p = 0; p < kGracePartitions; ++p) {
    auto& w = writers_[static_cast<size_t>(p)];
    if (!w) continue;
    QUIVER_ASSIGN_OR_RETURN(SpillFile f, w->Finish());
    files_[static_cast<size_t>(p)].push_back(std::move(f));
    w.reset();
  }
  return Status::OK();
}

namespace {

// The spill files of one partition read one after the other.
class SpillFilesStream : public RecordBatchStream {
 public:
  // `keep`: the files stay on disk after reading (SpillManager::Open).
  SpillFilesStream(ExecContext* ctx, SchemaPtr schema, std::vector<SpillFile> files, bool keep = false)
      : ctx_(ctx), schema_(std::move(schema)), files_(std::move(files)), keep_(keep) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    while (true) {
      if (!cur_) {
        if (next_ >= files_.size()) return RecordBatchPtr{};
        QUIVER_ASSIGN_OR_RETURN(cur_, ctx_->spill->Open(files_[next_++], ctx_->pool.get(), keep_));
      }
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, cur_->Next());
      if (b) return MakeBatch(schema_, b->num_rows, b->columns);
      cur_.reset();
    }
  }

 private:
  ExecContext* ctx_;
  SchemaPtr schema_;
  std::vector<SpillFile> files_;
  bool keep_ = false;
  size_t next_ = 0;
  std::unique_ptr<RecordBatchStream> cur_;
};

// The hash join of one grace partition: its probe files against a relation
// built from its build files (read with `keep_build`: SpillFilesStream).
Result<std::unique_ptr<HashJoinOp>> MakePartitionJoin(ExecContext* ctx, const SchemaPtr& left_schema,
                                                      std::vector<SpillFile> probe_files, const SchemaPtr& right_schema,
                                                      std::vector<SpillFile> build_files, bool keep_build,
                                                      const JoinSpec& spec, const SchemaPtr& schema) {
  OperatorPtr left = std::make_unique<SpillFilesStream>(ctx, left_schema, std::move(probe_files));
  OperatorPtr right = std::make_unique<SpillFilesStream>(ctx, right_schema, std::move(build_files), keep_build);
  auto op = std::make_unique<HashJoinOp>(ctx, std::move(left), std::move(right), right_schema, spec, schema);
  QUIVER_RETURN_NOT_OK(op->Init());
  return op;
}

}  // namespace

// The partitions of a grace hash join joined by several instances at once
// (ParallelHashJoinNode after a spill; both sides partitioned by the
// pipelines' workers): each instance claims the next partition and joins
// it alone, its build side in one relation, as GraceJoinOp does one after
// another. Memory bounds how many run at once:
//  - a partition is claimed beside running ones only when the statement's
//    room (bytes left under its limit) is at least twice its spill reserve
//    plus 8x the partition's build files (compressed batches: a relation
//    of string rows takes several times their size), so that the running
//    joins' probes keep room for their output (a 2 MiB statement with two
//    partitions of 200 KiB at once failed an output batch with 4x);
//    otherwise the instance ends and the running ones take the rest (an
//    instance never waits for another: they may share one thread);
//  - such a partition's build files are read without removal, so a build
//    that fails with OutOfMemory beside others goes back (GiveBack) and is
//    joined later *exclusively*: by the last running instance, while no
//    other starts a partition. Only an exclusive build's OutOfMemory ends
//    the statement, as it would with one partition at a time.
// Thread-safe.
class GracePartitionQueue {
 public:
  struct Claim {
    int partition = -1;  // -1: nothing for this instance; end it
    bool exclusive = false;
    std::vector<SpillFile> build_files, probe_files;
  };
  GracePartitionQueue(std::shared_ptr<GraceSide> build, std::shared_ptr<GraceSide> probe)
      : build_(std::move(build)), probe_(std::move(probe)) {}

  // `room_bytes`: the statement's bytes left (-1: no limit);
  // `reserve_bytes`: ExecContext::spill_reserve_bytes.
  Claim Take(int64_t room_bytes, int64_t reserve_bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    Claim c;
    if (exclusive_) return c;
    if (!retry_.empty()) {
      if (active_ > 0) return c;  // the last running instance takes it
      c = std::move(retry_.front());
      retry_.pop_front();
      c.exclusive = exclusive_ = true;
      ++active_;
      return c;
    }
    while (next_ < kGracePartitions) {
      const int p = next_;
      if (active_ > 0 && room_bytes >= 0) {
        int64_t build_bytes = 0;
        for (const auto& f : build_->Files(p)) build_bytes += f.bytes;
        if (room_bytes < 2 * reserve_bytes + 8 * build_bytes) return c;
      }
      ++next_;
      std::vector<SpillFile> probe_files = probe_->Take(p);
      std::vector<SpillFile> build_files = build_->Take(p);
      bool probe_rows = false;
      for (const auto& f : probe_files) probe_rows = probe_rows || f.rows > 0;
      if (!probe_rows) continue;  // no output (inner, left, semi and anti joins); files go with the directory
      c.partition = p;
      c.build_files = std::move(build_files);
      c.probe_files = std::move(probe_files);
      ++active_;
      return c;
    }
    return c;
  }
  // A non-exclusive claim whose build did not fit beside the others.
  void GiveBack(Claim c) {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
    retry_.push_back(std::move(c));
  }
  void Done(const Claim& c) {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
    if (c.exclusive) exclusive_ = false;
  }

 private:
  std::shared_ptr<GraceSide> build_, probe_;
  std::mutex mu_;
  int next_ = 0;
  int active_ = 0;
  bool exclusive_ = false;
  std::deque<Claim> retry_;
};

namespace {

// One instance over a GracePartitionQueue: joins claimed partitions until
// the queue has nothing for it.
class GracePartitionsOp : public RecordBatchStream {
 public:
  GracePartitionsOp(ExecContext* ctx, std::shared_ptr<GracePartitionQueue> queue, SchemaPtr left_schema,
                    SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema)
      : ctx_(ctx),
        queue_(std::move(queue)),
        left_schema_(std::move(left_schema)),
        right_schema_(std::move(right_schema)),
        spec_(std::move(spec)),
        schema_(std::move(schema)) {}
  ~GracePartitionsOp() override {
    current_.reset();
    if (claimed_) queue_->Done(claim_);
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "hash join");
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      if (current_) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, current_->Next());
        if (b) return b;
        current_.reset();
        claimed_ = false;
        queue_->Done(claim_);
      }
      claim_ = queue_->Take(ctx_->statement_pool->AvailableBytes(), ctx_->spill_reserve_bytes);
      if (claim_.partition < 0) return RecordBatchPtr{};
      claimed_ = true;
      const bool keep = !claim_.exclusive;  // a build that may go back is read again later
      QUIVER_ASSIGN_OR_RETURN(auto op, MakePartitionJoin(ctx_, left_schema_, claim_.probe_files, right_schema_,
                                                         claim_.build_files, keep, spec_, schema_));
      Status st = op->BuildNow();
      if (!st.ok()) {
        op.reset();  // its relation and batches go back first
        if (st.IsOutOfMemory() && !claim_.exclusive) {
          claimed_ = false;
          queue_->GiveBack(std::move(claim_));
          continue;
        }
        return st;
      }
      if (keep) {
        for (const auto& f : claim_.build_files) ctx_->spill->Remove(f);
      }
      current_ = std::move(op);
    }
  }
  ExecContext* ctx_;
  std::shared_ptr<GracePartitionQueue> queue_;
  SchemaPtr left_schema_, right_schema_;
  JoinSpec spec_;
  SchemaPtr schema_;
  GracePartitionQueue::Claim claim_;
  bool claimed_ = false;
  OperatorPtr current_;
};

// Grace hash join (after the build side was spilled): the probe side is
// written to the same partitions, then each partition is joined on its own
// (its build side in one relation). Right / full joins also join the
// partitions no probe row reached (their build rows come out unmatched).
// NOT IN (one key) needs the whole set: a NULL in it empties the answer,
// an empty set keeps every row; otherwise it is an anti join per partition
// with the probe rows whose key is NULL dropped.
class GraceJoinOp : public RecordBatchStream {
 public:
  GraceJoinOp(ExecContext* ctx, OperatorPtr left, SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema,
              std::shared_ptr<GraceSide> build)
      : ctx_(ctx),
        left_(std::move(left)),
        right_schema_(std::move(right_schema)),
        spec_(std::move(spec)),
        schema_(std::move(schema)),
        build_(std::move(build)) {
    left_schema_ = left_->schema();
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "hash join");
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    if (!probe_ && spec_.kind == JoinKind::kNullAwareAnti) {
      if (build_->null_key_rows() > 0) return RecordBatchPtr{};  // x NOT IN (..., NULL) is never true
      if (build_->rows() == 0) {                                 // NOT IN of the empty set: every row
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, left_->Next());
        return b ? MakeBatch(schema_, b->num_rows, b->columns) : b;
      }
    }
    if (!probe_) {
      probe_ = std::make_shared<GraceSide>(ctx_, left_->schema(), "hash join probe");
      if (spec_.kind == JoinKind::kNullAwareAnti) {
        probe_->DropNullKeys();
        spec_.kind = JoinKind::kAnti;
      }
      while (true) {
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, left_->Next());
        if (!b) break;
        if (b->num_rows == 0) continue;
        QUIVER_ASSIGN_OR_RETURN(auto keys, EvaluateKeys(spec_.left_keys, *b, ctx_));
        QUIVER_RETURN_NOT_OK(probe_->Write(b, keys));
      }
      left_.reset();
      QUIVER_RETURN_NOT_OK(probe_->Finish());
    }
    while (true) {
      if (current_) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, current_->Next());
        if (b) return b;
        current_.reset();
      }
      if (partition_ >= kGracePartitions) return RecordBatchPtr{};
      const int p = partition_++;
      std::vector<SpillFile> build_files = build_->Take(p);
      std::vector<SpillFile> probe_files = probe_->Take(p);
      bool probe_rows = false, build_rows = false;
      for (const auto& f : probe_files) probe_rows = probe_rows || f.rows > 0;
      for (const auto& f : build_files) build_rows = build_rows || f.rows > 0;
      // No probe row: nothing to emit but a right / full join's build rows.
      const bool keeps_build = spec_.kind == JoinKind::kRight || spec_.kind == JoinKind::kFull;
      if (!probe_rows && !(keeps_build && build_rows)) continue;
      QUIVER_ASSIGN_OR_RETURN(
          current_, MakePartitionJoin(ctx_, left_schema_, std::move(probe_files), right_schema_, std::move(build_files),
                                      /*keep_build=*/false, spec_, schema_));
    }
  }
  ExecContext* ctx_;
  OperatorPtr left_;
  SchemaPtr right_schema_;
  JoinSpec spec_;
  SchemaPtr schema_;
  std::shared_ptr<GraceSide> build_, probe_;
  SchemaPtr left_schema_;
  OperatorPtr current_;
  int partition_ = 0;
};

// `first`'s batches, then `rest`'s (as `first`'s schema).
class ChainStream : public RecordBatchStream {
 public:
  ChainStream(OperatorPtr first, OperatorPtr rest) : first_(std::move(first)), rest_(std::move(rest)) {}
  const SchemaPtr& schema() const override { return first_->schema(); }
  Result<RecordBatchPtr> Next() override {
    if (!first_done_) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, first_->Next());
      if (b) return b;
      first_done_ = true;
    }
    if (!rest_) return RecordBatchPtr{};
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, rest_->Next());
    return b ? MakeBatch(first_->schema(), b->num_rows, b->columns) : b;
  }

 private:
  OperatorPtr first_, rest_;
  bool first_done_ = false;
};

// Writes `batches` (a side's own columns) to `side`'s partitions by
// `keys`, dropping them as it goes.
Status SpillToPartitions(ExecContext* ctx, const std::vector<ExprPtr>& keys, GraceSide* side,
                         std::vector<RecordBatchPtr>* batches) {
  for (auto& b : *batches) {
    QUIVER_ASSIGN_OR_RETURN(auto k, EvaluateKeys(keys, *b, ctx));
    QUIVER_RETURN_NOT_OK(side->Write(b, k));
    b.reset();
  }
  batches->clear();
  return Status::OK();
}

// A right / full outer hash join that may spill (one instance over
// gathered inputs): the build side is held while memory allows and built
// into one relation before any probe row is read; when memory gets tight
// or the build fails with OutOfMemory, the build side goes to the grace
// partitions and the join runs as a GraceJoinOp.
class SpillableSerialJoinOp : public RecordBatchStream {
 public:
  SpillableSerialJoinOp(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec, SchemaPtr schema)
      : ctx_(ctx),
        left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)),
        schema_(std::move(schema)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (!inner_) {
      Status st = Start();
      if (!st.ok()) return NameOperator(st, "hash join");
    }
    return inner_->Next();
  }

 private:
  Status Start() {
    const SchemaPtr right_schema = right_->schema();
    auto build = std::make_shared<GraceSide>(ctx_, right_schema, "hash join build");
    std::vector<RecordBatchPtr> held;
    bool grace = false;
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, right_->Next());
      if (!b) break;
      if (b->num_rows == 0) continue;
      held.push_back(std::move(b));
      if (grace || ctx_->MemoryTight()) {
        grace = true;
        QUIVER_RETURN_NOT_OK(SpillToPartitions(ctx_, spec_.right_keys, build.get(), &held));
      }
    }
    right_.reset();
    if (!grace) {
      auto op = std::make_unique<HashJoinOp>(ctx_, std::move(left_), MakeBatchesStream(right_schema, held),
                                             right_schema, spec_, schema_);
      QUIVER_RETURN_NOT_OK(op->Init());
      Status st = op->BuildNow();
      if (st.ok() && !ctx_->MemoryTight()) {
        held.clear();
        inner_ = std::move(op);
        return Status::OK();
      }
      if (!st.ok() && !st.IsOutOfMemory()) return st;
      left_ = op->TakeLeft();  // not read yet: the relation is built before probing
      op.reset();              // its relation goes
      QUIVER_RETURN_NOT_OK(SpillToPartitions(ctx_, spec_.right_keys, build.get(), &held));
    }
    QUIVER_RETURN_NOT_OK(build->Finish());
    inner_ = std::make_unique<GraceJoinOp>(ctx_, std::move(left_), right_schema, spec_, schema_, std::move(build));
    return Status::OK();
  }

  ExecContext* ctx_;
  OperatorPtr left_, right_;
  JoinSpec spec_;
  SchemaPtr schema_;
  OperatorPtr inner_;
};

}  // namespace

std::shared_ptr<GracePartitionQueue> MakeGracePartitionQueue(std::shared_ptr<GraceSide> build,
                                                             std::shared_ptr<GraceSide> probe) {
  return std::make_shared<GracePartitionQueue>(std::move(build), std::move(probe));
}

OperatorPtr MakeGracePartitions(ExecContext* ctx, std::shared_ptr<GracePartitionQueue> queue, SchemaPtr left_schema,
                                SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema) {
  return std::make_unique<GracePartitionsOp>(ctx, std::move(queue), std::move(left_schema), std::move(right_schema),
                                             std::move(spec), std::move(schema));
}

OperatorPtr MakeGraceJoin(ExecContext* ctx, OperatorPtr left, SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema,
                          std::shared_ptr<GraceSide> build) {
  return std::make_unique<GraceJoinOp>(ctx, std::move(left), std::move(right_schema), std::move(spec),
                                       std::move(schema), std::move(build));
}

OperatorPtr MakeSpillableSerialJoin(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec,
                                    SchemaPtr schema) {
  return std::make_unique<SpillableSerialJoinOp>(ctx, std::move(left), std::move(right), std::move(spec),
                                                 std::move(schema));
}

OperatorPtr MakeChainStream(OperatorPtr first, OperatorPtr rest) {
  return std::make_unique<ChainStream>(std::move(first), std::move(rest));
}

// Runs `node`'s pipeline with every worker writing its batches to one
// new GraceSide (`what` names it in errors) by `keys`; finished.
Result<std::shared_ptr<GraceSide>> PartitionPipeline(ExecContext* ctx, const NodePtr& node,
                                                     const std::vector<ExprPtr>& keys, const std::string& what) {
  auto side = std::make_shared<GraceSide>(ctx, node->schema(), what);
  QUIVER_RETURN_NOT_OK(RunPipeline(ctx, node, [&](int, RecordBatchStream* in, const std::atomic<bool>& stop) -> Status {
    while (!stop.load(std::memory_order_relaxed)) {
      QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in->Next());
      if (!b) break;
      if (b->num_rows == 0) continue;
      QUIVER_ASSIGN_OR_RETURN(auto k, EvaluateKeys(keys, *b, ctx));
      QUIVER_RETURN_NOT_OK(side->Write(b, k));
    }
    return Status::OK();
  }));
  QUIVER_RETURN_NOT_OK(side->Finish());
  return side;
}

}  // namespace quiver::sql
