#include "quiver/ipc/reader.h"

#include <cstring>
#include <filesystem>
#include <forward_list>
#include <optional>
#include <unordered_map>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/concatenate.h"
#include "quiver/columnar/layout.h"
#include "quiver/columnar/validate.h"
#include "quiver/compression/body_region.h"
#include "quiver/compression/codec.h"
#include "quiver/ipc/metadata_internal.h"

namespace quiver::ipc {
namespace {

constexpr uint32_t kContinuation = 0xFFFFFFFFu;
constexpr uint8_t kFileMagic[6] = {'A', 'R', 'R', 'O', 'W', '1'};

std::string Msg(int64_t index) { return "message " + std::to_string(index); }

/// Copies a flatbuffer struct out of a vector element. Struct vectors are
/// aligned relative to the end of the flatbuffer, which writers do not
/// always place on an 8-byte boundary, and the verifier does not check
/// element alignment: never bind a reference to them.
template <typename Struct, typename Vector>
Struct LoadStruct(const Vector* vector, int64_t i) {
  Struct out;
  std::memcpy(static_cast<void*>(&out), vector->Data() + static_cast<size_t>(i) * sizeof(Struct), sizeof(Struct));
  return out;
}

// ---- framing (no I/O) ------------------------------------------------------

/// How a message starts: prefix size, declared metadata size, or the end.
struct FramePrefix {
  int prefix_bytes = 0;  // 8 (continuation + length) or 4 (legacy)
  int64_t metadata_bytes = 0;
  bool end_of_stream = false;
};

/// What the first bytes of an input that is not Arrow IPC look like, when
/// that is cheap to tell from them: "Parquet (PAR1 magic)", "gzip-compressed
/// data", "a Feather V1 file (FEA1 magic)", "text (CSV, JSON, ...)"; empty
/// otherwise. Pure.
std::string DescribeNonIpc(std::span<const uint8_t> head) {
  auto starts = [&](std::string_view magic) {
    return head.size() >= magic.size() && std::memcmp(head.data(), magic.data(), magic.size()) == 0;
  };
  if (starts("PAR1")) return "Parquet (PAR1 magic)";
  if (starts("FEA1")) return "a Feather V1 file (FEA1 magic)";
  if (starts("\x1f\x8b\x08")) return "gzip-compressed data";
  if (starts("\x28\xb5\x2f\xfd")) return "a ZSTD frame";
  if (starts("\x04\x22\x4d\x18")) return "an LZ4 frame";
  if (starts("PK\x03\x04")) return "a ZIP archive";
  if (starts("\xef\xbb\xbf")) return "text (UTF-8 with BOM: CSV, JSON, ...)";
  bool text = !head.empty();
  for (uint8_t c : head) {
    if (!(c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c < 0x7f) || c >= 0x80)) text = false;
  }
  if (text) return "text (CSV, JSON, ...)";
  return "";
}

/// Decodes the framing at a message start from `bytes` (the next up to 8
/// bytes). `at_input_start`: these are the first bytes of the whole input
/// (a stream's first message), where an implausible legacy length means the
/// input is not Arrow IPC at all (issue 10 item 6); `input_bytes` is the
/// input's whole size when known (else -1).
Result<FramePrefix> DecodeFramePrefix(std::span<const uint8_t> bytes, int64_t index, const ReadOptions& options,
                                      bool at_input_start = false, int64_t input_bytes = -1) {
  FramePrefix out;
  if (bytes.empty()) {
    out.end_of_stream = true;  // stream ended without an end-of-stream marker
    return out;
  }
  if (bytes.size() < 4) {
    return Status::Invalid(Msg(index) + ": truncated message prefix (" + std::to_string(bytes.size()) + " of 4 bytes)");
  }
  uint32_t first = bit_util::LoadLE<uint32_t>(bytes.data());
  int64_t len;
  if (first == kContinuation) {
    if (bytes.size() < 8) {
      return Status::Invalid(Msg(index) + ": truncated message prefix (" + std::to_string(bytes.size()) +
                             " of 8 bytes)");
    }
    out.prefix_bytes = 8;
    len = bit_util::LoadLE<int32_t>(bytes.data() + 4);
  } else {
    out.prefix_bytes = 4;  // legacy pre-0.15 framing
    len = static_cast<int32_t>(first);
  }
  if (len == 0) {
    out.end_of_stream = true;
    return out;
  }
  const std::string looks = at_input_start && out.prefix_bytes == 4 ? DescribeNonIpc(bytes) : std::string();
  if (at_input_start && out.prefix_bytes == 4 &&
      (len < 0 || len > options.max_metadata_bytes || (input_bytes >= 0 && len > input_bytes - 4) || !looks.empty())) {
    // Neither the ARROW1 magic (checked before), nor a continuation marker,
    // nor a plausible legacy (pre-0.15) metadata length, or a known magic of
    // another format.
    return Status::Invalid("not Arrow IPC data" + (looks.empty() ? std::string() : " (it looks like " + looks + ")") +
                           ": no ARROW1 magic, no continuation marker, and the first 4 bytes read as a metadata "
                           "length of " +
                           std::to_string(len) + " bytes");
  }
  if (len < 0) {
    return Status::Invalid(Msg(index) + ": negative metadata length " + std::to_string(len));
  }
  if (len > options.max_metadata_bytes) {
    return Status::Invalid(Msg(index) + ": metadata length " + std::to_string(len) + " exceeds the limit of " +
                           std::to_string(options.max_metadata_bytes) + " bytes");
  }
  out.metadata_bytes = len;
  return out;
}

/// One framed message: verified metadata and its body.
struct RawMessage {
  int64_t index = 0;
  std::shared_ptr<Buffer> metadata;  // 8-byte aligned flatbuffer bytes
  const fb::Message* message = nullptr;
  std::shared_ptr<Buffer> body;
};

/// Returns `buf` if its address is 8-byte aligned, else an aligned pool copy.
Result<std::shared_ptr<Buffer>> Aligned(std::shared_ptr<Buffer> buf, MemoryPool* pool) {
  if ((reinterpret_cast<uintptr_t>(buf->data()) & 7) == 0) return buf;
  return Buffer::CopyOf(pool, buf->span());
}

Result<RawMessage> ParseMetadata(std::shared_ptr<Buffer> metadata, int64_t index, const ReadOptions& options) {
  RawMessage raw;
  raw.index = index;
  QUIVER_ASSIGN_OR_RETURN(raw.metadata, Aligned(std::move(metadata), options.pool));
  auto verified = VerifyMessage(raw.metadata->span(), options);
  if (!verified.ok()) return verified.status().WithContext(Msg(index));
  raw.message = *verified;
  const int64_t body_len = raw.message->body_length();
  if (body_len < 0) {
    return Status::Invalid(Msg(index) + ": negative body length " + std::to_string(body_len));
  }
  if (body_len > options.max_body_bytes) {
    return Status::Invalid(Msg(index) + ": body length " + std::to_string(body_len) + " exceeds the limit of " +
                           std::to_string(options.max_body_bytes) + " bytes");
  }
  return raw;
}

// ---- message sources (the only place that touches bytes or streams) -------

class MessageSource {
 public:
  virtual ~MessageSource() = default;
  /// The next message, or nullopt at the end of the stream.
  virtual Result<std::optional<RawMessage>> Next() = 0;
};

/// Messages from bytes in memory, sliced zero-copy.
class BufferMessageSource : public MessageSource {
 public:
  BufferMessageSource(std::shared_ptr<Buffer> bytes, int64_t start, const ReadOptions& options)
      : bytes_(std::move(bytes)), pos_(start), options_(options) {}

