// quiver/join/hash_join.cc — see hash_join.h.
#include "quiver/join/hash_join.h"

#include <algorithm>
#include <cstring>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/batch_shape.h"
#include "quiver/columnar/dictionary.h"
#include "quiver/columnar/take.h"
#include "quiver/join/row_format.h"

namespace quiver::join {
namespace {

bool OutputsBuildRows(JoinType t) {
  return t == JoinType::kInner || t == JoinType::kLeftOuter || t == JoinType::kRightOuter || t == JoinType::kFullOuter;
}
bool KeepsUnmatchedProbe(JoinType t) { return t == JoinType::kLeftOuter || t == JoinType::kFullOuter; }
bool KeepsUnmatchedBuild(JoinType t) { return t == JoinType::kRightOuter || t == JoinType::kFullOuter; }

std::vector<int> AllColumns(const Schema& s) {
  std::vector<int> v(s.fields.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
  return v;
}

Status CheckIndices(const std::vector<int>& cols, const Schema& s, const char* what) {
  for (int c : cols) {
    if (c < 0 || c >= s.num_fields()) {
      return Status::Invalid(std::string(what) + " column index " + std::to_string(c) + " is out of range (" +
                             std::to_string(s.num_fields()) + " columns)");
    }
  }
  return Status::OK();
}

}  // namespace

std::string_view JoinTypeName(JoinType type) {
  switch (type) {
    case JoinType::kInner: return "inner";
    case JoinType::kLeftOuter: return "left";
    case JoinType::kRightOuter: return "right";
    case JoinType::kFullOuter: return "full";
    case JoinType::kLeftSemi: return "semi";
    case JoinType::kLeftAnti: return "anti";
    case JoinType::kNullAwareAnti: return "null-aware-anti";
  }
  return "?";
}

Result<JoinType> ParseJoinType(std::string_view n) {
  if (n == "inner") return JoinType::kInner;
  if (n == "left" || n == "left-outer") return JoinType::kLeftOuter;
  if (n == "right" || n == "right-outer") return JoinType::kRightOuter;
  if (n == "full" || n == "full-outer") return JoinType::kFullOuter;
  if (n == "semi" || n == "left-semi") return JoinType::kLeftSemi;
  if (n == "anti" || n == "left-anti") return JoinType::kLeftAnti;
  if (n == "null-aware-anti") return JoinType::kNullAwareAnti;
  return Status::Invalid("unknown join type '" + std::string(n) +
                         "' (expected inner, left, right, full, semi, anti or null-aware-anti)");
}

// ------------------------------------------------------------------- plan --

HashJoin::HashJoin(PrivateTag, SchemaPtr build_schema, SchemaPtr probe_schema, HashJoinOptions options)
    : build_schema_(std::move(build_schema)), probe_schema_(std::move(probe_schema)), options_(std::move(options)) {}

Result<std::shared_ptr<const HashJoin>> HashJoin::Make(SchemaPtr build_schema, SchemaPtr probe_schema,
                                                       HashJoinOptions options) {
  if (!build_schema || !probe_schema) return Status::Invalid("HashJoin needs both schemas");
  if (options.output_pool == nullptr) return Status::Invalid("HashJoinOptions.output_pool is required");
  if (options.max_output_rows <= 0 || options.max_output_bytes <= 0) {
    return Status::Invalid("output batch bounds must be positive (max_output_rows " +
                           std::to_string(options.max_output_rows) + ", max_output_bytes " +
                           std::to_string(options.max_output_bytes) + ")");
  }
  if (options.build_keys.empty() || options.build_keys.size() != options.probe_keys.size()) {
    return Status::Invalid("a hash join needs as many probe keys as build keys, at least one (got " +
                           std::to_string(options.build_keys.size()) + " and " +
                           std::to_string(options.probe_keys.size()) + ")");
  }
  if (options.type == JoinType::kNullAwareAnti && options.build_keys.size() != 1) {
    return Status::Invalid("a null-aware anti join takes exactly one key column, got " +
                           std::to_string(options.build_keys.size()));
  }
  bool decode_build = false, decode_probe = false;
  QUIVER_ASSIGN_OR_RETURN(build_schema, DecodedSchema(build_schema, &decode_build));
  QUIVER_ASSIGN_OR_RETURN(probe_schema, DecodedSchema(probe_schema, &decode_probe));
  const Schema& bs = *build_schema;
  const Schema& ps = *probe_schema;
  QUIVER_RETURN_NOT_OK(CheckIndices(options.build_keys, bs, "build key"));
  QUIVER_RETURN_NOT_OK(CheckIndices(options.probe_keys, ps, "probe key"));
  auto join = std::make_shared<HashJoin>(PrivateTag{}, build_schema, probe_schema, options);
  join->decode_build_ = decode_build;
  join->decode_probe_ = decode_probe;
  for (size_t i = 0; i < options.build_keys.size(); ++i) {
    const Field& bf = *bs.fields[options.build_keys[i]];
    const Field& pf = *ps.fields[options.probe_keys[i]];
    QUIVER_ASSIGN_OR_RETURN(KeyColumnSpec spec, ResolveKeyPair(*bf.type, bf.name, *pf.type, pf.name));
    join->key_specs_.push_back(spec);
  }
  join->probe_output_ = options.probe_output ? *options.probe_output : AllColumns(ps);
  QUIVER_RETURN_NOT_OK(CheckIndices(join->probe_output_, ps, "probe output"));
  const JoinType t = options.type;
  if (OutputsBuildRows(t)) {
    join->build_output_ = options.build_output ? *options.build_output : AllColumns(bs);
    QUIVER_RETURN_NOT_OK(CheckIndices(join->build_output_, bs, "build output"));
  }
  // Relation options for this join type.
  HashedRelationOptions ro = options.relation_tuning;
  ro.key_columns = options.build_keys;
  ro.payload_columns = join->build_output_;
  ro.keep_null_keys = KeepsUnmatchedBuild(t);
  ro.with_ordinals = KeepsUnmatchedBuild(t);
  ro.ignore_duplicate_keys = !OutputsBuildRows(t);
  ro.null_aware = t == JoinType::kNullAwareAnti;
  QUIVER_RETURN_NOT_OK(CheckRelationOptions(bs, ro));
  join->relation_options_ = ro;
  // Output columns must be carriable (checked now, not mid-join).
  QUIVER_RETURN_NOT_OK(RowLayout::Make(bs, join->build_output_, RowLayoutOptions{}).status());
  auto out = std::make_shared<Schema>();
  for (int c : join->probe_output_) {
    const Field& f = *ps.fields[c];
    FieldKind kind;
    int32_t width;
    QUIVER_RETURN_NOT_OK(FieldKindOf(*f.type, "probe column '" + f.name + "'", &kind, &width));
    out->fields.push_back(field(f.name, f.type, f.nullable || KeepsUnmatchedBuild(t), f.metadata));
  }
  for (int c : join->build_output_) {
    const Field& f = *bs.fields[c];
    out->fields.push_back(field(f.name, f.type, f.nullable || KeepsUnmatchedProbe(t), f.metadata));
  }
  join->output_schema_ = out;
  if (options.residual) {
    if (t != JoinType::kInner) {
      return Status::Invalid(std::string("a residual condition in the join layer is for inner joins, not ") +
                             std::string(JoinTypeName(t)));
    }
    QUIVER_RETURN_NOT_OK(CheckIndices(options.residual_columns, *out, "residual"));
  }
  return std::shared_ptr<const HashJoin>(std::move(join));
}

Result<std::shared_ptr<HashedRelation>> HashJoin::BuildRelation(const std::vector<RecordBatchPtr>& input_batches,
                                                                TaskMemoryManager* tmm,
                                                                const BuildParallelism& parallelism) const {
  std::vector<RecordBatchPtr> decoded;
  if (decode_build_) {
    for (const auto& b : input_batches) {
      QUIVER_ASSIGN_OR_RETURN(auto d, DecodeDictionaries(b, options_.output_pool));
      decoded.push_back(std::move(d));
    }
  }
  const std::vector<RecordBatchPtr>& build_batches = decode_build_ ? decoded : input_batches;
  for (size_t i = 0; i < build_batches.size(); ++i) {
    const RecordBatch& b = *build_batches[i];
    const BatchShapeMismatch shape = FindBatchShapeMismatch(*build_schema_, b, {.types = true, .lengths = false});
    if (shape.kind == BatchShapeMismatch::Kind::kColumnCount) {
      return Status::Invalid("build batch " + std::to_string(i) + " has " + std::to_string(b.columns.size()) +
                             " columns, the build schema " + std::to_string(build_schema_->fields.size()));
    }
    if (!shape.ok()) {
      const size_t c = static_cast<size_t>(shape.column);
      return Status::Invalid("build batch " + std::to_string(i) + " column '" + build_schema_->fields[c]->name +
                             "' has type " + TypeTextOf(b.columns[c]) + ", the schema " +
                             TypeTextOf(build_schema_->fields[c]));
    }
  }
  if (parallelism.tasks <= 1 || !parallelism.parallel_for) {
    return BuildHashedRelation(*build_schema_, build_batches, relation_options_, key_specs_, tmm);
  }
  HashedRelationOptions options = relation_options_;
  options.parallelism = parallelism;
  return BuildHashedRelation(*build_schema_, build_batches, options, key_specs_, tmm);
}

Result<std::shared_ptr<HashedRelation>> HashJoin::LoadRelation(const Buffer& serialized, TaskMemoryManager* tmm) const {
  QUIVER_ASSIGN_OR_RETURN(auto rel, DeserializeHashedRelation(*build_schema_, serialized, tmm));
  if (rel->key_columns() != relation_options_.key_columns) {
    return Status::Invalid("the serialized relation is keyed on other columns than this join");
  }
  std::vector<int> stored;
  for (const auto& f : rel->layout().fields()) stored.push_back(f.column);
  if (stored != *relation_options_.payload_columns) {
    return Status::Invalid("the serialized relation stores other columns than this join outputs");
  }
  if (relation_options_.with_ordinals && !rel->layout().options().with_ordinal) {
    return Status::Invalid("the serialized relation has no row ordinals, which this outer join needs");
  }
  return rel;
}

Result<std::unique_ptr<HashJoinProbe>> HashJoin::MakeProbe(std::shared_ptr<const HashedRelation> relation) const {
  if (!relation) return Status::Invalid("MakeProbe needs a relation");
  std::shared_ptr<Buffer> matched;
  if (KeepsUnmatchedBuild(options_.type)) {
    if (!relation->layout().options().with_ordinal && relation->stats().stored_rows > 0) {
      return Status::Invalid("this outer join needs a relation built with row ordinals");
    }
    const int64_t bytes = std::max<int64_t>(8, bit_util::BytesForBits(relation->stats().stored_rows));
    QUIVER_ASSIGN_OR_RETURN(matched, Buffer::AllocateZeroed(options_.output_pool, bytes));
  }
  auto probe = std::make_unique<HashJoinProbe>(shared_from_this(), std::move(relation), std::move(matched));
  QUIVER_RETURN_NOT_OK(probe->Init());
  return probe;
}

// ------------------------------------------------------------------ probe --

HashJoinProbe::HashJoinProbe(std::shared_ptr<const HashJoin> join, std::shared_ptr<const HashedRelation> relation,
                             std::shared_ptr<Buffer> matched)
    : join_(std::move(join)), relation_(std::move(relation)), matched_(std::move(matched)) {
  const auto& out = *join_->output_schema();
  for (const auto& f : out.fields) {
    FieldKind kind = FieldKind::kFixed;
    int32_t width = 0;
    (void)FieldKindOf(*f->type, f->name, &kind, &width);
    fixed_row_bytes_ += FixedOutputBytes(kind, width);
    var_output_ |= kind == FieldKind::kVar32 || kind == FieldKind::kVar64;
  }
  cap_ = std::min<int64_t>(join_->options().max_output_rows, 1 << 20);
  if (!var_output_ && fixed_row_bytes_ > 0) {
    cap_ = std::min(cap_, std::max<int64_t>(1, join_->options().max_output_bytes / fixed_row_bytes_));
  }
}

Status HashJoinProbe::Init() {
  QUIVER_ASSIGN_OR_RETURN(pairs_, Buffer::Allocate(join_->options().output_pool, cap_ * 16));
  if (join_->options().residual && var_output_) pair_bytes_.resize(static_cast<size_t>(cap_));
  probe_rows_ = reinterpret_cast<int64_t*>(pairs_->mutable_data());
  build_rows_ = reinterpret_cast<const uint8_t**>(pairs_->mutable_data() + cap_ * 8);
  const Schema& ps = *join_->probe_schema();
  for (int c : join_->probe_output_columns()) {
    const TypeId id = ps.fields[static_cast<size_t>(c)]->type->id;
    if (IsBinaryLike(id) || IsLargeBinaryLike(id)) probe_var_columns_.emplace_back(c, IsLargeBinaryLike(id));
  }
  if (OutputsBuildRows(join_->options().type)) {
    const RowLayout& layout = relation_->layout();
    for (int f : layout.var_fields()) build_var_slots_.push_back(layout.fields()[f].slot_offset);
    for (int f = 0; f < layout.num_fields(); ++f) {
      if (layout.fields()[f].kind == FieldKind::kFixed) inc_fields_.push_back(f);
    }
    inc_values_.resize(inc_fields_.size());
    inc_bits_.resize(inc_fields_.size());
    inc_nulls_.assign(inc_fields_.size(), 0);
  }
  return Status::OK();
}

Status HashJoinProbe::FilterPending(const RecordBatch* probe_batch) {
  const HashJoin& j = *join_;
  if (!j.options().residual || filtered_ >= n_) return Status::OK();
  const int64_t first = filtered_, m = n_ - filtered_;
  MemoryPool* pool = j.options().output_pool;
  const Schema& out = *j.output_schema();
  const auto num_probe = static_cast<int>(j.probe_output_columns().size());
  RecordBatch pairs;
  pairs.schema = j.output_schema();
  pairs.num_rows = m;
  pairs.columns.resize(out.fields.size());
  for (int c : j.options().residual_columns) {
    const auto at = static_cast<size_t>(c);
    if (pairs.columns[at]) continue;
    if (c < num_probe) {
      // probe_rows_ are row numbers of probe_batch (inner joins: never -1).
      const int pc = j.probe_output_columns()[at];
      QUIVER_ASSIGN_OR_RETURN(pairs.columns[at],
                              Take(*probe_batch->columns[pc], {probe_rows_ + first, static_cast<size_t>(m)}, pool,
                                   "probe column '" + out.fields[at]->name + "'", TakeOptions{.boundscheck = false}));
    } else {
      QUIVER_ASSIGN_OR_RETURN(pairs.columns[at],
                              GatherField(relation_->layout(), c - num_probe, build_rows_ + first, m, pool));
    }
  }
  for (auto& col : pairs.columns) {
    if (col) continue;
    auto placeholder = std::make_shared<ArrayData>();
    placeholder->type = null();
    placeholder->length = m;
    placeholder->null_count = m;
    col = std::move(placeholder);
  }
  QUIVER_ASSIGN_OR_RETURN(std::vector<int64_t> keep, j.options().residual(pairs));
  int64_t k = first;
  const bool bytes = !pair_bytes_.empty();
  for (int64_t r : keep) {
    if (r < 0 || r >= m || first + r < k) return Status::Invalid("the residual kept a row out of order or range");
    probe_rows_[k] = probe_rows_[first + r];
    build_rows_[k] = build_rows_[first + r];
    if (bytes) pair_bytes_[static_cast<size_t>(k)] = pair_bytes_[static_cast<size_t>(first + r)];
    ++k;
  }
  n_ = k;
  filtered_ = k;
  if (bytes) {
    pending_bytes_ = 0;
    for (int64_t i = 0; i < n_; ++i) pending_bytes_ += pair_bytes_[static_cast<size_t>(i)];
  }
  return Status::OK();
}

Status HashJoinProbe::Full(const RecordBatch* probe_batch) {
  QUIVER_RETURN_NOT_OK(FilterPending(probe_batch));
  if (n_ >= cap_) return Flush(probe_batch);
  return Status::OK();
}

namespace {

// dst row j = the field at `slot` of rows[j] (zero for a missing row), W
// bytes wide (a constant for the common widths: no memcpy call per value).
template <int W>
void GatherFixedSlots(uint8_t* dst, const uint8_t* const* rows, int64_t begin, int64_t end, int32_t slot, int32_t w) {
  const size_t width = W > 0 ? static_cast<size_t>(W) : static_cast<size_t>(w);
  for (int64_t j = begin; j < end; ++j) {
    const uint8_t* r = rows[j];
    if (r) {
      std::memcpy(dst + j * static_cast<int64_t>(width), r + slot, width);
    } else {
      std::memset(dst + j * static_cast<int64_t>(width), 0, width);
    }
  }
}

}  // namespace

Status HashJoinProbe::GatherPending(const RecordBatch* probe_batch) {
  QUIVER_RETURN_NOT_OK(FilterPending(probe_batch));
  if (inc_fields_.empty() || gathered_ >= n_) {
    gathered_ = n_;
    return Status::OK();
  }
  const RowLayout& layout = relation_->layout();
  MemoryPool* pool = join_->options().output_pool;
  const bool with_validity = layout.options().with_validity;
  for (size_t i = 0; i < inc_fields_.size(); ++i) {
    const RowField& f = layout.fields()[inc_fields_[i]];
    const int32_t w = f.width;
    if (!inc_values_[i]) {
      QUIVER_ASSIGN_OR_RETURN(inc_values_[i], Buffer::Allocate(pool, std::max<int64_t>(1, cap_ * w)));
      QUIVER_ASSIGN_OR_RETURN(inc_bits_[i],
                              Buffer::AllocateZeroed(pool, std::max<int64_t>(1, bit_util::BytesForBits(cap_))));
      inc_nulls_[i] = 0;
    }
    uint8_t* dst = inc_values_[i]->mutable_data();
    uint8_t* bits = inc_bits_[i]->mutable_data();
    const int32_t slot = f.slot_offset;
    switch (w) {
      case 1: GatherFixedSlots<1>(dst, build_rows_, gathered_, n_, slot, w); break;
      case 2: GatherFixedSlots<2>(dst, build_rows_, gathered_, n_, slot, w); break;
      case 4: GatherFixedSlots<4>(dst, build_rows_, gathered_, n_, slot, w); break;
      case 8: GatherFixedSlots<8>(dst, build_rows_, gathered_, n_, slot, w); break;
      case 16: GatherFixedSlots<16>(dst, build_rows_, gathered_, n_, slot, w); break;
      default: GatherFixedSlots<0>(dst, build_rows_, gathered_, n_, slot, w); break;
    }
    int64_t nulls = 0;
    for (int64_t j = gathered_; j < n_; ++j) {
      const uint8_t* r = build_rows_[j];
      const bool valid = r != nullptr && (!with_validity || layout.IsValid(r, inc_fields_[i]));
      if (valid) bit_util::SetBit(bits, j);
      nulls += !valid;
    }
    inc_nulls_[i] += nulls;
  }
  gathered_ = n_;
  return Status::OK();
}

Status HashJoinProbe::Flush(const RecordBatch* probe_batch) {
  QUIVER_RETURN_NOT_OK(FilterPending(probe_batch));
  const int64_t n = n_;
  if (n == 0) return Status::OK();
  const HashJoin& j = *join_;
  MemoryPool* pool = j.options().output_pool;
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = j.output_schema();
  batch->num_rows = n;
  const Schema& ps = *j.probe_schema();
  for (int c : j.probe_output_columns()) {
    const std::string what = "probe column '" + ps.fields[c]->name + "'";
    if (probe_batch != nullptr) {
      // probe_rows_ are row numbers of probe_batch (or -1): in range.
      QUIVER_ASSIGN_OR_RETURN(auto a, Take(*probe_batch->columns[c], {probe_rows_, static_cast<size_t>(n)}, pool, what,
                                           TakeOptions{.boundscheck = false}));
      batch->columns.push_back(std::move(a));
    } else {
      QUIVER_ASSIGN_OR_RETURN(auto a, MakeArrayOfNull(ps.fields[c]->type, n, pool, what));
      batch->columns.push_back(std::move(a));
    }
  }
  if (OutputsBuildRows(j.options().type)) {
    QUIVER_RETURN_NOT_OK(GatherPending(probe_batch));
    const RowLayout& layout = relation_->layout();
    size_t inc = 0;
    for (int f = 0; f < layout.num_fields(); ++f) {
      if (inc < inc_fields_.size() && inc_fields_[inc] == f) {
        const int64_t bytes = std::max<int64_t>(1, n * layout.fields()[f].width);
        if (inc_values_[inc]->size() > bytes) QUIVER_RETURN_NOT_OK(inc_values_[inc]->Resize(bytes));
        auto a = std::make_shared<ArrayData>();
        a->type = layout.fields()[f].type;
        a->length = n;
        a->null_count = inc_nulls_[inc];
        a->buffers = {a->null_count ? std::move(inc_bits_[inc]) : nullptr, std::move(inc_values_[inc])};
        inc_values_[inc].reset();
        inc_bits_[inc].reset();
        batch->columns.push_back(std::move(a));
        ++inc;
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(auto a, GatherField(layout, f, build_rows_, n, pool));
      batch->columns.push_back(std::move(a));
    }
  }
  n_ = 0;
  gathered_ = 0;
  filtered_ = 0;
  pending_bytes_ = 0;
  output_rows_ += n;
  ready_.push_back(std::move(batch));
  return Status::OK();
}

Status HashJoinProbe::Emit(const RecordBatch* probe_batch, int64_t probe_row, const uint8_t* build_row) {
  const auto& o = join_->options();
  int64_t bytes = fixed_row_bytes_;
  if (var_output_) {
    // Exact variable-width bytes of this output row.
    // (The variable-width columns are listed once, in the constructor: a
    // type test per column and pair was 3% of TPC-DS Q6.)
    if (probe_batch != nullptr && probe_row >= 0) {
      for (const auto& [c, large] : probe_var_columns_) {
        const ArrayData& a = *probe_batch->columns[static_cast<size_t>(c)];
        const int64_t p = a.offset + probe_row;
        const uint8_t* offsets = a.buffers[1]->data();
        bytes += large ? bit_util::LoadLE<int64_t>(offsets + (p + 1) * 8) - bit_util::LoadLE<int64_t>(offsets + p * 8)
                       : bit_util::LoadLE<int32_t>(offsets + (p + 1) * 4) - bit_util::LoadLE<int32_t>(offsets + p * 4);
      }
    }
    if (build_row != nullptr) {
      for (int32_t slot : build_var_slots_) bytes += static_cast<int64_t>(RowLayout::VarAt(build_row, slot).size());
    }
  }
  // (With a residual, the pending pairs are filtered first: the bounds
  // count the kept ones.)
  if (n_ > 0 && (pending_bytes_ + bytes > o.max_output_bytes)) {
    QUIVER_RETURN_NOT_OK(FilterPending(probe_batch));
    if (n_ > 0 && (pending_bytes_ + bytes > o.max_output_bytes)) QUIVER_RETURN_NOT_OK(Flush(probe_batch));
  }
  probe_rows_[n_] = probe_row;
  build_rows_[n_] = build_row;
  if (!pair_bytes_.empty()) pair_bytes_[static_cast<size_t>(n_)] = bytes;
  ++n_;
  pending_bytes_ += bytes;
  if (n_ >= cap_ || pending_bytes_ >= o.max_output_bytes) {
    QUIVER_RETURN_NOT_OK(FilterPending(probe_batch));
    if (n_ >= cap_ || pending_bytes_ >= o.max_output_bytes) QUIVER_RETURN_NOT_OK(Flush(probe_batch));
  }
  return Status::OK();
}

Status HashJoinProbe::Start(RecordBatchPtr input) {
  if (input == nullptr) return Status::Invalid("Start: the probe batch is null");
  if (finished_) return Status::Invalid("Probe after Finish");
  if (cursor_.active || !ready_.empty() || n_ != 0) {
    return Status::Invalid("Start before NextOutput returned the end of the previous probe batch");
  }
  const HashJoin& j = *join_;
  const Schema& ps = *j.probe_schema();
  RecordBatchPtr batch = std::move(input);
  for (const auto& c : batch->columns) {
    if (c && c->type->id == TypeId::kDictionary) {
      auto copy = std::make_shared<RecordBatch>(*batch);
      QUIVER_ASSIGN_OR_RETURN(batch, DecodeDictionaries(copy, j.options().output_pool));
      break;
    }
  }
  const BatchShapeMismatch shape = FindBatchShapeMismatch(ps, *batch);
  if (shape.kind == BatchShapeMismatch::Kind::kColumnCount) {
    return Status::Invalid("probe batch has " + std::to_string(batch->columns.size()) + " columns, the probe schema " +
                           std::to_string(ps.fields.size()));
  }
  if (!shape.ok()) {
    const size_t c = static_cast<size_t>(shape.column);
    const int64_t length = batch->columns[c] ? batch->columns[c]->length : 0;
    return Status::Invalid("probe batch column '" + ps.fields[c]->name + "' (" + TypeTextOf(batch->columns[c]) + ", " +
                           std::to_string(length) + " rows) does not match the probe schema (" +
                           TypeTextOf(ps.fields[c]) + ", " + std::to_string(batch->num_rows) + " rows)");
  }
  const JoinType t = j.options().type;
  const HashedRelation& rel = *relation_;
  Cursor& c = cursor_;
  c.Clear();
  c.naaj_all = t == JoinType::kNullAwareAnti && rel.empty_input();
  for (int k : j.options().probe_keys) c.keys.push_back(batch->columns[k].get());
  // Null-aware anti with a null build key: no row at all (the cursor starts
  // at the end).
  if (t == JoinType::kNullAwareAnti && rel.all_null_keys()) c.begin = batch->num_rows;
  c.batch = std::move(batch);
  c.active = true;
  return Status::OK();
}

Result<RecordBatchPtr> HashJoinProbe::NextOutput() {
  Cursor& c = cursor_;
  while (ready_.empty() && c.active) {
    if (c.i >= c.m) {  // the current lookup chunk is done (or none yet)
      c.begin += c.m;
      c.m = 0;
      c.i = 0;
      c.chain = nullptr;
      if (c.begin >= c.batch->num_rows) {
        QUIVER_RETURN_NOT_OK(Flush(c.batch.get()));
        c.Clear();  // releases the probe batch
        break;
      }
      c.m = std::min(HashedRelation::kLookupChunk, c.batch->num_rows - c.begin);
      if (!c.naaj_all) relation_->Lookup(c.keys, c.begin, c.m, c.heads);
      if (!relation_->keys_unique() && OutputsBuildRows(join_->options().type)) PrefetchChains();
      if (join_->options().type == JoinType::kNullAwareAnti && !c.naaj_all) {
        CombineKeyValidity(c.keys, c.begin, c.m, c.valid);
      }
    }
    QUIVER_RETURN_NOT_OK(RunChunk());
  }
  if (ready_.empty()) return RecordBatchPtr();
  RecordBatchPtr out = std::move(ready_.front());
  ready_.pop_front();
  return out;
}

Status HashJoinProbe::Probe(const RecordBatch& batch, const BatchSink& sink) {
  // A non-owning alias: the batch outlives this call, which drains it.
  QUIVER_RETURN_NOT_OK(Start(RecordBatchPtr(std::shared_ptr<void>(), &batch)));
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr out, NextOutput());
    if (!out) return Status::OK();
    QUIVER_RETURN_NOT_OK(sink(std::move(out)));
  }
}

void HashJoinProbe::PrefetchChains() {
  // Level by level over the chains still going: each pass loads the next
  // pointers of rows requested by the pass before (all in flight together)
  // and requests the rows they point to. The walk in AppendEachMatch then
  // finds the first kChainPrefetchLevels rows after each head in cache
  // instead of missing on them one dependent load at a time.
  Cursor& c = cursor_;
  const uint8_t** live = chain_rows_;
  int64_t n = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    live[n] = c.heads[i];
    n += c.heads[i] != nullptr;
  }
  for (int level = 0; level < kChainPrefetchLevels && n > 0; ++level) {
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* next = RowLayout::Next(live[i]);
      if (next == nullptr) continue;
      __builtin_prefetch(next);
      live[kept++] = next;
    }
    n = kept;
  }
}

