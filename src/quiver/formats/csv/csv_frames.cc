#include "quiver/formats/csv/csv_frames.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "quiver/formats/csv/csv_tokenizer.h"

namespace quiver::formats::csv {
namespace {

constexpr int64_t kInputChunkBytes = int64_t{1} << 20;
constexpr int64_t kOutputStepBytes = int64_t{64} << 10;

// Line ends in `text` that follows a text whose last byte was a CR
// (`after_cr`): a CRLF split between the two is one line end.
int64_t LineEndsAfter(std::string_view text, bool after_cr) {
  int64_t n = CsvLineEndsIn(text);
  if (after_cr && !text.empty() && text[0] == '\n') --n;
  return n;
}

}  // namespace

// The text of the frames from a range's first one on, decompressed as far
// as it is asked for, into one pool buffer.
class CsvFrameScan::Window {
 public:
  // A text buffer and a decoder context from the scan's free lists, given
  // back when the window goes (their pages are reused: a fresh 8 MiB text
  // per range cost a page fault per 4 KiB).
  Window(const CsvFrameScan& scan, size_t first_frame, MemoryPool* pool)
      : scan_(scan), pool_(pool), first_frame_(first_frame), dctx_(scan.TakeDCtx()) {
    next_in_ = scan.frames_[first_frame].offset;
    text_ = scan.TakeText();
  }
  ~Window() {
    if (text_) scan_.GiveBackText(std::move(text_));
    if (dctx_) scan_.GiveBackDCtx(std::move(dctx_));
  }
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  int64_t end() const { return used_; }
  const char* at(int64_t pos) const { return reinterpret_cast<const char*>(text_->data()) + pos; }
  std::string_view text(int64_t b, int64_t e) const { return {at(b), static_cast<size_t>(e - b)}; }
  int64_t input_pos() const { return in_start_ + in_pos_; }

  // Decompresses frame `f` (the window's first) until its text reaches
  // `want` bytes or the frame ends.
  Status DecodeFrame(const ZstdFrameInfo& f, int64_t want, int64_t text_bound) {
    return Decode(f.offset + f.compressed_bytes, want, text_bound);
  }

  // Decompresses frames [first, end_frame) whole, each in one call straight
  // into the text (no copy through the decoder's window): their text is
  // [0, end()). The text's capacity is their bound (128 KiB a block, or the
  // declared content size when smaller), plus room for the block read
  // ahead after it; a frame whose text would pass its bound fails.
  Status DecompressOwn(size_t end_frame, int64_t text_bound) {
    if (!dctx_) return Status::OutOfMemory(scan_.source_->name() + ": zstd context");
    const int64_t base = scan_.frames_[first_frame_].offset;
    const ZstdFrameInfo& last = scan_.frames_[end_frame - 1];
    own_input_end_ = last.offset + last.compressed_bytes;
    const int64_t capacity = text_bound + 2 * kOutputStepBytes;
    if (!text_) {
      QUIVER_ASSIGN_OR_RETURN(text_, Buffer::Allocate(pool_, capacity));
    } else if (text_->size() < capacity) {
      QUIVER_RETURN_NOT_OK(text_->Resize(capacity, false));
    }
    QUIVER_ASSIGN_OR_RETURN(auto input, scan_.source_->ReadAt(base, own_input_end_ - base, pool_));
    for (size_t i = first_frame_; i < end_frame; ++i) {
      const ZstdFrameInfo& f = scan_.frames_[i];
      in_start_ = f.offset;  // where an error is
      in_pos_ = 0;
      const int64_t bound = std::min(f.TextBound(text_bound), text_bound - used_);
      const size_t n = ZSTD_decompressDCtx(dctx_.get(), text_->mutable_data() + used_, static_cast<size_t>(bound),
                                           input->data() + (f.offset - base), static_cast<size_t>(f.compressed_bytes));
      if (ZSTD_isError(n)) return Damaged(ZSTD_getErrorName(n));
      used_ += static_cast<int64_t>(n);
    }
    ZSTD_DCtx_reset(dctx_.get(), ZSTD_reset_session_only);
    in_start_ = own_input_end_;
    next_in_ = own_input_end_;
    return Status::OK();
  }

  // Makes text up to `upto` readable, decompressing the frames after the
  // range's own (fewer bytes only at the end of the file's text).
  Status Ensure(int64_t upto) {
    if (upto <= used_) return Status::OK();
    QUIVER_RETURN_NOT_OK(Decode(scan_.source_->size(), upto, INT64_MAX));
    if (used_ < upto && frame_open_) return Damaged("the file ends inside a frame (truncated)", true);
    return Status::OK();
  }