  Result<std::optional<RawMessage>> Next() override {
    if (done_) return std::optional<RawMessage>();
    const int64_t avail = bytes_->size() - pos_;
    const auto head = std::span<const uint8_t>(bytes_->data() + pos_, static_cast<size_t>(std::min<int64_t>(avail, 8)));
    QUIVER_ASSIGN_OR_RETURN(FramePrefix fp,
                            DecodeFramePrefix(head, index_, options_, index_ == 0 && pos_ == 0, bytes_->size()));
    if (fp.end_of_stream) {
      done_ = true;
      return std::optional<RawMessage>();
    }
    if (!RangeInBounds(pos_ + fp.prefix_bytes, fp.metadata_bytes, bytes_->size())) {
      return Status::Invalid(Msg(index_) + ": metadata of " + std::to_string(fp.metadata_bytes) +
                             " bytes runs past the end of the input (" + std::to_string(avail - fp.prefix_bytes) +
                             " bytes left)");
    }
    auto meta = Buffer::Slice(bytes_, pos_ + fp.prefix_bytes, fp.metadata_bytes);
    QUIVER_ASSIGN_OR_RETURN(RawMessage raw, ParseMetadata(std::move(meta), index_, options_));
    const int64_t body_start = pos_ + fp.prefix_bytes + fp.metadata_bytes;
    const int64_t body_len = raw.message->body_length();
    if (!RangeInBounds(body_start, body_len, bytes_->size())) {
      return Status::Invalid(Msg(index_) + ": body of " + std::to_string(body_len) +
                             " bytes runs past the end of the input (" + std::to_string(bytes_->size() - body_start) +
                             " bytes left)");
    }
    raw.body = Buffer::Slice(bytes_, body_start, body_len);
    pos_ = body_start + body_len;
    ++index_;
    return std::optional<RawMessage>(std::move(raw));
  }

 private:
  std::shared_ptr<Buffer> bytes_;
  int64_t pos_;
  const ReadOptions& options_;
  int64_t index_ = 0;
  bool done_ = false;
};

/// Messages read from a sequential stream, one message in memory at a time.
class StreamMessageSource : public MessageSource {
 public:
  StreamMessageSource(std::unique_ptr<InputStream> input, const ReadOptions& options)
      : input_(std::move(input)), options_(options) {}

  Result<std::optional<RawMessage>> Next() override {
    if (done_) return std::optional<RawMessage>();
    uint8_t head[8];
    QUIVER_ASSIGN_OR_RETURN(int64_t got, ReadUpTo(head, 4));
    if (got == 4 && bit_util::LoadLE<uint32_t>(head) == kContinuation) {
      QUIVER_ASSIGN_OR_RETURN(int64_t more, ReadUpTo(head + 4, 4));
      got += more;
    }
    QUIVER_ASSIGN_OR_RETURN(FramePrefix fp,
                            DecodeFramePrefix({head, static_cast<size_t>(got)}, index_, options_, index_ == 0));
    if (fp.end_of_stream) {
      done_ = true;
      return std::optional<RawMessage>();
    }
    QUIVER_ASSIGN_OR_RETURN(auto meta, ReadExactly(fp.metadata_bytes, "metadata"));
    QUIVER_ASSIGN_OR_RETURN(RawMessage raw, ParseMetadata(std::move(meta), index_, options_));
    QUIVER_ASSIGN_OR_RETURN(raw.body, ReadExactly(raw.message->body_length(), "body"));
    ++index_;
    return std::optional<RawMessage>(std::move(raw));
  }

 private:
  Result<int64_t> ReadUpTo(uint8_t* out, int64_t n) {
    int64_t done = 0;
    while (done < n) {
      QUIVER_ASSIGN_OR_RETURN(int64_t r, input_->Read({out + done, static_cast<size_t>(n - done)}));
      if (r == 0) break;
      done += r;
    }
    return done;
  }

