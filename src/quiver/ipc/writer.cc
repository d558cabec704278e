#include "quiver/ipc/writer.h"

#include <algorithm>

#include <cstring>
#include <functional>
#include <unordered_map>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/batch_shape.h"
#include "quiver/columnar/compare.h"
#include "quiver/columnar/layout.h"
#include "quiver/compression/codec.h"
#include "quiver/ipc/batch_unloader.h"
#include "quiver/ipc/column_ranges.h"
#include "quiver/ipc/metadata_internal.h"

namespace quiver::ipc {
namespace {

constexpr uint8_t kFileMagicPadded[8] = {'A', 'R', 'R', 'O', 'W', '1', 0, 0};
constexpr uint8_t kZeros[8] = {};

/// Collects the buffers and field nodes of arrays, depth-first.
struct RawBuffers {
  std::vector<FieldNodeInfo> nodes;
  std::vector<std::shared_ptr<Buffer>> buffers;  // null = empty region
  std::vector<int> buffer_column;                // top-level column of each buffer
  std::vector<int64_t> variadic_counts;
};

std::shared_ptr<Buffer> Truncate(const std::shared_ptr<Buffer>& b, int64_t size) {
  if (b == nullptr) return nullptr;
  if (size < 0 || b->size() <= size) return b;
  return Buffer::Slice(b, 0, size);
}

class Collector {
 public:
  Collector(RawBuffers* out, int column) : out_(out), column_(column) {}

  void Add(std::shared_ptr<Buffer> b) {
    out_->buffers.push_back(std::move(b));
    out_->buffer_column.push_back(column_);
  }

  Status Unload(const ArrayData& a) {
    const DataType& t = a.type->id == TypeId::kDictionary ? *a.type->index_type : *a.type;
    if (a.offset != 0) return Status::Invalid("internal: unloading an array with offset " + std::to_string(a.offset));
    const int64_t n = a.length;
    // The buffers the layout table lists, each cut to what `n` rows use,
    // then the variadic buffers of views, then the children.
    const TypeLayout layout = LayoutOf(t);
    out_->nodes.push_back({n, !layout.has_validity && t.id != TypeId::kNull ? 0 : a.null_count});
    auto buf = [&](size_t i) { return i < a.buffers.size() ? a.buffers[i] : nullptr; };
    for (int i = 0; i < layout.num_buffers; ++i) {
      const BufferLayout& spec = layout.buffers[static_cast<size_t>(i)];
      const auto bi = static_cast<size_t>(i);
      switch (spec.kind) {
        case BufferKind::kValidity:
          Add(a.null_count == 0 || buf(bi) == nullptr ? nullptr : Truncate(buf(bi), bit_util::BytesForBits(n)));
          break;
        case BufferKind::kOffsets: Add(n > 0 ? Truncate(buf(bi), MinBufferBytes(spec, n)) : buf(bi)); break;
        case BufferKind::kData: {
          // Up to the last offset (buffer bi - 1).
          const auto& offsets = buf(bi - 1);
          int64_t end = 0;
          if (n > 0 && offsets != nullptr) {
            const uint8_t* last = offsets->data() + n * (layout.buffers[bi - 1].element_bits / 8);
            end = layout.buffers[bi - 1].element_bits == 32 ? bit_util::LoadLE<int32_t>(last)
                                                            : bit_util::LoadLE<int64_t>(last);
          }
          Add(Truncate(buf(bi), end));
          break;
        }
        case BufferKind::kValues:
          if (spec.element_bits <= 0) return Status::NotImplemented("cannot write type " + t.ToString());
          Add(Truncate(buf(bi), MinBufferBytes(spec, n)));
          break;
        default:  // list-view offsets and sizes, type ids, union offsets, views
          Add(Truncate(buf(bi), MinBufferBytes(spec, n)));
          break;
      }
    }
    if (layout.variadic_data) {
      for (size_t i = 2; i < a.buffers.size(); ++i) Add(a.buffers[i]);
      out_->variadic_counts.push_back(static_cast<int64_t>(a.buffers.size()) - 2);
    }
    for (const auto& c : a.children) QUIVER_RETURN_NOT_OK(Unload(*c));
    return Status::OK();
  }