// ---- one routine per join family, over one looked-up chunk ----
//
// Rows [begin, begin + m) of the cursor's batch were looked up; heads[i] is
// the first build row of row begin + i's key (nullptr: no match). Each
// routine continues from the cursor (row i, and `chain` inside row i's
// duplicate chain) and returns as soon as an output batch is ready (the
// cursor then says where to resume), or when the chunk is done (i == m).
// Outputs go through the shared paths: AppendUniqueChunk (unique keys,
// fixed-width output), AppendEachMatch, and per pair PushPair + Flush
// (fixed-width output: the batch bound is a row count, cap_) or Emit
// (variable-width output: the bound is in bytes). No Status is made per pair
// on the fixed-width path.

Status HashJoinProbe::RunChunk() {
  Cursor& c = cursor_;
  const RecordBatch& batch = *c.batch;
  switch (join_->options().type) {
    case JoinType::kInner:
    case JoinType::kRightOuter: return AppendMatches(batch, /*keep_probe=*/false);
    case JoinType::kLeftOuter:
    case JoinType::kFullOuter: return AppendMatches(batch, /*keep_probe=*/true);
    case JoinType::kLeftSemi:
    case JoinType::kLeftAnti:
    case JoinType::kNullAwareAnti: return AppendProbeRows(batch);
  }
  return Status::OK();
}