  // An error naming the frame at the input position (a decoder error
  // stops before the block it rejects), or before it (`ended`: the input
  // ran out, the position is after the frame).
  Status Damaged(const std::string& what, bool ended = false) const {
    const int64_t at = std::max<int64_t>(input_pos() - (ended ? 1 : 0), 0);
    size_t f = 0;
    while (f + 1 < scan_.frames_.size() && scan_.frames_[f + 1].offset <= at) ++f;
    std::string msg = scan_.source_->name() + ": zstd frame " + std::to_string(f + 1) + " of " +
                      std::to_string(scan_.frames_.size()) + " (at input byte " +
                      std::to_string(scan_.frames_[f].offset) + "): " + what + " at input byte " +
                      std::to_string(input_pos());
    if (!scan_.frames_[f].damage.empty()) msg += "; its headers: " + scan_.frames_[f].damage;
    return Status::Invalid(msg);
  }

 private:
  // Decompresses input up to byte `input_limit` until the text reaches
  // `want_used` bytes (or the input ends); the text never grows past
  // `max_text`.
  Status Decode(int64_t input_limit, int64_t want_used, int64_t max_text) {
    if (!dctx_) return Status::OutOfMemory(scan_.source_->name() + ": zstd context");
    while (used_ < want_used) {
      if ((!in_ || in_pos_ >= in_->size()) && !pending_) {
        if (next_in_ >= input_limit) break;
        const int64_t n = std::min(kInputChunkBytes, input_limit - next_in_);
        QUIVER_ASSIGN_OR_RETURN(in_, scan_.source_->ReadAt(next_in_, n, pool_));
        in_start_ = next_in_;
        in_pos_ = 0;
        next_in_ += n;
      }
      // Room: at least 64 KiB free; within the own frames the capacity
      // never passes their bound (plus one step, for a decoder that has
      // input left but no text: a checksum, a skippable frame).
      if (!text_ || text_->size() - used_ < kOutputStepBytes) {
        const int64_t cur = text_ ? text_->size() : 0;
        int64_t grown = 0;
        if (max_text == INT64_MAX) {  // reading ahead: what is asked for, or a quarter more
          grown = want_used == INT64_MAX ? cur * 2 + kOutputStepBytes
                                         : std::max(want_used + kOutputStepBytes, cur + cur / 4);
        } else {
          grown = std::min(max_text + kOutputStepBytes, std::max(cur * 2, used_ + kOutputStepBytes));
        }
        if (!text_) {
          QUIVER_ASSIGN_OR_RETURN(text_, Buffer::Allocate(pool_, grown));
        } else {
          QUIVER_RETURN_NOT_OK(text_->Resize(grown, false));
        }
      }
      int64_t room = text_->size() - used_;
      if (want_used != INT64_MAX) room = std::min(room, std::max(want_used - used_, kOutputStepBytes));
      ZSTD_inBuffer in{in_->data(), static_cast<size_t>(in_->size()), static_cast<size_t>(in_pos_)};
      ZSTD_outBuffer out{text_->mutable_data() + used_, static_cast<size_t>(room), 0};
      const size_t ret = ZSTD_decompressStream(dctx_.get(), &out, &in);
      in_pos_ = static_cast<int64_t>(in.pos);
      used_ += static_cast<int64_t>(out.pos);
      if (ZSTD_isError(ret)) return Damaged(ZSTD_getErrorName(ret));
      if (used_ > max_text) return Damaged("the text exceeds the frames' bound (128 KiB a block)");
      frame_open_ = ret != 0;
      pending_ = out.pos == out.size;  // the output is full: more may wait in the decoder
    }
    return Status::OK();
  }