 private:
  RawBuffers* out_;
  int column_;
};

struct DictionaryToWrite {
  int64_t id;
  ArrayDataPtr dictionary;
};

Status CollectDictionaries(const Field& field, const ArrayData& array, std::vector<DictionaryToWrite>* out) {
  const DataType& t = *field.type;
  if (t.id == TypeId::kDictionary) {
    if (array.dictionary == nullptr) {
      return Status::Invalid("field '" + field.name + "': dictionary array without a dictionary");
    }
    const auto& vt = *t.value_type;
    for (size_t i = 0; i < vt.children.size() && i < array.dictionary->children.size(); ++i) {
      QUIVER_RETURN_NOT_OK(CollectDictionaries(*vt.children[i], *array.dictionary->children[i], out));
    }
    out->push_back({field.dictionary_id, array.dictionary});
    return Status::OK();
  }
  for (size_t i = 0; i < t.children.size() && i < array.children.size(); ++i) {
    QUIVER_RETURN_NOT_OK(CollectDictionaries(*t.children[i], *array.children[i], out));
  }
  return Status::OK();
}

class WriterImpl : public RecordBatchWriter {
 public:
  WriterImpl(OutputStream* sink, SchemaPtr schema, IpcFormat format, WriteOptions options)
      : sink_(sink), schema_(std::move(schema)), format_(format), options_(std::move(options)) {}

  Status Start() {
    if (options_.pool == nullptr) return Status::Invalid("WriteOptions.pool is required");
    if (options_.min_space_saving < 0 || options_.min_space_saving >= 1) {
      return Status::Invalid("min_space_saving " + std::to_string(options_.min_space_saving) + " is outside [0, 1)");
    }
    // Resolve the batch codec and the per-column choice.
    batch_codec_ = options_.compression;
    for (const auto& [name, codec] : options_.column_codecs) {
      if (schema_->FieldIndex(name) < 0) {
        return Status::KeyError("per-column codec names no column: '" + name + "'");
      }
      if (codec == CompressionType::kNone) continue;
      if (batch_codec_ == CompressionType::kNone) {
        batch_codec_ = codec;
      } else if (batch_codec_ != codec) {
        return Status::Invalid("column '" + name + "' asks for " + std::string(CompressionTypeName(codec)) +
                               " but the batch codec is " + std::string(CompressionTypeName(batch_codec_)) +
                               " (one BodyCompression per batch)");
      }
    }
    column_compressed_.resize(schema_->fields.size(), options_.compression != CompressionType::kNone);
    for (size_t i = 0; i < schema_->fields.size(); ++i) {
      auto it = options_.column_codecs.find(schema_->fields[i]->name);
      if (it != options_.column_codecs.end()) column_compressed_[i] = it->second != CompressionType::kNone;
    }
    if (batch_codec_ != CompressionType::kNone) {
      BodyCompressionOptions bo;
      bo.codec = batch_codec_;
      bo.level = options_.level;
      bo.min_space_saving = options_.min_space_saving;
      bo.output_policy = options_.output_policy;
      QUIVER_ASSIGN_OR_RETURN(compressor_, BufferCompressor::Make(bo, options_.pool));
    }
    std::function<bool(const DataType&)> has_dict = [&](const DataType& t) {
      if (t.id == TypeId::kDictionary) return true;
      for (const auto& c : t.children) {
        if (has_dict(*c->type)) return true;
      }
      return false;
    };
    for (const auto& f : schema_->fields) has_dictionaries_ = has_dictionaries_ || has_dict(*f->type);
    if (format_ == IpcFormat::kFile) QUIVER_RETURN_NOT_OK(Write({kFileMagicPadded, 8}));
    flatbuffers::FlatBufferBuilder fbb;
    auto schema_off = SchemaToFlatbuffer(fbb, *schema_);
    auto msg = fb::CreateMessage(fbb, fb::MetadataVersion::V5, fb::MessageHeader::Schema, schema_off.Union(), 0);
    fbb.Finish(msg);
    return WriteMessage(fbb, {}, 0, nullptr);
  }