Status HashJoinProbe::AppendProbeRows(const RecordBatch& batch) {
  // Semi: rows with a match; anti: rows without; null-aware anti: rows
  // without a match whose key is not null (a null probe key is unknown
  // against a non-empty build side), or every row over an empty build side.
  Cursor& c = cursor_;
  const JoinType t = join_->options().type;
  while (c.i < c.m) {
    const int64_t i = c.i++;
    bool keep;
    if (t == JoinType::kLeftSemi) {
      keep = c.heads[i] != nullptr;
    } else if (t == JoinType::kLeftAnti) {
      keep = c.heads[i] == nullptr;
    } else {
      keep = c.naaj_all || (c.heads[i] == nullptr && c.valid[i]);
    }
    if (!keep) continue;
    if (var_output_) {
      QUIVER_RETURN_NOT_OK(Emit(&batch, c.begin + i, nullptr));
    } else if (PushPair(c.begin + i, nullptr)) {
      QUIVER_RETURN_NOT_OK(Flush(&batch));
    }
    if (!ready_.empty()) return Status::OK();
  }
  return Status::OK();
}

Status HashJoinProbe::AppendUniqueChunk(const RecordBatch& batch, bool keep_probe) {
  // Unique keys, no matched set: one output row per match (inner) or per
  // probe row (left), written without branches; the whole chunk at once.
  Cursor& c = cursor_;
  const int64_t m = c.m;
  if (n_ + m > cap_) QUIVER_RETURN_NOT_OK(FilterPending(&batch));
  if (n_ + m > cap_) QUIVER_RETURN_NOT_OK(Flush(&batch));
  int64_t n = n_;
  for (int64_t i = 0; i < m; ++i) {
    probe_rows_[n] = c.begin + i;
    build_rows_[n] = c.heads[i];
    n += keep_probe || c.heads[i] != nullptr;
  }
  n_ = n;
  c.i = m;
  QUIVER_RETURN_NOT_OK(GatherPending(&batch));
  if (n_ == cap_) QUIVER_RETURN_NOT_OK(Flush(&batch));
  return Status::OK();
}