  // Grows the buffer as bytes arrive (from 64 KiB, doubling when full), so
  // a lying length costs at most about twice the bytes really present. When
  // the pool refuses to grow it, the rest is read through a small scratch
  // buffer to tell a truncated message (Invalid, what the input is) from one
  // that really does not fit (the pool's OutOfMemory) (issue 10 item 3).
  Result<std::shared_ptr<Buffer>> ReadExactly(int64_t n, const char* what) {
    constexpr int64_t kFirstBytes = int64_t{64} << 10;
    auto truncated = [&](int64_t have) {
      return Status::Invalid(Msg(index_) + ": " + what + " truncated: declared " + std::to_string(n) + " bytes, got " +
                             std::to_string(have));
    };
    int64_t cap = std::min<int64_t>(n, kFirstBytes);
    auto first = Buffer::Allocate(options_.pool, cap);
    if (!first.ok()) {
      QUIVER_RETURN_NOT_OK(DrainOrFail(n, 0, what));
      return first.status();
    }
    std::shared_ptr<Buffer> buf = std::move(first).value();
    int64_t have = 0;
    while (have < n) {
      if (have == cap) {
        const int64_t next_cap = cap > n / 2 ? n : cap * 2;
        Status grown = buf->Resize(next_cap, false);
        if (!grown.ok()) {
          buf.reset();  // give the bytes back before reading on
          QUIVER_RETURN_NOT_OK(DrainOrFail(n, have, what));
          return grown;
        }
        cap = next_cap;
      }
      QUIVER_ASSIGN_OR_RETURN(int64_t r, input_->Read({buf->mutable_data() + have, static_cast<size_t>(cap - have)}));
      if (r == 0) return truncated(have);
      have += r;
    }
    return buf;
  }

  // After a failed allocation with `have` of `n` bytes read: reads on (and
  // discards) up to n bytes; Invalid naming the truncation if the input
  // ends first, OK if all n bytes are there.
  Status DrainOrFail(int64_t n, int64_t have, const char* what) {
    uint8_t scratch[4096];
    while (have < n) {
      QUIVER_ASSIGN_OR_RETURN(
          int64_t r, input_->Read({scratch, static_cast<size_t>(std::min<int64_t>(n - have, sizeof scratch))}));
      if (r == 0) {
        return Status::Invalid(Msg(index_) + ": " + what + " truncated: declared " + std::to_string(n) +
                               " bytes, got " + std::to_string(have));
      }
      have += r;
    }
    return Status::OK();
  }

  std::unique_ptr<InputStream> input_;
  const ReadOptions& options_;
  int64_t index_ = 0;
  bool done_ = false;
};

// ---- body decoding -------------------------------------------------------

struct DictionaryEntry {
  DataTypePtr value_type;
  ArrayDataPtr dictionary;
};

/// Turns the body of one RecordBatch message (a record batch, or the
/// values of a dictionary batch) into arrays, in three passes over its
/// buffers, as Arrow C++ does (ArrayLoader, then DecompressBuffers, then the
/// endianness swap):
///   1. Load(): walk the schema against the field nodes and buffer list;
///      every buffer is located and bounds-checked, nothing is decoded or
///      allocated (arrays get empty buffer slots);
///   2. Decode(): decompress every region of a compressed body
///      (DecodeRegion), or slice it when the body is not compressed;
///   3. then, still in Decode(): each buffer in native form (realigned and
///      byte-swapped as the options and the schema's endianness ask), and
///      into its array's slot.
/// So a malformed batch is rejected by its structure before any
/// decompression; errors name the message, field path and buffer index.
/// Single use: Load() each field, CheckAllConsumed(), then Decode() once.
class BodyLoader {
 public:
  BodyLoader(const fb::RecordBatch* rb, std::shared_ptr<Buffer> body, Codec* codec, bool big_endian, bool v4,
             const ReadOptions& options, int64_t message_index,
             const std::unordered_map<int64_t, DictionaryEntry>* dictionaries)
      : rb_(rb),
        body_(std::move(body)),
        codec_(codec),
        big_endian_(big_endian),
        v4_(v4),
        options_(options),
        index_(message_index),
        dictionaries_(dictionaries) {}

  /// Where the sizes of the buffers located from now on are added
  /// (nullptr = not collected).
  void set_stats(ColumnBodyStats* stats) { stats_ = stats; }