  Status WriteBatch(const RecordBatch& batch) override {
    if (closed_) return Status::Invalid("WriteBatch after Close");
    const BatchShapeMismatch shape = FindBatchShapeMismatch(*schema_, batch, {.types = true, .lengths = false});
    if (shape.kind == BatchShapeMismatch::Kind::kColumnCount) {
      return Status::Invalid("batch has " + std::to_string(batch.columns.size()) + " columns, the schema " +
                             std::to_string(schema_->fields.size()));
    }
    if (!shape.ok()) {
      const size_t i = static_cast<size_t>(shape.column);
      return Status::Invalid("column " + std::to_string(i) + " ('" + schema_->fields[i]->name + "') has type " +
                             TypeTextOf(batch.columns[i]) + ", the schema " + TypeTextOf(schema_->fields[i]));
    }
    QUIVER_RETURN_NOT_OK(WriteDictionaries(batch));
    QUIVER_RETURN_NOT_OK(WriteRecordBatchMessage(batch.columns, batch.num_rows, false, 0, false));
    ++stats_.num_batches;
    stats_.num_rows += batch.num_rows;
    return Status::OK();
  }

  Status WriteUnloaded(const UnloadedBatch& batch) override {
    if (closed_) return Status::Invalid("WriteUnloaded after Close");
    if (has_dictionaries_) {
      return Status::Invalid("WriteUnloaded cannot write batches of a schema with dictionary fields; use WriteBatch");
    }
    if (batch.codec != batch_codec_) {
      return Status::Invalid("unloaded batch uses codec " + std::string(CompressionTypeName(batch.codec)) +
                             ", the writer " + std::string(CompressionTypeName(batch_codec_)));
    }
    QUIVER_RETURN_NOT_OK(WriteUnloadedMessage(batch, false, 0, false));
    ++stats_.num_batches;
    stats_.num_rows += batch.num_rows;
    return Status::OK();
  }

  Status Close() override {
    if (closed_) return Status::OK();
    closed_ = true;
    if (compressor_) compressor_->ReleaseScratch();
    const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
    QUIVER_RETURN_NOT_OK(Write({eos, 8}));
    if (format_ == IpcFormat::kFile) {
      flatbuffers::FlatBufferBuilder fbb;
      auto schema_off = SchemaToFlatbuffer(fbb, *schema_);
      auto dicts = fbb.CreateVectorOfStructs(dictionary_blocks_);
      auto batches = fbb.CreateVectorOfStructs(record_blocks_);
      auto footer = fb::CreateFooter(fbb, fb::MetadataVersion::V5, schema_off, dicts, batches);
      fbb.Finish(footer);
      QUIVER_RETURN_NOT_OK(Write({fbb.GetBufferPointer(), fbb.GetSize()}));
      uint8_t len[4];
      bit_util::StoreLE<int32_t>(len, static_cast<int32_t>(fbb.GetSize()));
      QUIVER_RETURN_NOT_OK(Write({len, 4}));
      QUIVER_RETURN_NOT_OK(Write({kFileMagicPadded, 6}));
    }
    return sink_->Flush();
  }

  const WriteStats& stats() const override { return stats_; }
  int codec_level() const override { return compressor_ ? compressor_->level() : 0; }

 private:
  Status Write(std::span<const uint8_t> bytes) {
    QUIVER_RETURN_NOT_OK(sink_->Write(bytes));
    stats_.total_bytes += static_cast<int64_t>(bytes.size());
    return Status::OK();
  }

