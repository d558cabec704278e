// quiver/formats/csv/csv_quote_chain.h — what a parallel CSV parse of
// consecutive pieces of one text (the byte ranges of csv_ranges.h, the zstd
// frames of csv_frames.h) shares: the quote state at each piece's first
// boundary, published piece by piece, and the per-thread field scratch.
//
// A piece k starts at a boundary (a row start, or a line end inside a
// quoted value). It scans its own bytes for quotes twice, once assuming it
// starts outside a quoted field and once inside, and publishes the two end
// states; the state at piece k + 1 is the state at k carried through piece
// k, from "outside" at piece 0. A piece waits only for the pieces before it
// to publish (their quote scans, not their parses).
//
// Thread safety: every member may be called from several threads at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/csv/csv_reader.h"

namespace quiver::formats::csv {

/// Whether a scan of `t` that starts inside a quoted field (or not) ends
/// inside one. A quote opens a field only at a field start (after a
/// delimiter or line end; `t` starts at a row start or after an LF);
/// inside, a doubled quote is an escaped one. Thread safety: pure.
bool CsvEndsInsideQuotes(std::string_view t, bool inside, char delim, char quote);

/// Scanning helpers over a window of a text: `W` has `Status Ensure(int64_t
/// upto)` (makes bytes up to `upto` readable, fewer only at the text's
/// end), `int64_t end() const` (readable up to there) and `const char*
/// at(int64_t pos) const`.
///
/// The position after the first LF at or after `from` (the end of the text
/// when there is none). Errors: Ensure's.
template <typename W>
Result<int64_t> CsvNextLineStart(int64_t from, int64_t step_bytes, W* w) {
  while (true) {
    if (from >= w->end()) QUIVER_RETURN_NOT_OK(w->Ensure(from + step_bytes));
    if (from >= w->end()) return w->end();
    const void* lf = std::memchr(w->at(from), '\n', static_cast<size_t>(w->end() - from));
    if (lf != nullptr) return from + (static_cast<const char*>(lf) - w->at(from)) + 1;
    from = w->end();
  }
}

/// The start of the row after the one `pos` is in (inside a quoted field
/// when `inside`): past the quoted field, then to the next line end
/// outside quotes (the end of the text when there is none). Errors: Ensure's.
template <typename W>
Result<int64_t> CsvRowRestEnd(int64_t pos, bool inside, char delim, char quote, W* w) {
  const int64_t begin = pos;
  while (true) {
    if (pos + 1 >= w->end()) QUIVER_RETURN_NOT_OK(w->Ensure(w->end() + 4096));
    if (pos >= w->end()) return w->end();
    const char c = *w->at(pos);
    const bool has_next = pos + 1 < w->end();
    const char next = has_next ? *w->at(pos + 1) : '\0';
    if (inside) {
      if (c == quote) {
        if (has_next && next == quote) {
          pos += 2;
          continue;
        }
        inside = false;
      }
      ++pos;
      continue;
    }
    if (c == '\n') return pos + 1;
    if (c == '\r') return has_next && next == '\n' ? pos + 2 : pos + 1;
    if (c == quote) {
      const char prev = pos == begin ? '\n' : *w->at(pos - 1);
      if (prev == delim || prev == '\n' || prev == '\r') inside = true;
    }
    ++pos;
  }
}

/// The quote states at the boundaries of `num_pieces` pieces, and a free
/// list of field scratch (one per thread parsing at once).
class CsvQuoteChain {
 public:
  explicit CsvQuoteChain(int64_t num_pieces);
  /// Piece k's end states, starting outside / inside a quoted field.
  void Publish(int64_t k, bool end_if_outside, bool end_if_inside);
  /// A piece failed before publishing: the pieces after it stop waiting
  /// (WaitStart returns `st`).
  void Fail(const Status& st);
  /// Whether piece k starts inside a quoted field, once the pieces before
  /// it published. Errors: the failure of a piece before it.
  Result<bool> WaitStart(int64_t k);
  /// Piece k's end state for its start state (after Publish(k)).
  bool EndInside(int64_t k, bool start_inside);
  /// A scratch for one parse (from the free list, or a new one of `pool`),
  /// and back to the list after it.
  std::unique_ptr<CsvRowScratch> TakeScratch(MemoryPool* pool);
  void GiveBackScratch(std::unique_ptr<CsvRowScratch> scratch);

 private:
  std::mutex mutex_;
  std::condition_variable published_;
  int64_t num_pieces_;
  std::vector<int8_t> end_if_outside_;  // -1 until piece k publishes
  std::vector<int8_t> end_if_inside_;
  std::vector<int8_t> start_inside_;  // -1 until known; [0] = 0
  int64_t resolved_ = 1;              // start_inside_[0 .. resolved_) known
  Status failure_;
  std::vector<std::unique_ptr<CsvRowScratch>> free_scratch_;
};

}  // namespace quiver::formats::csv
