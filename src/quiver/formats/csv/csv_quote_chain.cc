#include "quiver/formats/csv/csv_quote_chain.h"

#include <algorithm>

namespace quiver::formats::csv {

bool CsvEndsInsideQuotes(std::string_view text, bool inside, char delim, char quote) {
  const char* t = text.data();
  const int64_t e = static_cast<int64_t>(text.size());
  int64_t i = 0;
  while (i < e) {
    const void* q = std::memchr(t + i, quote, static_cast<size_t>(e - i));
    if (q == nullptr) break;
    const int64_t p = static_cast<const char*>(q) - t;
    if (inside) {
      if (p + 1 < e && t[p + 1] == quote) {
        i = p + 2;
        continue;
      }
      inside = false;
    } else {
      const char prev = p == 0 ? '\n' : t[p - 1];
      if (prev == delim || prev == '\n' || prev == '\r') inside = true;
    }
    i = p + 1;
  }
  return inside;
}

CsvQuoteChain::CsvQuoteChain(int64_t num_pieces)
    : num_pieces_(std::max<int64_t>(num_pieces, 1)),
      end_if_outside_(static_cast<size_t>(num_pieces_), -1),
      end_if_inside_(static_cast<size_t>(num_pieces_), -1),
      start_inside_(static_cast<size_t>(num_pieces_), -1) {
  start_inside_[0] = 0;
}

void CsvQuoteChain::Publish(int64_t k, bool end_if_outside, bool end_if_inside) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    end_if_outside_[static_cast<size_t>(k)] = end_if_outside ? 1 : 0;
    end_if_inside_[static_cast<size_t>(k)] = end_if_inside ? 1 : 0;
    // Resolve forward: the state at piece j + 1 is f_j(state at j).
    while (resolved_ < num_pieces_) {
      const size_t j = static_cast<size_t>(resolved_ - 1);
      const int8_t f = start_inside_[j] ? end_if_inside_[j] : end_if_outside_[j];
      if (f < 0) break;
      start_inside_[j + 1] = f;
      ++resolved_;
    }
  }
  published_.notify_all();
}

void CsvQuoteChain::Fail(const Status& st) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.ok()) failure_ = st;
  }
  published_.notify_all();
}

Result<bool> CsvQuoteChain::WaitStart(int64_t k) {
  std::unique_lock<std::mutex> lock(mutex_);
  published_.wait(lock, [&] { return resolved_ > k || !failure_.ok(); });
  if (resolved_ > k) return start_inside_[static_cast<size_t>(k)] == 1;
  return failure_;
}

bool CsvQuoteChain::EndInside(int64_t k, bool start_inside) {
  std::lock_guard<std::mutex> lock(mutex_);
  return (start_inside ? end_if_inside_ : end_if_outside_)[static_cast<size_t>(k)] == 1;
}

std::unique_ptr<CsvRowScratch> CsvQuoteChain::TakeScratch(MemoryPool* pool) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_scratch_.empty()) {
      auto s = std::move(free_scratch_.back());
      free_scratch_.pop_back();
      return s;
    }
  }
  return std::make_unique<CsvRowScratch>(pool);
}

void CsvQuoteChain::GiveBackScratch(std::unique_ptr<CsvRowScratch> scratch) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_scratch_.push_back(std::move(scratch));
}

}  // namespace quiver::formats::csv