  Status WriteDictionaries(const RecordBatch& batch) {
    std::vector<DictionaryToWrite> dicts;
    for (size_t i = 0; i < batch.columns.size(); ++i) {
      QUIVER_RETURN_NOT_OK(CollectDictionaries(*schema_->fields[i], *batch.columns[i], &dicts));
    }
    CompareOptions exact;
    exact.float_abs_tolerance = 0;
    exact.float_rel_tolerance = 0;
    for (const auto& d : dicts) {
      auto it = written_.find(d.id);
      if (it != written_.end()) {
        const ArrayDataPtr& old = it->second;
        if (old == d.dictionary) continue;
        bool extends = false;
        if (d.dictionary->length >= old->length) {
          extends = ArrayRangeEquals(*old, 0, *d.dictionary, 0, old->length, exact);
        }
        if (extends && d.dictionary->length == old->length) {
          it->second = d.dictionary;
          continue;
        }
        if (extends) {
          QUIVER_ASSIGN_OR_RETURN(auto delta,
                                  SliceArray(d.dictionary, old->length, d.dictionary->length - old->length));
          QUIVER_ASSIGN_OR_RETURN(auto cd, CompactArray(delta, options_.pool));
          QUIVER_RETURN_NOT_OK(WriteRecordBatchMessage({cd}, cd->length, true, d.id, true));
          ++stats_.num_dictionary_deltas;
        } else {
          if (format_ == IpcFormat::kFile) {
            return Status::Invalid(
                "dictionary " + std::to_string(d.id) +
                " changed in a way that is not a delta; the IPC file format cannot replace dictionaries");
          }
          QUIVER_ASSIGN_OR_RETURN(auto cd, CompactArray(d.dictionary, options_.pool));
          QUIVER_RETURN_NOT_OK(WriteRecordBatchMessage({cd}, cd->length, true, d.id, false));
        }
        it->second = d.dictionary;
      } else {
        QUIVER_ASSIGN_OR_RETURN(auto cd, CompactArray(d.dictionary, options_.pool));
        QUIVER_RETURN_NOT_OK(WriteRecordBatchMessage({cd}, cd->length, true, d.id, false));
        written_.emplace(d.id, d.dictionary);
      }
      ++stats_.num_dictionary_batches;
    }
    return Status::OK();
  }

  Status WriteRecordBatchMessage(const std::vector<ArrayDataPtr>& columns, int64_t num_rows, bool is_dictionary,
                                 int64_t dictionary_id, bool is_delta) {
    BatchUnloader unloader(options_.pool, compressor_.get(), is_dictionary ? std::vector<bool>{} : column_compressed_);
    QUIVER_ASSIGN_OR_RETURN(UnloadedBatch unloaded, unloader.Unload(columns, num_rows));
    const std::string ranges =
        options_.column_ranges && !is_dictionary && num_rows > 0 ? EncodeColumnRanges(columns) : std::string();
    return WriteUnloadedMessage(unloaded, is_dictionary, dictionary_id, is_delta, ranges);
  }