Status HashJoinProbe::AppendMatches(const RecordBatch& batch, bool keep_probe) {
  const bool unique = relation_->keys_unique();
  uint8_t* matched = matched_ ? matched_->mutable_data() : nullptr;
  if (!var_output_ && unique && !matched && cap_ >= cursor_.m && cursor_.i == 0) {
    return AppendUniqueChunk(batch, keep_probe);
  }
  if (var_output_) return AppendEachMatch<true>(batch, keep_probe, matched, unique);
  return AppendEachMatch<false>(batch, keep_probe, matched, unique);
}

template <bool kVarOutput>
Status HashJoinProbe::AppendEachMatch(const RecordBatch& batch, bool keep_probe, uint8_t* matched, bool unique) {
  Cursor& c = cursor_;
  while (c.i < c.m) {
    const int64_t row = c.begin + c.i;
    const uint8_t* r = c.chain != nullptr ? c.chain : c.heads[c.i];
    c.chain = nullptr;
    if (r == nullptr) {
      ++c.i;
      if (!keep_probe) continue;
      if constexpr (kVarOutput) {
        QUIVER_RETURN_NOT_OK(Emit(&batch, row, nullptr));
      } else if (PushPair(row, nullptr)) {
        QUIVER_RETURN_NOT_OK(Flush(&batch));
      }
      if (!ready_.empty()) return Status::OK();
      continue;
    }
    do {
      if (matched) bit_util::SetBit(matched, RowLayout::Ordinal(r));
      if constexpr (kVarOutput) {
        QUIVER_RETURN_NOT_OK(Emit(&batch, row, r));
      } else if (PushPair(row, r)) {
        QUIVER_RETURN_NOT_OK(Full(&batch));
      }
      r = unique ? nullptr : RowLayout::Next(r);
      if (!ready_.empty()) {
        // An output batch is ready: resume at the rest of this row's chain.
        if (r != nullptr) {
          c.chain = r;
        } else {
          ++c.i;
        }
        return Status::OK();
      }
    } while (r != nullptr);
    ++c.i;
  }
  // Fixed-width build fields of this chunk's matches, while in cache (the
  // residual first drops the pairs it fails).
  if constexpr (!kVarOutput) {
    QUIVER_RETURN_NOT_OK(GatherPending(&batch));
  } else {
    QUIVER_RETURN_NOT_OK(FilterPending(&batch));
  }
  return Status::OK();
}