  /// Pass 1 for one field (`path` its name in error texts; it must outlive
  /// Decode()): the array with its children and dictionary, checked against
  /// the field nodes and buffer list, its buffers located but still empty
  /// (nullptr) until Decode().
  Result<ArrayDataPtr> Load(const Field& field, const std::string& path, int depth) {
    if (depth > options_.max_nesting_depth) {
      return Status::Invalid(Where(path) + ": nesting deeper than " + std::to_string(options_.max_nesting_depth));
    }
    const auto* nodes = rb_->nodes();
    const int64_t num_nodes = nodes ? nodes->size() : 0;
    if (node_i_ >= num_nodes) {
      return Status::Invalid(Where(path) + ": field node " + std::to_string(node_i_) + " missing (the batch has " +
                             std::to_string(num_nodes) + ")");
    }
    const fb::FieldNode node_value = LoadStruct<fb::FieldNode>(nodes, node_i_++);
    const fb::FieldNode* node = &node_value;
    auto out = std::make_shared<ArrayData>();
    out->type = field.type;
    out->length = node->length();
    out->null_count = node->null_count();
    if (out->length < 0 || out->null_count < 0 || out->null_count > out->length) {
      return Status::Invalid(Where(path) + ": field node length " + std::to_string(out->length) + " / null count " +
                             std::to_string(out->null_count) + " out of range");
    }
    const DataType& t = field.type->id == TypeId::kDictionary ? *field.type->index_type : *field.type;
    auto child = [&](const FieldPtr& f) -> Status {
      // Kept for the error texts of the later passes (stable addresses).
      child_paths_.push_front(path + "." + f->name);
      QUIVER_ASSIGN_OR_RETURN(auto c, Load(*f, child_paths_.front(), depth + 1));
      out->children.push_back(std::move(c));
      return Status::OK();
    };
    // The buffers the layout table lists, then the variadic buffers of
    // views, then the children; dictionaries load as their index type.
    const TypeLayout layout = LayoutOf(t);
    if (IsUnion(t.id) && v4_) {
      // Metadata V4 unions carry a validity bitmap; V5 dropped it.
      // Located and decoded (for its errors) like any buffer, then dropped.
      QUIVER_RETURN_NOT_OK(LocateBuffer(nullptr, -1, false, path, "validity (V4 union)", ByteSwapRule::kNone));
      if (out->null_count != 0) {
        return Status::NotImplemented(Where(path) + ": V4 union with " + std::to_string(out->null_count) +
                                      " top-level nulls");
      }
    }
    if (!layout.has_validity) out->null_count = t.id == TypeId::kNull ? out->length : 0;
    const BufferLayout& last = layout.buffers[static_cast<size_t>(std::max(layout.num_buffers - 1, 0))];
    if (last.kind == BufferKind::kValues && last.element_bits <= 0 && t.id != TypeId::kFixedSizeBinary) {
      return Status::NotImplemented(Where(path) + ": cannot load type " + t.ToString());
    }
    out->buffers.reserve(static_cast<size_t>(layout.num_buffers));
    for (int i = 0; i < layout.num_buffers; ++i) {
      const BufferLayout& spec = layout.buffers[static_cast<size_t>(i)];
      QUIVER_RETURN_NOT_OK(LocateBuffer(out.get(), static_cast<int32_t>(out->buffers.size()),
                                        spec.kind == BufferKind::kValidity, path, spec.name, spec.swap));
      out->buffers.emplace_back();
    }
    if (layout.variadic_data) {
      const auto* counts = rb_->variadic_buffer_counts();
      const int64_t n_counts = counts ? counts->size() : 0;
      if (variadic_i_ >= n_counts) {
        return Status::Invalid(Where(path) + ": variadic buffer count " + std::to_string(variadic_i_) +
                               " missing (the batch has " + std::to_string(n_counts) + ")");
      }
      int64_t n;
      std::memcpy(&n, counts->Data() + sizeof(int64_t) * static_cast<size_t>(variadic_i_++), sizeof n);
      const int64_t total = rb_->buffers() ? rb_->buffers()->size() : 0;
      if (n < 0 || n > total - buffer_i_) {
        return Status::Invalid(Where(path) + ": variadic buffer count " + std::to_string(n) + " exceeds the " +
                               std::to_string(total - buffer_i_) + " buffers left");
      }
      for (int64_t i = 0; i < n; ++i) {
        QUIVER_RETURN_NOT_OK(LocateBuffer(out.get(), static_cast<int32_t>(out->buffers.size()), false, path,
                                          "variadic data", ByteSwapRule::kNone));
        out->buffers.emplace_back();
      }
    }
    for (const auto& c : t.children) QUIVER_RETURN_NOT_OK(child(c));
    if (field.type->id == TypeId::kDictionary) {
      auto it = dictionaries_->find(field.dictionary_id);
      if (it == dictionaries_->end() || it->second.dictionary == nullptr) {
        return Status::Invalid(Where(path) + ": dictionary id " + std::to_string(field.dictionary_id) +
                               " has not been read before this batch");
      }
      out->dictionary = it->second.dictionary;
    }
    return ArrayDataPtr(std::move(out));
  }

  /// After loading: every node and buffer of the message must be used.
  Status CheckAllConsumed() const {
    const int64_t n_nodes = rb_->nodes() ? rb_->nodes()->size() : 0;
    const int64_t n_bufs = rb_->buffers() ? rb_->buffers()->size() : 0;
    if (node_i_ != n_nodes) {
      return Status::Invalid(Msg(index_) + ": the schema uses " + std::to_string(node_i_) +
                             " field nodes but the batch has " + std::to_string(n_nodes));
    }
    if (buffer_i_ != n_bufs) {
      return Status::Invalid(Msg(index_) + ": the schema uses " + std::to_string(buffer_i_) +
                             " buffers but the batch has " + std::to_string(n_bufs));
    }
    return Status::OK();
  }

  /// Passes 2 and 3 over the buffers Load() located, in buffer order:
  /// decompress (or slice) every region, then bring each buffer to native
  /// form and into its array's slot. On error the arrays are incomplete
  /// and not to be used; what was decoded is released with them and the
  /// loader.
  Status Decode() {
    // 2. Decode: a compressed body's region is decompressed (or, stored
    //    raw, sliced past its prefix) by the one region rule.
    for (PendingBuffer& p : pending_) {
      if (p.length == 0) {
        p.bytes = Buffer::Slice(body_, p.offset, 0);
      } else if (codec_ != nullptr) {
        const RegionLimits limits{options_.max_decompressed_bytes, options_.max_compression_ratio};
        QUIVER_ASSIGN_OR_RETURN(DecodedRegion region,
                                DecodeRegion(body_, p.offset, p.length, *codec_, limits, options_.pool, Where(p)));
        p.bytes = std::move(region.bytes);
        p.owned = region.decompressed;
      } else {
        p.bytes = Buffer::Slice(body_, p.offset, p.length);
      }
      if (p.stats) p.stats->uncompressed_bytes += p.bytes->size();
    }
    // 3. Native form: realigned and byte-swapped as the options and the
    //    schema's endianness ask; then into the arrays.
    for (PendingBuffer& p : pending_) {
      QUIVER_ASSIGN_OR_RETURN(p.bytes, ToNative(std::move(p.bytes), p.owned, p.swap, [&] { return Where(p); }));
      if (p.array == nullptr) continue;
      if (p.validity && (p.array->null_count == 0 || p.bytes->size() == 0)) p.bytes = nullptr;
      p.array->buffers[static_cast<size_t>(p.slot)] = std::move(p.bytes);
    }
    pending_.clear();
    return Status::OK();
  }

 private:
  std::string Where(const std::string& path) const { return Msg(index_) + ": field '" + path + "'"; }