  Status WriteUnloadedMessage(const UnloadedBatch& u, bool is_dictionary, int64_t dictionary_id, bool is_delta,
                              const std::string& ranges = std::string()) {
    std::vector<fb::Buffer> fb_buffers;
    fb_buffers.reserve(u.regions.size());
    int64_t offset = 0;
    for (const auto& r : u.regions) {
      fb_buffers.emplace_back(offset, r.region_bytes());
      offset += RoundUpTo8(r.region_bytes());
    }
    const int64_t body_len = offset;
    std::vector<fb::FieldNode> nodes;
    nodes.reserve(u.nodes.size());
    for (const auto& n : u.nodes) nodes.emplace_back(n.length, n.null_count);
    flatbuffers::FlatBufferBuilder fbb;
    auto nodes_off = fbb.CreateVectorOfStructs(nodes);
    auto bufs = fbb.CreateVectorOfStructs(fb_buffers);
    flatbuffers::Offset<fb::BodyCompression> comp = 0;
    if (u.codec != CompressionType::kNone) {
      comp = fb::CreateBodyCompression(
          fbb, u.codec == CompressionType::kZstd ? fb::CompressionType::ZSTD : fb::CompressionType::LZ4_FRAME,
          fb::BodyCompressionMethod::BUFFER);
    }
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> variadic = 0;
    if (!u.variadic_buffer_counts.empty()) variadic = fbb.CreateVector(u.variadic_buffer_counts);
    auto rb = fb::CreateRecordBatch(fbb, u.num_rows, nodes_off, bufs, comp, variadic);
    // The codec level is not part of the format; quiver records it in the
    // message's custom metadata (kCompressionLevelMetadataKey, options.h) so
    // that `quiver stats` can show it.
    // With WriteOptions::column_ranges, the batch's integer column ranges
    // too (ipc/column_ranges.h).
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::KeyValue>>> md = 0;
    std::vector<flatbuffers::Offset<fb::KeyValue>> kvs;
    if (u.codec != CompressionType::kNone) {
      auto k = fbb.CreateString(kCompressionLevelMetadataKey.data(), kCompressionLevelMetadataKey.size());
      auto v = fbb.CreateString(std::to_string(u.codec_level));
      kvs.push_back(fb::CreateKeyValue(fbb, k, v));
    }
    if (!ranges.empty()) {
      auto k = fbb.CreateString(kColumnRangesMetadataKey.data(), kColumnRangesMetadataKey.size());
      auto v = fbb.CreateString(ranges);
      kvs.push_back(fb::CreateKeyValue(fbb, k, v));
    }
    if (!kvs.empty()) md = fbb.CreateVector(kvs);
    flatbuffers::Offset<fb::Message> msg;
    if (is_dictionary) {
      auto db = fb::CreateDictionaryBatch(fbb, dictionary_id, rb, is_delta);
      msg =
          fb::CreateMessage(fbb, fb::MetadataVersion::V5, fb::MessageHeader::DictionaryBatch, db.Union(), body_len, md);
    } else {
      msg = fb::CreateMessage(fbb, fb::MetadataVersion::V5, fb::MessageHeader::RecordBatch, rb.Union(), body_len, md);
    }
    fbb.Finish(msg);
    fb::Block block;
    QUIVER_RETURN_NOT_OK(WriteMessage(fbb, u.regions, body_len, &block));
    stats_.body_bytes += body_len;
    stats_.uncompressed_body_bytes += u.uncompressed_bytes;
    if (format_ == IpcFormat::kFile) {
      (is_dictionary ? dictionary_blocks_ : record_blocks_).push_back(block);
    }
    return Status::OK();
  }

  Status WriteMessage(const flatbuffers::FlatBufferBuilder& fbb, const std::vector<CompressedRegion>& regions,
                      int64_t body_len, fb::Block* block) {
    const int64_t start = sink_->position();
    const int64_t meta = fbb.GetSize();
    const int64_t padded = RoundUpTo8(8 + meta) - 8;
    uint8_t head[8];
    bit_util::StoreLE<uint32_t>(head, 0xFFFFFFFFu);
    bit_util::StoreLE<int32_t>(head + 4, static_cast<int32_t>(padded));
    QUIVER_RETURN_NOT_OK(Write({head, 8}));
    QUIVER_RETURN_NOT_OK(Write({fbb.GetBufferPointer(), static_cast<size_t>(meta)}));
    QUIVER_RETURN_NOT_OK(Write({kZeros, static_cast<size_t>(padded - meta)}));
    for (const auto& r : regions) {
      if (r.raw) {
        uint8_t p[kRegionPrefixBytes];
        EncodeRegionPrefix(kRawRegionPrefix, p);
        QUIVER_RETURN_NOT_OK(Write({p, sizeof p}));
      }
      if (r.bytes && r.bytes->size() > 0) QUIVER_RETURN_NOT_OK(Write(r.bytes->span()));
      const int64_t pad = RoundUpTo8(r.region_bytes()) - r.region_bytes();
      QUIVER_RETURN_NOT_OK(Write({kZeros, static_cast<size_t>(pad)}));
    }
    if (block != nullptr) *block = fb::Block(start, static_cast<int32_t>(8 + padded), body_len);
    return Status::OK();
  }