Status HashJoinProbe::MergeMatched(const HashJoinProbe& other) {
  if (other.relation_ != relation_) return Status::Invalid("MergeMatched: the probes have different relations");
  if (!matched_ || !other.matched_) return Status::OK();
  uint8_t* dst = matched_->mutable_data();
  const uint8_t* src = other.matched_->data();
  for (int64_t i = 0; i < matched_->size(); ++i) dst[i] |= src[i];
  return Status::OK();
}

Status HashJoinProbe::Finish(const BatchSink& sink) {
  if (finished_) return Status::Invalid("Finish called twice");
  if (cursor_.active || !ready_.empty()) {
    return Status::Invalid("Finish before NextOutput returned the end of the last probe batch");
  }
  finished_ = true;
  if (!KeepsUnmatchedBuild(join_->options().type) || !matched_) return Status::OK();
  const uint8_t* matched = matched_->data();
  Status st;
  auto drain = [&]() -> Status {
    while (!ready_.empty()) {
      RecordBatchPtr out = std::move(ready_.front());
      ready_.pop_front();
      QUIVER_RETURN_NOT_OK(sink(std::move(out)));
    }
    return Status::OK();
  };
  relation_->ForEachRow([&](const uint8_t* row) {
    if (!st.ok()) return;
    if (!bit_util::GetBit(matched, RowLayout::Ordinal(row))) st = Emit(nullptr, -1, row);
    if (st.ok()) st = drain();
  });
  QUIVER_RETURN_NOT_OK(st);
  QUIVER_RETURN_NOT_OK(Flush(nullptr));
  return drain();
}

Status RunHashJoin(const HashJoin& join, const std::vector<RecordBatchPtr>& build_batches,
                   const std::vector<RecordBatchPtr>& probe_batches, TaskMemoryManager* tmm, const BatchSink& sink) {
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<HashedRelation> relation, join.BuildRelation(build_batches, tmm));
  struct CloseOnExit {
    HashedRelation* r;
    ~CloseOnExit() { r->Close(); }
  } guard{relation.get()};
  QUIVER_ASSIGN_OR_RETURN(auto probe, join.MakeProbe(relation));
  for (const auto& b : probe_batches) QUIVER_RETURN_NOT_OK(probe->Probe(*b, sink));
  return probe->Finish(sink);
}

}  // namespace quiver::join