  /// Pass 1 for one IPC buffer: its region is located and bounds-checked;
  /// it will go to array->buffers[slot] (nullptr: decoded, then dropped),
  /// or nullptr when `validity` and the array has no nulls or the buffer
  /// decodes empty.
  Status LocateBuffer(ArrayData* array, int32_t slot, bool validity, const std::string& path, std::string_view role,
                      ByteSwapRule swap) {
    const auto* buffers = rb_->buffers();
    const int64_t total = buffers ? buffers->size() : 0;
    const int64_t bi = buffer_i_++;
    if (bi >= total) {
      return Status::Invalid(Where(path, bi, role) + ": missing (the batch has " + std::to_string(total) + " buffers)");
    }
    // `total` is the message's word: reserve no more than a typical batch.
    if (pending_.empty()) pending_.reserve(static_cast<size_t>(std::min<int64_t>(total, 256)));
    const fb::Buffer b = LoadStruct<fb::Buffer>(buffers, bi);
    const int64_t offset = b.offset();
    const int64_t length = b.length();
    if (!RangeInBounds(offset, length, body_->size())) {
      return Status::Invalid(Where(path, bi, role) + ": region [" + std::to_string(offset) + ", +" +
                             std::to_string(length) + ") is outside the body of " + std::to_string(body_->size()) +
                             " bytes");
    }
    if (stats_) {
      stats_->stored_buffer_bytes.push_back(length);
      stats_->stored_bytes += length;
    }
    pending_.push_back(
        PendingBuffer{array, slot, validity, swap, bi, offset, length, &path, role, stats_, nullptr, false});
    return Status::OK();
  }

  /// One IPC buffer between the passes.
  struct PendingBuffer {
    ArrayData* array;  // owner of the slot; nullptr: decoded, then dropped
    int32_t slot;
    bool validity;
    ByteSwapRule swap;
    int64_t index;  // in the message's buffer list
    int64_t offset;
    int64_t length;
    const std::string* path;  // the field's (a schema name or child_paths_)
    std::string_view role;    // static text
    ColumnBodyStats* stats;
    std::shared_ptr<Buffer> bytes;  // passes 2 and 3
    bool owned;                     // bytes is a fresh pool buffer we may modify
  };

  std::string Where(const std::string& path, int64_t bi, std::string_view role) const {
    return Where(path) + " buffer " + std::to_string(bi) + " (" + std::string(role) + ")";
  }
  std::string Where(const PendingBuffer& p) const { return Where(*p.path, p.index, p.role); }

  template <typename Where>
  Result<std::shared_ptr<Buffer>> ToNative(std::shared_ptr<Buffer> out, bool owned, ByteSwapRule swap,
                                           const Where& where) const {
    const bool misaligned = (reinterpret_cast<uintptr_t>(out->data()) & 7) != 0;
    const bool must_swap = big_endian_ && swap != ByteSwapRule::kNone && out->size() > 0;
    if (!owned && out->size() > 0 && (must_swap || (misaligned && options_.ensure_alignment))) {
      auto copy = Buffer::CopyOf(options_.pool, out->span());
      if (!copy.ok()) return copy.status().WithContext(where());
      out = std::move(copy).value();
    }
    if (must_swap) ByteSwapBuffer(out->mutable_data(), out->size(), swap);
    return out;
  }

  const fb::RecordBatch* rb_;
  std::shared_ptr<Buffer> body_;
  Codec* codec_;
  bool big_endian_;
  bool v4_;
  const ReadOptions& options_;
  int64_t index_;
  const std::unordered_map<int64_t, DictionaryEntry>* dictionaries_;
  ColumnBodyStats* stats_ = nullptr;
  std::vector<PendingBuffer> pending_;
  std::forward_list<std::string> child_paths_;  // stable addresses; no allocation when empty
  int64_t node_i_ = 0;
  int64_t buffer_i_ = 0;
  int64_t variadic_i_ = 0;
};

Status CollectDictionaryTypes(const Field& f, std::unordered_map<int64_t, DictionaryEntry>* out) {
  const DataType& t = *f.type;
  if (t.id == TypeId::kDictionary) {
    auto [it, inserted] = out->try_emplace(f.dictionary_id, DictionaryEntry{t.value_type, nullptr});
    if (!inserted && !it->second.value_type->Equals(*t.value_type)) {
      return Status::Invalid("field '" + f.name + "': dictionary id " + std::to_string(f.dictionary_id) +
                             " is used with value types " + it->second.value_type->ToString() + " and " +
                             t.value_type->ToString());
    }
    for (const auto& c : t.value_type->children) QUIVER_RETURN_NOT_OK(CollectDictionaryTypes(*c, out));
    return Status::OK();
  }
  for (const auto& c : t.children) QUIVER_RETURN_NOT_OK(CollectDictionaryTypes(*c, out));
  return Status::OK();
}

// ---- the reader ------------------------------------------------------------

class ReaderImpl : public RecordBatchReader {
 public:
  explicit ReaderImpl(ReadOptions options) : options_(std::move(options)) {}
  const ReadOptions& options() const { return options_; }

  const SchemaPtr& schema() const override { return schema_; }
  IpcFormat format() const override { return format_; }
  const BatchBodyStats& last_batch_stats() const override { return last_stats_; }
  int64_t num_dictionary_batches() const override { return num_dict_batches_; }
  int64_t num_dictionary_deltas() const override { return num_dict_deltas_; }
  std::string metadata_version() const override { return MetadataVersionName(version_); }

  /// Stream format: the first message must be a Schema.
  Status OpenStream(std::unique_ptr<MessageSource> source) {
    format_ = IpcFormat::kStream;
    source_ = std::move(source);
    QUIVER_ASSIGN_OR_RETURN(std::optional<RawMessage> first, source_->Next());
    if (!first) return Status::Invalid("stream has no schema message (empty input or end-of-stream marker first)");
    if (first->message->header_type() != fb::MessageHeader::Schema) {
      return Status::Invalid(Msg(0) + ": expected a Schema message first, got " +
                             std::string(fb::EnumNameMessageHeader(first->message->header_type())));
    }
    version_ = first->message->version();
    auto schema = SchemaFromFlatbuffer(first->message->header_as_Schema(), options_);
    if (!schema.ok()) return schema.status().WithContext(Msg(0));
    return SetSchema(std::move(schema).value());
  }