  const CsvFrameScan& scan_;
  MemoryPool* pool_;
  size_t first_frame_;
  DCtxPtr dctx_;
  std::shared_ptr<Buffer> text_;
  int64_t used_ = 0;
  std::shared_ptr<Buffer> in_;
  int64_t in_start_ = 0;  // input byte of in_[0]
  int64_t in_pos_ = 0;
  int64_t next_in_ = 0;  // next input byte to read
  int64_t own_input_end_ = 0;
  bool frame_open_ = false;  // inside a frame (the decoder wants more input)
  bool pending_ = false;     // the last call filled the output
};

CsvFrameScan::~CsvFrameScan() = default;

std::shared_ptr<Buffer> CsvFrameScan::TakeText() const {
  std::lock_guard<std::mutex> lock(free_mutex_);
  if (free_text_.empty()) return nullptr;
  auto b = std::move(free_text_.back());
  free_text_.pop_back();
  return b;
}

void CsvFrameScan::GiveBackText(std::shared_ptr<Buffer> text) const {
  std::lock_guard<std::mutex> lock(free_mutex_);
  free_text_.push_back(std::move(text));
}

CsvFrameScan::DCtxPtr CsvFrameScan::TakeDCtx() const {
  {
    std::lock_guard<std::mutex> lock(free_mutex_);
    if (!free_dctx_.empty()) {
      auto d = std::move(free_dctx_.back());
      free_dctx_.pop_back();
      return d;
    }
  }
  return DCtxPtr(ZSTD_createDCtx(), ZSTD_freeDCtx);
}

void CsvFrameScan::GiveBackDCtx(DCtxPtr dctx) const {
  ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_only);
  std::lock_guard<std::mutex> lock(free_mutex_);
  free_dctx_.push_back(std::move(dctx));
}

Result<std::unique_ptr<CsvFrameScan>> CsvFrameScan::Open(std::shared_ptr<RandomAccessSource> source,
                                                         const CsvLayout& layout, const CsvOptions& options,
                                                         std::optional<std::vector<int>> columns, MemoryPool* pool,
                                                         CsvFrameScanOptions fo) {
  std::unique_ptr<CsvFrameScan> none;
  if (layout.schema == nullptr || layout.empty_text || source->remote()) return none;
  fo.target_range_bytes = std::max<int64_t>(fo.target_range_bytes, 1);
  QUIVER_ASSIGN_OR_RETURN(auto frames, FindZstdFrames(*source, pool, fo.max_range_text_bytes));
  if (frames.size() < 2) return none;
  for (const ZstdFrameInfo& f : frames) {
    if (f.TextBound(fo.max_range_text_bytes) > fo.max_range_text_bytes) return none;
  }
  CsvOptions o = options;
  o.batch_rows = int64_t{1} << 24;  // one batch per range
  std::unique_ptr<CsvFrameScan> scan(
      new CsvFrameScan(std::move(source), CsvRowConverter(layout, o, std::move(columns))));
  scan->frames_ = std::move(frames);
  // The frame where the data rows start (range 0 reaches at least to it):
  // each frame's text decompressed only as far as the data start.
  size_t data_frame = 0;
  for (int64_t text = 0; data_frame < scan->frames_.size(); ++data_frame) {
    const ZstdFrameInfo& f = scan->frames_[data_frame];
    Window one(*scan, data_frame, pool);
    if (!one.DecodeFrame(f, layout.data_offset - text + 1, f.TextBound(fo.max_range_text_bytes)).ok()) {
      return none;  // damaged: the serial read names the error
    }
    if (text + one.end() > layout.data_offset) break;
    text += one.end();
  }
  if (data_frame + 1 >= scan->frames_.size()) return none;  // no data rows in a later frame
  // Grouping: frames into ranges of about target_range_bytes of text.
  Range cur;
  for (size_t i = 0; i < scan->frames_.size(); ++i) {
    const int64_t bound = scan->frames_[i].TextBound(fo.max_range_text_bytes);
    if (cur.end_frame > cur.first_frame &&
        (cur.text_bound >= fo.target_range_bytes || cur.text_bound + bound > fo.max_range_text_bytes) &&
        i > data_frame) {
      scan->ranges_.push_back(cur);
      cur = Range{i, i, 0};
    }
    cur.end_frame = i + 1;
    cur.text_bound += bound;
  }
  scan->ranges_.push_back(cur);
  if (scan->ranges_.size() < 2) return none;
  scan->chain_ = std::make_unique<CsvQuoteChain>(scan->num_ranges());
  return scan;
}

int64_t CsvFrameScan::LineEndsBefore(size_t frame, bool* ends_with_cr, MemoryPool* pool) const {
  *ends_with_cr = false;
  if (frame == 0) return 0;
  DCtxPtr dctx = TakeDCtx();
  auto out = Buffer::Allocate(pool, kOutputStepBytes * 2);
  if (!dctx || !out.ok()) return -1;
  const int64_t limit = frames_[frame].offset;
  int64_t ends = 0;
  bool cr = false;
  for (int64_t at = 0; at < limit;) {
    const int64_t n = std::min(kInputChunkBytes, limit - at);
    auto in = source_->ReadAt(at, n, pool);
    if (!in.ok()) return -1;
    ZSTD_inBuffer ib{(*in)->data(), static_cast<size_t>(n), 0};
    ZSTD_outBuffer ob{};
    do {
      ob = ZSTD_outBuffer{(*out)->mutable_data(), static_cast<size_t>((*out)->size()), 0};
      const size_t ret = ZSTD_decompressStream(dctx.get(), &ob, &ib);
      if (ZSTD_isError(ret)) return -1;
      const std::string_view t(reinterpret_cast<const char*>((*out)->data()), ob.pos);
      ends += LineEndsAfter(t, cr);
      if (!t.empty()) cr = t.back() == '\r';
    } while (ib.pos < ib.size || ob.pos == ob.size);
    at += n;
  }
  *ends_with_cr = cr;
  return ends;
}