  OutputStream* sink_;
  SchemaPtr schema_;
  IpcFormat format_;
  WriteOptions options_;
  CompressionType batch_codec_ = CompressionType::kNone;
  std::vector<bool> column_compressed_;
  bool has_dictionaries_ = false;
  std::unique_ptr<BufferCompressor> compressor_;
  std::unordered_map<int64_t, ArrayDataPtr> written_;
  std::vector<fb::Block> dictionary_blocks_;
  std::vector<fb::Block> record_blocks_;
  WriteStats stats_;
  bool closed_ = false;
};

}  // namespace

int64_t UnloadedBatch::body_bytes() const {
  int64_t n = 0;
  for (const auto& r : regions) n += RoundUpTo8(r.region_bytes());
  return n;
}

int64_t UnloadedBatch::region_bytes() const {
  int64_t n = 0;
  for (const auto& r : regions) n += r.region_bytes();
  return n;
}

int64_t UnloadedBatch::held_bytes() const {
  int64_t n = 0;
  for (const auto& r : regions) n += r.held_bytes();
  return n;
}

Result<UnloadedBatch> BatchUnloader::Unload(const std::vector<ArrayDataPtr>& columns, int64_t num_rows) {
  RawBuffers raw;
  std::vector<ArrayDataPtr> compact;  // keeps compacted slices alive while compressing
  compact.reserve(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    QUIVER_ASSIGN_OR_RETURN(auto c, CompactArray(columns[i], pool_));
    Collector collector(&raw, static_cast<int>(i));
    QUIVER_RETURN_NOT_OK(collector.Unload(*c));
    compact.push_back(std::move(c));
  }
  UnloadedBatch out;
  out.num_rows = num_rows;
  out.nodes = std::move(raw.nodes);
  out.variadic_buffer_counts = std::move(raw.variadic_counts);
  if (compressor_ != nullptr) {
    out.codec = compressor_->codec();
    out.codec_level = compressor_->level();
  }
  out.regions.reserve(raw.buffers.size());
  for (size_t i = 0; i < raw.buffers.size(); ++i) {
    const auto& b = raw.buffers[i];
    CompressedRegion r;
    if (b != nullptr && b->size() > 0) {
      out.uncompressed_bytes += b->size();
      const int col = raw.buffer_column[i];
      const bool compress = column_compressed_.empty() || column_compressed_[static_cast<size_t>(col)];
      if (compressor_ != nullptr && compress) {
        QUIVER_ASSIGN_OR_RETURN(r, compressor_->Compress(b));
      } else if (compressor_ != nullptr) {
        r = CompressedRegion::StoredRaw(b);  // a column left raw inside a compressed batch
      } else {
        r.bytes = b;  // a batch without body compression: no prefixes
      }
    }
    out.regions.push_back(std::move(r));
  }
  return out;
}

namespace {

void MaxDictionaryId(const Field& f, int64_t* max_id);

void MaxDictionaryIdOfType(const DataType& t, int64_t* max_id) {
  for (const auto& c : t.children) MaxDictionaryId(*c, max_id);
  if (t.value_type) MaxDictionaryIdOfType(*t.value_type, max_id);
}

void MaxDictionaryId(const Field& f, int64_t* max_id) {
  if (f.type->id == TypeId::kDictionary) *max_id = std::max(*max_id, f.dictionary_id);
  MaxDictionaryIdOfType(*f.type, max_id);
}

FieldPtr WithIds(const FieldPtr& f, int64_t* next_id, bool* changed);

DataTypePtr TypeWithIds(const DataTypePtr& t, int64_t* next_id, bool* changed) {
  bool any = false;
  auto copy = std::make_shared<DataType>(*t);
  for (auto& c : copy->children) {
    bool c_changed = false;
    c = WithIds(c, next_id, &c_changed);
    any |= c_changed;
  }
  if (copy->value_type) {
    bool v_changed = false;
    copy->value_type = TypeWithIds(copy->value_type, next_id, &v_changed);
    any |= v_changed;
  }
  *changed |= any;
  return any ? DataTypePtr(std::move(copy)) : t;
}

FieldPtr WithIds(const FieldPtr& f, int64_t* next_id, bool* changed) {
  bool any = false;
  DataTypePtr type = TypeWithIds(f->type, next_id, &any);
  const bool needs_id = f->type->id == TypeId::kDictionary && f->dictionary_id < 0;
  if (!any && !needs_id) return f;
  auto copy = std::make_shared<Field>(*f);
  copy->type = std::move(type);
  if (needs_id) copy->dictionary_id = (*next_id)++;
  *changed = true;
  return copy;
}

/// `schema` with a fresh dictionary id (above every id in use) for each
/// dictionary-encoded field that has none (-1): schemas built in memory or
/// imported through the C Data Interface carry no IPC ids, and fields that
/// share an id share one dictionary in the stream (Arrow C++ assigns ids the
/// same way when writing). Fields with ids keep them.
SchemaPtr AssignDictionaryIds(const SchemaPtr& schema) {
  int64_t max_id = -1;
  for (const auto& f : schema->fields) MaxDictionaryId(*f, &max_id);
  int64_t next_id = max_id + 1;
  bool changed = false;
  auto copy = std::make_shared<Schema>(*schema);
  for (auto& f : copy->fields) f = WithIds(f, &next_id, &changed);
  return changed ? SchemaPtr(std::move(copy)) : schema;
}

}  // namespace

Result<std::unique_ptr<RecordBatchWriter>> RecordBatchWriter::Make(OutputStream* sink, SchemaPtr schema,
                                                                   IpcFormat format, WriteOptions options) {
  if (!schema) return Status::Invalid("RecordBatchWriter: null schema");
  schema = AssignDictionaryIds(schema);
  auto w = std::make_unique<WriterImpl>(sink, std::move(schema), format, std::move(options));
  QUIVER_RETURN_NOT_OK(w->Start());
  return std::unique_ptr<RecordBatchWriter>(std::move(w));
}

Status WriteTable(OutputStream* sink, const SchemaPtr& schema, const std::vector<RecordBatchPtr>& batches,
                  IpcFormat format, const WriteOptions& options, int64_t max_rows_per_batch, WriteStats* stats) {
  QUIVER_ASSIGN_OR_RETURN(auto writer, RecordBatchWriter::Make(sink, schema, format, options));
  for (const auto& b : batches) {
    if (max_rows_per_batch <= 0 || b->num_rows <= max_rows_per_batch) {
      QUIVER_RETURN_NOT_OK(writer->WriteBatch(*b));
      continue;
    }
    for (int64_t off = 0; off < b->num_rows; off += max_rows_per_batch) {
      QUIVER_ASSIGN_OR_RETURN(auto piece, SliceBatch(b, off, std::min(max_rows_per_batch, b->num_rows - off)));
      QUIVER_RETURN_NOT_OK(writer->WriteBatch(*piece));
    }
  }
  QUIVER_RETURN_NOT_OK(writer->Close());
  if (stats) *stats = writer->stats();
  return Status::OK();
}

}  // namespace quiver::ipc