  /// File format: footer, schema, dictionaries, then batches by block.
  Status OpenFile(std::shared_ptr<Buffer> bytes) {
    format_ = IpcFormat::kFile;
    file_ = std::move(bytes);
    const int64_t size = file_->size();
    const uint8_t* d = file_->data();
    if (size < 18)
      return Status::Invalid("file of " + std::to_string(size) + " bytes is too small for the IPC file format");
    if (std::memcmp(d + size - 6, kFileMagic, 6) != 0) {
      return Status::Invalid("file does not end with the ARROW1 magic (truncated file?)");
    }
    const int64_t footer_len = bit_util::LoadLE<int32_t>(d + size - 10);
    const int64_t footer_start = size - 10 - footer_len;
    if (footer_len <= 0 || footer_start < 8) {
      return Status::Invalid("footer length " + std::to_string(footer_len) + " does not fit a file of " +
                             std::to_string(size) + " bytes");
    }
    QUIVER_ASSIGN_OR_RETURN(footer_buf_, Aligned(Buffer::Slice(file_, footer_start, footer_len), options_.pool));
    auto footer = VerifyFooter(footer_buf_->span(), options_);
    if (!footer.ok()) return footer.status().WithContext("file footer");
    footer_ = *footer;
    footer_end_ = footer_start;
    version_ = footer_->version();
    if (version_ < fb::MetadataVersion::V4 && footer_start > 16) {
      // Pre-0.15 writers left the footer version unset: report the schema
      // message's version instead (best effort; the footer stays authoritative).
      auto head = std::span<const uint8_t>(d + 8, 8);
      auto fp = DecodeFramePrefix(head, 0, options_);
      if (fp.ok() && !fp->end_of_stream && RangeInBounds(8 + fp->prefix_bytes, fp->metadata_bytes, footer_start)) {
        auto meta = Aligned(Buffer::Slice(file_, 8 + fp->prefix_bytes, fp->metadata_bytes), options_.pool);
        if (meta.ok()) {
          auto m = VerifyMessage((*meta)->span(), options_);
          if (m.ok()) version_ = (*m)->version();
        }
      }
    }
    auto schema = SchemaFromFlatbuffer(footer_->schema(), options_);
    if (!schema.ok()) return schema.status().WithContext("file footer");
    QUIVER_RETURN_NOT_OK(SetSchema(std::move(schema).value()));
    if (const auto* dicts = footer_->dictionaries(); dicts != nullptr) {
      for (flatbuffers::uoffset_t i = 0; i < dicts->size(); ++i) {
        QUIVER_ASSIGN_OR_RETURN(RawMessage raw,
                                ReadBlock(LoadStruct<fb::Block>(dicts, i), "dictionary block " + std::to_string(i)));
        if (raw.message->header_type() != fb::MessageHeader::DictionaryBatch) {
          return Status::Invalid("dictionary block " + std::to_string(i) + " holds a " +
                                 std::string(fb::EnumNameMessageHeader(raw.message->header_type())) + " message");
        }
        QUIVER_RETURN_NOT_OK(ApplyDictionary(raw));
      }
    }
    return Status::OK();
  }

  /// Errors of Next() carry `context` in front ("'PATH'" for OpenPath), as
  /// the open's do.
  void set_error_context(std::string context) { error_context_ = std::move(context); }

  Result<RecordBatchPtr> Next() override {
    Result<RecordBatchPtr> batch = NextBatch();
    if (!batch.ok() && !error_context_.empty()) return batch.status().WithContext(error_context_);
    return batch;
  }

 private:
  Result<RecordBatchPtr> NextBatch() {
    if (format_ == IpcFormat::kFile) {
      const auto* blocks = footer_->record_batches();
      const int64_t n = blocks ? blocks->size() : 0;
      if (next_block_ >= n) return RecordBatchPtr();
      const int64_t bi = next_block_++;
      QUIVER_ASSIGN_OR_RETURN(RawMessage raw,
                              ReadBlock(LoadStruct<fb::Block>(blocks, bi), "record batch block " + std::to_string(bi)));
      raw.index = bi;
      if (raw.message->header_type() != fb::MessageHeader::RecordBatch) {
        return Status::Invalid("record batch block " + std::to_string(bi) + " holds a " +
                               std::string(fb::EnumNameMessageHeader(raw.message->header_type())) + " message");
      }
      return LoadBatch(raw);
    }
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(std::optional<RawMessage> raw, source_->Next());
      if (!raw) return RecordBatchPtr();
      switch (raw->message->header_type()) {
        case fb::MessageHeader::DictionaryBatch: QUIVER_RETURN_NOT_OK(ApplyDictionary(*raw)); continue;
        case fb::MessageHeader::RecordBatch: return LoadBatch(*raw);
        case fb::MessageHeader::Schema: return Status::Invalid(Msg(raw->index) + ": unexpected second Schema message");
        case fb::MessageHeader::Tensor:
        case fb::MessageHeader::SparseTensor:
          return Status::NotImplemented(Msg(raw->index) + ": tensor messages are not supported");
        default:
          return Status::Invalid(Msg(raw->index) + ": unknown message header type " +
                                 std::to_string(static_cast<int>(raw->message->header_type())));
      }
    }
  }

 private:
  Status SetSchema(SchemaPtr schema) {
    schema_ = std::move(schema);
    for (const auto& f : schema_->fields) QUIVER_RETURN_NOT_OK(CollectDictionaryTypes(*f, &dictionaries_));
    return Status::OK();
  }

  Result<RawMessage> ReadBlock(const fb::Block& block, const std::string& what) {
    const int64_t off = block.offset();
    const int64_t meta_len = block.metadata_length();
    const int64_t body_len = block.body_length();
    int64_t end;
    if (off < 8 || meta_len < 8 || body_len < 0 || !CheckedAdd(off, meta_len, &end) ||
        !CheckedAdd(end, body_len, &end) || end > footer_end_) {
      return Status::Invalid(what + ": offset " + std::to_string(off) + ", metadata " + std::to_string(meta_len) +
                             " and body " + std::to_string(body_len) + " bytes do not fit before the footer at " +
                             std::to_string(footer_end_));
    }
    auto head = std::span<const uint8_t>(file_->data() + off, 8);
    QUIVER_ASSIGN_OR_RETURN(FramePrefix fp, DecodeFramePrefix(head, next_block_, options_));
    if (fp.end_of_stream || fp.prefix_bytes + fp.metadata_bytes > meta_len) {
      return Status::Invalid(what + ": message framing (" + std::to_string(fp.metadata_bytes) +
                             " bytes of metadata) does not fit the block's metadata length " +
                             std::to_string(meta_len));
    }
    auto meta = Buffer::Slice(file_, off + fp.prefix_bytes, fp.metadata_bytes);
    auto parsed = ParseMetadata(std::move(meta), 0, options_);
    if (!parsed.ok()) return parsed.status().WithContext(what);
    RawMessage raw = std::move(parsed).value();
    if (raw.message->body_length() > body_len) {
      return Status::Invalid(what + ": message body length " + std::to_string(raw.message->body_length()) +
                             " exceeds the block's " + std::to_string(body_len));
    }
    raw.body = Buffer::Slice(file_, off + meta_len, raw.message->body_length());
    return raw;
  }