Status CsvFrameScan::WithLine(const Status& st, size_t first_frame, const Window& w, MemoryPool* pool) const {
  bool cr = false;
  const int64_t before = LineEndsBefore(first_frame, &cr, pool);
  if (before < 0) return st;
  const int64_t line = 1 + before + LineEndsAfter(w.text(0, w.end()), cr);
  return Status::Invalid(st.message() + "; the text decompressed before it ends on line " + std::to_string(line));
}

Result<RecordBatchPtr> CsvFrameScan::ParseRange(int64_t k, MemoryPool* pool) {
  if (k < 0 || k >= num_ranges()) return Status::Invalid("CSV frame range " + std::to_string(k) + " out of range");
  const Range& range = ranges_[static_cast<size_t>(k)];
  const CsvLayout& layout = converter_.layout();
  const bool last = k + 1 == num_ranges();
  Window w(*this, range.first_frame, pool);
  int64_t b = 0, e = 0, own_end = 0;
  Status st = w.DecompressOwn(range.end_frame, range.text_bound);
  if (st.ok()) {
    own_end = w.end();
    if (k == 0) {
      b = std::min(layout.data_offset, own_end);
    } else if (std::memchr(w.at(0), '\n', static_cast<size_t>(own_end)) == nullptr) {
      chain_->Publish(k, false, true);  // inside one line: the state passes through unchanged
      return converter_.EmptyBatch(pool);
    } else {
      b = static_cast<const char*>(std::memchr(w.at(0), '\n', static_cast<size_t>(own_end))) - w.at(0) + 1;
    }
    if (last) {
      e = own_end;
    } else {
      auto next = CsvNextLineStart(own_end, kOutputStepBytes, &w);
      if (next.ok()) {
        e = *next;
      } else {
        st = next.status();
      }
    }
  }
  if (!st.ok()) {
    st = WithLine(st, range.first_frame, w, pool);
    chain_->Fail(st);
    return st;
  }
  e = std::max(b, e);
  const std::string_view own = w.text(b, e);
  chain_->Publish(k, CsvEndsInsideQuotes(own, false, layout.delimiter, layout.quote),
                  CsvEndsInsideQuotes(own, true, layout.delimiter, layout.quote));
  QUIVER_ASSIGN_OR_RETURN(bool inside, chain_->WaitStart(k));
  int64_t start = b;
  if (inside && b < e) {
    auto r = CsvRowRestEnd(b, true, layout.delimiter, layout.quote, &w);
    if (!r.ok()) return WithLine(r.status(), range.first_frame, w, pool);
    start = *r;
  }
  if (b == e || start >= e) return converter_.EmptyBatch(pool);
  int64_t end = e;
  if (!last && chain_->EndInside(k, inside)) {
    auto r = CsvRowRestEnd(e, true, layout.delimiter, layout.quote, &w);
    if (!r.ok()) return WithLine(r.status(), range.first_frame, w, pool);
    end = *r;
  }
  const std::string_view text = w.text(start, end);
  std::unique_ptr<CsvRowScratch> scratch = chain_->TakeScratch(pool);
  auto chunk = converter_.Convert(text, 1, true, pool, source_->name(), scratch.get());
  if (!chunk.ok()) {
    // Again with the file's lines: those before the range and before `start`.
    bool cr = false;
    const int64_t before = LineEndsBefore(range.first_frame, &cr, pool);
    if (before >= 0) {
      const int64_t first_line = 1 + before + LineEndsAfter(w.text(0, start), cr);
      auto again = converter_.Convert(text, first_line, true, pool, source_->name(), scratch.get());
      if (!again.ok()) chunk = again.status();
    }
  }
  chain_->GiveBackScratch(std::move(scratch));
  if (!chunk.ok()) return chunk.status();
  if (chunk->batches.empty()) return converter_.EmptyBatch(pool);
  return std::move(chunk->batches[0]);
}

}  // namespace quiver::formats::csv
