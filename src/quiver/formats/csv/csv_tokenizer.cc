#include "quiver/formats/csv/csv_tokenizer.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace quiver::formats::csv {
namespace {

// The first position at or after `p` (below `n`) whose byte is the
// delimiter, LF or CR; `n` when there is none. 16 bytes at a time with
// SSE2 (the byte loop was two thirds of the tokenizer's time).
inline int64_t UnquotedFieldEnd(const char* t, int64_t p, int64_t n, char delim, const bool* stop) {
#if defined(__SSE2__)
  const __m128i d = _mm_set1_epi8(delim);
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r');
  while (p + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + p));
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, d), _mm_cmpeq_epi8(v, lf)), _mm_cmpeq_epi8(v, cr));
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < n && !stop[static_cast<unsigned char>(t[p])]) ++p;
  return p;
}

inline Status Append(std::vector<FieldRef>* out, const FieldRef& f) {
  out->push_back(f);
  return Status::OK();
}
inline Status Append(PoolArray<FieldRef>* out, const FieldRef& f) { return out->push_back(f); }
inline void Truncate(std::vector<FieldRef>* out, size_t n) { out->resize(n); }
inline void Truncate(PoolArray<FieldRef>* out, size_t n) { out->truncate(n); }

}  // namespace

std::string CsvWhere(std::string_view source, int64_t line) {
  return std::string(source) + ": line " + std::to_string(line);
}

Tokenizer::Tokenizer(std::string_view text, char delim, char quote, std::string_view source, int64_t first_line,
                     bool at_end)
    : t_(text), delim_(delim), quote_(quote), source_(source), line_(first_line), at_end_(at_end) {
  stop_[static_cast<unsigned char>(delim)] = true;
  stop_[static_cast<unsigned char>('\n')] = true;
  stop_[static_cast<unsigned char>('\r')] = true;
}

template <typename Fields>
Result<RowStatus> Tokenizer::NextRow(Fields* out, int64_t* row_line) {
  const size_t base = out->size();
  auto need_more = [&] {
    Truncate(out, base);
    return RowStatus::kNeedMore;
  };
  const int64_t n = static_cast<int64_t>(t_.size());
  const char* t = t_.data();
  int64_t pos = pos_;
  int64_t line = line_;
  if (blank_rows_ && pos < n && (t[pos] == '\n' || t[pos] == '\r')) {
    // A blank line is a row of one empty field (a table of one column).
    int64_t p = pos;
    if (t[p] == '\r') {
      if (p + 1 >= n && !at_end_) return RowStatus::kNeedMore;  // CRLF split over the end?
      if (p + 1 < n && t[p + 1] == '\n') ++p;
    }
    *row_line = line;
    if (max_stored_ > 0) {
      QUIVER_RETURN_NOT_OK(Append(out, FieldRef{pos, pos, false, false}));
    }
    row_fields_ = 1;
    pos_ = p + 1;
    line_ = line + 1;
    return RowStatus::kRow;
  }
  // Blank lines are skipped (each line end counts: LF, CRLF, lone CR).
  while (!blank_rows_ && pos < n && (t[pos] == '\n' || t[pos] == '\r')) {
    if (t[pos] == '\r') {
      if (pos + 1 >= n && !at_end_) return RowStatus::kNeedMore;
      if (pos + 1 < n && t[pos + 1] == '\n') ++pos;
    }
    ++line;
    ++pos;
  }
  if (pos >= n) {
    if (!at_end_) return RowStatus::kNeedMore;
    pos_ = pos;
    line_ = line;
    return RowStatus::kEnd;
  }
  *row_line = line;
  size_t count = 0;  // fields of the row so far (those past max_stored_ are counted, not stored)
  while (true) {
    FieldRef f;
    if (t[pos] == quote_) {
      f.quoted = true;
      const int64_t open_line = line;
      int64_t p = pos + 1;
      f.begin = p;
      while (true) {
        // Jump to the next quote, counting the line ends passed.
        const void* q = p < n ? std::memchr(t + p, quote_, static_cast<size_t>(n - p)) : nullptr;
        const int64_t qpos = q ? static_cast<const char*>(q) - t : n;
        for (int64_t i = p; i < qpos; ++i) {
          if (t[i] == '\n') {
            ++line;
          } else if (t[i] == '\r' && (i + 1 >= n || t[i + 1] != '\n')) {
            ++line;
          }
        }
        if (qpos >= n) {
          if (!at_end_) return need_more();
          return Status::Invalid(CsvWhere(source_, open_line) + ", column " + std::to_string(count + 1) +
                                 ": quoted field not closed before the end of the text");
        }
        p = qpos;
        if (p + 1 >= n && !at_end_) return need_more();  // "" split over the end?
        if (p + 1 < n && t[p + 1] == quote_) {
          f.escaped = true;
          p += 2;
          continue;
        }
        break;
      }
      f.end = p;
      pos = p + 1;
      if (pos < n && t[pos] != delim_ && t[pos] != '\n' && t[pos] != '\r') {
        return Status::Invalid(CsvWhere(source_, line) + ", column " + std::to_string(count + 1) +
                               ": unexpected character after a closing quote");
      }
    } else {
      const int64_t p = UnquotedFieldEnd(t, pos, n, delim_, stop_);
      f.begin = pos;
      f.end = p;
      pos = p;
    }
    if (count++ < max_stored_) {
      QUIVER_RETURN_NOT_OK(Append(out, f));
    }
    if (pos >= n) {
      if (!at_end_) return need_more();
      row_fields_ = count;
      pos_ = pos;
      line_ = line;
      return RowStatus::kRow;
    }
    const char c = t[pos];
    if (c == delim_) {
      ++pos;
      if (pos >= n) {  // a delimiter ends the text: one more empty field
        if (!at_end_) return need_more();
        if (count++ < max_stored_) {
          QUIVER_RETURN_NOT_OK(Append(out, FieldRef{pos, pos, false, false}));
        }
        row_fields_ = count;
        pos_ = pos;
        line_ = line;
        return RowStatus::kRow;
      }
      continue;
    }
    // Line end: LF, CRLF or a lone CR.
    if (c == '\r') {
      if (pos + 1 >= n && !at_end_) return need_more();
      ++pos;
      if (pos < n && t[pos] == '\n') ++pos;
    } else {
      ++pos;
    }
    row_fields_ = count;
    pos_ = pos;
    line_ = line + 1;
    return RowStatus::kRow;
  }
}

template Result<RowStatus> Tokenizer::NextRow(std::vector<FieldRef>* out, int64_t* row_line);
template Result<RowStatus> Tokenizer::NextRow(PoolArray<FieldRef>* out, int64_t* row_line);

std::string_view UnescapeField(std::string_view raw, char quote, std::string* scratch) {
  scratch->clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    scratch->push_back(raw[i]);
    if (raw[i] == quote && i + 1 < raw.size() && raw[i + 1] == quote) ++i;
  }
  return *scratch;
}

int64_t CsvLineEndsIn(std::string_view text) {
  int64_t n = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const void* lf = std::memchr(p, '\n', static_cast<size_t>(end - p));
    const char* stop = lf ? static_cast<const char*>(lf) : end;
    // Lone CRs before the LF (or the end).
    for (const char* cr = p; cr < stop; ++cr) {
      if (*cr == '\r' && cr + 1 != stop) ++n;
      if (*cr == '\r' && cr + 1 == stop && stop == end) ++n;
    }
    if (!lf) break;
    ++n;
    p = stop + 1;
  }
  return n;
}

}  // namespace quiver::formats::csv