  Result<Codec*> CodecFor(const fb::RecordBatch* rb, int64_t index) {
    const fb::BodyCompression* c = rb->compression();
    if (c == nullptr) return static_cast<Codec*>(nullptr);
    if (c->method() != fb::BodyCompressionMethod::BUFFER) {
      return Status::NotImplemented(Msg(index) + ": body compression method " +
                                    std::to_string(static_cast<int>(c->method())));
    }
    CompressionType type;
    switch (c->codec()) {
      case fb::CompressionType::LZ4_FRAME: type = CompressionType::kLz4Frame; break;
      case fb::CompressionType::ZSTD: type = CompressionType::kZstd; break;
      default:
        return Status::Invalid(Msg(index) + ": unknown compression codec " +
                               std::to_string(static_cast<int>(c->codec())));
    }
    auto& slot = codecs_[static_cast<int>(type)];
    if (!slot) {
      QUIVER_ASSIGN_OR_RETURN(slot, Codec::Make(type));
    }
    return slot.get();
  }

  Result<RecordBatchPtr> LoadBatch(const RawMessage& raw) {
    const fb::RecordBatch* rb = raw.message->header_as_RecordBatch();
    if (rb == nullptr) return Status::Invalid(Msg(raw.index) + ": record batch header missing");
    if (rb->length() < 0)
      return Status::Invalid(Msg(raw.index) + ": negative batch length " + std::to_string(rb->length()));
    QUIVER_ASSIGN_OR_RETURN(Codec * codec, CodecFor(rb, raw.index));
    // Body statistics only when asked (ReadOptions::collect_body_stats):
    // otherwise no copies and no per-buffer bookkeeping.
    const bool collect = options_.collect_body_stats;
    const bool keep_metadata = collect || options_.collect_message_metadata;
    BatchBodyStats stats;
    if (keep_metadata) {
      stats.message_index = raw.index;
      stats.num_rows = rb->length();
      stats.message_metadata = MetadataFrom(raw.message->custom_metadata());
    }
    if (collect) {
      stats.codec = codec ? codec->type() : CompressionType::kNone;
      stats.metadata_bytes = raw.metadata->size();
      stats.body_bytes = raw.body->size();
      stats.columns.resize(schema_->fields.size());
    }
    BodyLoader loader(rb, raw.body, codec, schema_->big_endian, raw.message->version() == fb::MetadataVersion::V4,
                      options_, raw.index, &dictionaries_);
    auto batch = std::make_shared<RecordBatch>();
    batch->schema = schema_;
    batch->num_rows = rb->length();
    for (size_t i = 0; i < schema_->fields.size(); ++i) {
      const Field& f = *schema_->fields[i];
      if (collect) {
        stats.columns[i].name = f.name;
        loader.set_stats(&stats.columns[i]);
      }
      QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr col, loader.Load(f, f.name, 1));
      if (col->length != batch->num_rows) {
        return Status::Invalid(Msg(raw.index) + ": column '" + f.name + "' has " + std::to_string(col->length) +
                               " rows, the batch declares " + std::to_string(batch->num_rows));
      }
      batch->columns.push_back(std::move(col));
    }
    QUIVER_RETURN_NOT_OK(loader.CheckAllConsumed());
    QUIVER_RETURN_NOT_OK(loader.Decode());
    if (options_.validation != ValidationLevel::kNone) {
      QUIVER_RETURN_NOT_OK_CTX(ValidateBatch(*batch, options_.validation), Msg(raw.index));
    }
    if (keep_metadata) last_stats_ = std::move(stats);
    return RecordBatchPtr(std::move(batch));
  }

  Status ApplyDictionary(const RawMessage& raw) {
    const fb::DictionaryBatch* db = raw.message->header_as_DictionaryBatch();
    if (db == nullptr || db->data() == nullptr)
      return Status::Invalid(Msg(raw.index) + ": dictionary batch data missing");
    const int64_t id = db->id();
    auto it = dictionaries_.find(id);
    if (it == dictionaries_.end()) {
      return Status::Invalid(Msg(raw.index) + ": dictionary batch for id " + std::to_string(id) +
                             " that no schema field uses");
    }
    const fb::RecordBatch* rb = db->data();
    QUIVER_ASSIGN_OR_RETURN(Codec * codec, CodecFor(rb, raw.index));
    BodyLoader loader(rb, raw.body, codec, schema_->big_endian, raw.message->version() == fb::MetadataVersion::V4,
                      options_, raw.index, &dictionaries_);
    Field value_field{"dictionary " + std::to_string(id), it->second.value_type, true, {}, -1};
    QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr values, loader.Load(value_field, value_field.name, 1));
    QUIVER_RETURN_NOT_OK(loader.CheckAllConsumed());
    if (values->length != rb->length()) {
      return Status::Invalid(Msg(raw.index) + ": dictionary " + std::to_string(id) + " has " +
                             std::to_string(values->length) + " values, the batch declares " +
                             std::to_string(rb->length()));
    }
    QUIVER_RETURN_NOT_OK(loader.Decode());
    if (options_.validation != ValidationLevel::kNone) {
      QUIVER_RETURN_NOT_OK_CTX(ValidateArray(*values, options_.validation, value_field.name), Msg(raw.index));
    }
    ++num_dict_batches_;
    if (db->is_delta()) {
      ++num_dict_deltas_;
      if (it->second.dictionary == nullptr) {
        it->second.dictionary = std::move(values);
      } else {
        QUIVER_ASSIGN_OR_RETURN(it->second.dictionary,
                                ConcatenateArrays({it->second.dictionary, values}, options_.pool));
      }
    } else {
      if (format_ == IpcFormat::kFile && it->second.dictionary != nullptr) {
        return Status::Invalid(Msg(raw.index) + ": dictionary " + std::to_string(id) +
                               " replaced in a file (the file format allows only deltas)");
      }
      it->second.dictionary = std::move(values);
    }
    return Status::OK();
  }

  ReadOptions options_;
  std::string error_context_;
  IpcFormat format_ = IpcFormat::kStream;
  SchemaPtr schema_;
  fb::MetadataVersion version_ = fb::MetadataVersion::V5;
  std::unique_ptr<MessageSource> source_;
  std::shared_ptr<Buffer> file_;
  std::shared_ptr<Buffer> footer_buf_;
  const fb::Footer* footer_ = nullptr;
  int64_t footer_end_ = 0;
  int64_t next_block_ = 0;
  std::unordered_map<int64_t, DictionaryEntry> dictionaries_;
  std::unique_ptr<Codec> codecs_[2];
  BatchBodyStats last_stats_;
  int64_t num_dict_batches_ = 0;
  int64_t num_dict_deltas_ = 0;
};

}  // namespace

std::string_view IpcFormatName(IpcFormat format) { return format == IpcFormat::kFile ? "file" : "stream"; }

Result<std::unique_ptr<RecordBatchReader>> RecordBatchReader::Open(std::shared_ptr<Buffer> bytes, ReadOptions options) {
  if (options.pool == nullptr) return Status::Invalid("ReadOptions.pool is required");
  auto reader = std::make_unique<ReaderImpl>(std::move(options));
  const bool is_file = bytes->size() >= 8 && std::memcmp(bytes->data(), kFileMagic, 6) == 0;
  if (is_file) {
    QUIVER_RETURN_NOT_OK(reader->OpenFile(std::move(bytes)));
  } else {
    QUIVER_RETURN_NOT_OK(
        reader->OpenStream(std::make_unique<BufferMessageSource>(std::move(bytes), 0, reader->options())));
  }
  return std::unique_ptr<RecordBatchReader>(std::move(reader));
}

Result<std::unique_ptr<RecordBatchReader>> RecordBatchReader::OpenStream(std::unique_ptr<InputStream> input,
                                                                         ReadOptions options) {
  if (options.pool == nullptr) return Status::Invalid("ReadOptions.pool is required");
  auto reader = std::make_unique<ReaderImpl>(std::move(options));
  QUIVER_RETURN_NOT_OK(reader->OpenStream(std::make_unique<StreamMessageSource>(std::move(input), reader->options())));
  return std::unique_ptr<RecordBatchReader>(std::move(reader));
}

namespace {

/// Gives back bytes already read from `inner` before reading on.
class PrefixedInputStream : public InputStream {
 public:
  PrefixedInputStream(std::vector<uint8_t> prefix, std::unique_ptr<InputStream> inner)
      : prefix_(std::move(prefix)), inner_(std::move(inner)) {}
  Result<int64_t> Read(std::span<uint8_t> out) override {
    if (pos_ < prefix_.size()) {
      const size_t n = std::min(out.size(), prefix_.size() - pos_);
      std::memcpy(out.data(), prefix_.data() + pos_, n);
      pos_ += n;
      return static_cast<int64_t>(n);
    }
    return inner_->Read(out);
  }

 private:
  std::vector<uint8_t> prefix_;
  size_t pos_ = 0;
  std::unique_ptr<InputStream> inner_;
};

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return path != "-" && std::filesystem::is_regular_file(path, ec);
}

}  // namespace

Result<std::unique_ptr<RecordBatchReader>> RecordBatchReader::OpenPath(const std::string& path, ReadOptions options) {
  if (options.pool == nullptr) return Status::Invalid("ReadOptions.pool is required");
  Result<std::unique_ptr<RecordBatchReader>> reader = Status::Invalid("unopened");
  if (IsRegularFile(path)) {
    QUIVER_ASSIGN_OR_RETURN(auto bytes, MapFile(path));
    return OpenFileBytes(std::move(bytes), path, std::move(options));
  } else {
    // stdin or a pipe: peek at the magic; a stream is then read message by
    // message (bounded memory), a file needs all its bytes.
    QUIVER_ASSIGN_OR_RETURN(auto input, OpenInputStream(path));
    std::vector<uint8_t> head(8);
    size_t got = 0;
    while (got < head.size()) {
      QUIVER_ASSIGN_OR_RETURN(int64_t n, input->Read({head.data() + got, head.size() - got}));
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    head.resize(got);
    const bool is_file = got >= 6 && std::memcmp(head.data(), kFileMagic, 6) == 0;
    auto prefixed = std::make_unique<PrefixedInputStream>(std::move(head), std::move(input));
    if (is_file) {
      QUIVER_ASSIGN_OR_RETURN(auto bytes, ReadAll(prefixed.get(), options.pool));
      reader = Open(std::move(bytes), std::move(options));
    } else {
      reader = OpenStream(std::move(prefixed), std::move(options));
    }
  }
  if (!reader.ok()) return reader.status().WithContext("'" + path + "'");
  // Every reader Open / OpenStream makes is a ReaderImpl.
  static_cast<ReaderImpl&>(**reader).set_error_context("'" + path + "'");
  return reader;
}

Result<std::unique_ptr<RecordBatchReader>> RecordBatchReader::OpenFileBytes(std::shared_ptr<Buffer> bytes,
                                                                            const std::string& path,
                                                                            ReadOptions options) {
  auto reader = Open(std::move(bytes), std::move(options));
  if (!reader.ok()) return reader.status().WithContext("'" + path + "'");
  static_cast<ReaderImpl&>(**reader).set_error_context("'" + path + "'");
  return reader;
}

Result<std::vector<RecordBatchPtr>> ReadAllBatches(RecordBatchReader* reader) {
  std::vector<RecordBatchPtr> out;
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, reader->Next());
    if (!b) break;
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace quiver::ipc
