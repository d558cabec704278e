// quiver/datagen/batch_generator.cc — see batch_generator.h.
//
// Values. Each row (or, for lineitem/orders, each order and each order
// line) draws from its own splitmix64 stream, seeded from (seed, stream id,
// index), so values never depend on batch boundaries. Streams:
//   splitmix64: state += 0x9E3779B97F4A7C15; z = state;
//               z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//               z = (z ^ (z >> 27)) * 0x94D049BB133111EB; out = z ^ (z >> 31)
//   start state = Mix(Mix(seed ^ stream_tag) + index * 0x9E3779B97F4A7C15)
//   uniform in [lo, hi] = lo + high 64 bits of (next() * (hi - lo + 1))
//
// TPC-H (specification 2.x, clause 4.2.3), scale factor 1 key ranges:
//   order i (0-based): o_orderkey = (i / 8) * 32 + i % 8 + 1 (sparse keys),
//   1..7 lines, o_orderdate uniform in [1992-01-01, 1998-12-31 - 151 days],
//   o_custkey in [1, 150000] and not a multiple of 3, o_clerk
//   "Clerk#%09d" of [1, 1000], o_orderpriority one of 5, o_shippriority 0,
//   o_comment 19..78 chars; o_orderstatus F/O/P from its lines'
//   l_linestatus; o_totalprice = sum(extendedprice * (1 + tax) * (1 -
//   discount)).
//   line: l_partkey in [1, 200000], l_suppkey from partkey and a draw in
//   [0, 3], l_quantity 1..50, l_extendedprice = quantity * retail price of
//   the part, l_discount 0.00..0.10, l_tax 0.00..0.08, l_shipdate =
//   orderdate + 1..121, l_commitdate = orderdate + 30..90, l_receiptdate =
//   shipdate + 1..30, l_returnflag R or A when receiptdate <= 1995-06-17
//   else N, l_linestatus O when shipdate > 1995-06-17 else F, l_comment
//   10..43 chars of TPC-H-like words.
#include "quiver/datagen/batch_generator.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include "quiver/base/bit_util.h"
#include "quiver/datagen/splitmix64.h"
#include "quiver/memory/buffer.h"

namespace quiver::datagen {
namespace {

// ---- splitmix64 ------------------------------------------------------------

constexpr uint64_t kGolden = kSplitMix64Golden;
constexpr uint64_t Mix(uint64_t z) { return SplitMix64Mix(z); }

/// Stream tags: one per kind of draw, so that streams never overlap.
enum : uint64_t {
  kStreamRandom = 0x52414e44,  // "RAND"
  kStreamUuid = 0x55554944,    // "UUID"
  kStreamText = 0x54455854,    // "TEXT"
  kStreamOrder = 0x4f524452,   // "ORDR"
  kStreamLine = 0x4c494e45,    // "LINE"
};

class Rng : public SplitMix64Stream {
 public:
  Rng(uint64_t seed, uint64_t stream, uint64_t index) : SplitMix64Stream(Mix(Mix(seed ^ stream) + index * kGolden)) {}
  template <typename T, size_t N>
  const T& Pick(const std::array<T, N>& items) {
    return items[static_cast<size_t>(Uniform(0, static_cast<int64_t>(N) - 1))];
  }
};

// ---- vocabularies ----------------------------------------------------------

constexpr std::array<std::string_view, 4> kShipInstruct = {"DELIVER IN PERSON", "COLLECT COD", "NONE",
                                                           "TAKE BACK RETURN"};
constexpr std::array<std::string_view, 7> kShipMode = {"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"};
constexpr std::array<std::string_view, 5> kPriority = {"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"};

// TPC-H comment grammar words (clause 4.2.2.10), shortened.
constexpr std::array<std::string_view, 64> kTpchWords = {
    "furiously", "sly",          "careful",    "blithe",      "quick",    "fluffy",   "slow",      "quiet",
    "ruthless",  "thin",         "close",      "dogged",      "daring",   "brave",    "stealthy",  "permanent",
    "enticing",  "idle",         "busy",       "regular",     "final",    "ironic",   "even",      "bold",
    "silent",    "pending",      "express",    "special",     "unusual",  "deposits", "packages",  "requests",
    "accounts",  "instructions", "foxes",      "theodolites", "pinto",    "beans",    "ideas",     "dependencies",
    "excuses",   "platelets",    "asymptotes", "courts",      "dolphins", "sleep",    "wake",      "are",
    "haggle",    "nag",          "use",        "boost",       "affix",    "detect",   "integrate", "cajole",
    "among",     "about",        "above",      "across",      "after",    "against",  "along",     "the"};

// Text kind: JSON keys and values.
constexpr std::array<std::string_view, 12> kEventTypes = {"click",  "view",    "purchase",    "login",
                                                          "logout", "search",  "add_to_cart", "remove_from_cart",
                                                          "share",  "comment", "like",        "error"};
constexpr std::array<std::string_view, 16> kAttrKeys = {
    "browser", "os",       "country", "region",  "campaign", "referrer", "device", "plan",
    "locale",  "currency", "variant", "segment", "channel",  "source",   "medium", "page"};
constexpr std::array<std::string_view, 128> kWords = {
    "alpha",   "beta",     "gamma",   "delta",      "epsilon", "zeta",     "theta",    "kappa",   "lambda",  "sigma",
    "omega",   "red",      "green",   "blue",       "yellow",  "orange",   "purple",   "silver",  "golden",  "black",
    "white",   "north",    "south",   "east",       "west",    "river",    "mountain", "forest",  "ocean",   "desert",
    "city",    "village",  "market",  "station",    "garden",  "library",  "museum",   "harbor",  "bridge",  "tower",
    "quick",   "slow",     "bright",  "dark",       "quiet",   "loud",     "happy",    "sad",     "early",   "late",
    "order",   "customer", "product", "invoice",    "payment", "shipment", "account",  "session", "device",  "network",
    "server",  "client",   "request", "response",   "error",   "warning",  "status",   "update",  "delete",  "create",
    "report",  "summary",  "detail",  "record",     "value",   "result",   "query",    "index",   "table",   "column",
    "chrome",  "firefox",  "safari",  "linux",      "windows", "android",  "ios",      "mobile",  "desktop", "tablet",
    "germany", "france",   "spain",   "italy",      "japan",   "brazil",   "canada",   "india",   "mexico",  "norway",
    "premium", "basic",    "trial",   "enterprise", "free",    "standard", "monthly",  "yearly",  "weekly",  "daily",
    "the",     "a",        "of",      "and",        "to",      "in",       "with",     "for",     "on",      "by",
    "was",     "is",       "has",     "will",       "not",     "from",     "at",       "this"};

void AppendWords(Rng& rng, std::string* out, size_t target_len, const std::string_view* words, size_t n) {
  while (out->size() < target_len) {
    if (!out->empty() && out->back() != '"') out->push_back(' ');
    out->append(words[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(n) - 1))]);
  }
}

/// TPC-H-like comment of a length uniform in [min_len, max_len].
void TpchComment(Rng& rng, int64_t min_len, int64_t max_len, std::string* out) {
  out->clear();
  const auto len = static_cast<size_t>(rng.Uniform(min_len, max_len));
  AppendWords(rng, out, len, kTpchWords.data(), kTpchWords.size());
  out->resize(len);
}

// ---- dates (days since 1970-01-01) ----------------------------------------

constexpr int32_t kStartDate = 8035;    // 1992-01-01
constexpr int32_t kEndDate = 10591;     // 1998-12-31
constexpr int32_t kCurrentDate = 9298;  // 1995-06-17

void AppendInt(std::string* out, int64_t v) { out->append(std::to_string(v)); }

void AppendPadded(std::string* out, int64_t v, int width) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%0*lld", width, static_cast<long long>(v));
  out->append(buf);
}

/// "YYYY-MM-DDTHH:MM:SSZ" of seconds since the epoch (proleptic Gregorian).
void AppendTimestamp(std::string* out, int64_t secs) {
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  // civil_from_days (H. Hinnant).
  days += 719468;
  const int64_t era = days / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  AppendPadded(out, y, 4);
  out->push_back('-');
  AppendPadded(out, m, 2);
  out->push_back('-');
  AppendPadded(out, d, 2);
  out->push_back('T');
  AppendPadded(out, rem / 3600, 2);
  out->push_back(':');
  AppendPadded(out, rem / 60 % 60, 2);
  out->push_back(':');
  AppendPadded(out, rem % 60, 2);
  out->push_back('Z');
}

// ---- TPC-H orders and lines -----------------------------------------------

struct OrderHeader {
  int64_t orderkey;
  int32_t num_lines;
  int32_t orderdate;
};

OrderHeader MakeOrderHeader(int64_t order, Rng* rng) {
  OrderHeader h;
  h.orderkey = (order / 8) * 32 + order % 8 + 1;
  h.num_lines = static_cast<int32_t>(rng->Uniform(1, 7));
  h.orderdate = static_cast<int32_t>(rng->Uniform(kStartDate, kEndDate - 151));
  return h;
}

struct Line {
  int64_t partkey, suppkey, quantity, extendedprice_cents, discount_cents, tax_cents;
  int32_t shipdate, commitdate, receiptdate;
  char returnflag, linestatus;
  int shipinstruct, shipmode;
};

/// Line `line` of `order`; the comment goes to `comment` when non-null.
Line MakeLine(uint64_t seed, int64_t order, int32_t line, const OrderHeader& h, std::string* comment) {
  Rng rng(seed, kStreamLine, static_cast<uint64_t>(order) * 8 + static_cast<uint64_t>(line));
  Line l;
  l.partkey = rng.Uniform(1, 200000);
  constexpr int64_t kSupp = 10000;
  const int64_t i = rng.Uniform(0, 3);
  l.suppkey = (l.partkey + i * (kSupp / 4 + (l.partkey - 1) / kSupp)) % kSupp + 1;
  l.quantity = rng.Uniform(1, 50);
  const int64_t retail_cents = 90000 + (l.partkey / 10) % 20001 + 100 * (l.partkey % 1000);
  l.extendedprice_cents = l.quantity * retail_cents;
  l.discount_cents = rng.Uniform(0, 10);
  l.tax_cents = rng.Uniform(0, 8);
  l.shipdate = h.orderdate + static_cast<int32_t>(rng.Uniform(1, 121));
  l.commitdate = h.orderdate + static_cast<int32_t>(rng.Uniform(30, 90));
  l.receiptdate = l.shipdate + static_cast<int32_t>(rng.Uniform(1, 30));
  const bool r_or_a = rng.Uniform(0, 1) == 0;
  l.returnflag = l.receiptdate <= kCurrentDate ? (r_or_a ? 'R' : 'A') : 'N';
  l.linestatus = l.shipdate > kCurrentDate ? 'O' : 'F';
  l.shipinstruct = static_cast<int>(rng.Uniform(0, 3));
  l.shipmode = static_cast<int>(rng.Uniform(0, 6));
  if (comment) TpchComment(rng, 10, 43, comment);
  return l;
}

// ---- columns ---------------------------------------------------------------

enum class ColKind { kInt64, kInt32, kDate32, kDecimal128, kUtf8 };

int ValueWidth(ColKind k) {
  switch (k) {
    case ColKind::kInt64: return 8;
    case ColKind::kInt32:
    case ColKind::kDate32: return 4;
    case ColKind::kDecimal128: return 16;
    case ColKind::kUtf8: return 0;
  }
  return 0;
}

struct ColSpec {
  std::string_view name;
  ColKind kind;
};

DataTypePtr TypeOf(ColKind k) {
  switch (k) {
    case ColKind::kInt64: return int64();
    case ColKind::kInt32: return int32();
    case ColKind::kDate32: return date32();
    case ColKind::kDecimal128: return decimal(128, 15, 2);
    case ColKind::kUtf8: return utf8();
  }
  return null();
}

constexpr std::array<ColSpec, 16> kLineitemCols = {{
    {"l_orderkey", ColKind::kInt64},
    {"l_partkey", ColKind::kInt64},
    {"l_suppkey", ColKind::kInt64},
    {"l_linenumber", ColKind::kInt32},
    {"l_quantity", ColKind::kDecimal128},
    {"l_extendedprice", ColKind::kDecimal128},
    {"l_discount", ColKind::kDecimal128},
    {"l_tax", ColKind::kDecimal128},
    {"l_returnflag", ColKind::kUtf8},
    {"l_linestatus", ColKind::kUtf8},
    {"l_shipdate", ColKind::kDate32},
    {"l_commitdate", ColKind::kDate32},
    {"l_receiptdate", ColKind::kDate32},
    {"l_shipinstruct", ColKind::kUtf8},
    {"l_shipmode", ColKind::kUtf8},
    {"l_comment", ColKind::kUtf8},
}};
constexpr std::array<ColSpec, 9> kOrdersCols = {{
    {"o_orderkey", ColKind::kInt64},
    {"o_custkey", ColKind::kInt64},
    {"o_orderstatus", ColKind::kUtf8},
    {"o_totalprice", ColKind::kDecimal128},
    {"o_orderdate", ColKind::kDate32},
    {"o_orderpriority", ColKind::kUtf8},
    {"o_clerk", ColKind::kUtf8},
    {"o_shippriority", ColKind::kInt32},
    {"o_comment", ColKind::kUtf8},
}};
constexpr std::array<ColSpec, 1> kBigintSeqCols = {{{"id", ColKind::kInt64}}};
constexpr std::array<ColSpec, 1> kBigintRandomCols = {{{"value", ColKind::kInt64}}};
constexpr std::array<ColSpec, 1> kUuidCols = {{{"uuid", ColKind::kUtf8}}};
constexpr std::array<ColSpec, 1> kTextCols = {{{"text", ColKind::kUtf8}}};

std::span<const ColSpec> ColumnsOf(GenKind kind) {
  switch (kind) {
    case GenKind::kBigintSeq: return kBigintSeqCols;
    case GenKind::kBigintRandom: return kBigintRandomCols;
    case GenKind::kUuid: return kUuidCols;
    case GenKind::kText: return kTextCols;
    case GenKind::kLineitem: return kLineitemCols;
    case GenKind::kOrders: return kOrdersCols;
  }
  return {};
}

/// Approximate buffer bytes per row, to size the first allocation.
int64_t EstimatedRowBytes(GenKind kind) {
  switch (kind) {
    case GenKind::kBigintSeq:
    case GenKind::kBigintRandom: return 8;
    case GenKind::kUuid: return 40;
    case GenKind::kText: return 8040;
    case GenKind::kLineitem: return 172;
    case GenKind::kOrders: return 140;
  }
  return 64;
}

/// A pool buffer that grows by 1.5x and is shrunk to its length at the end.
class GrowBuffer {
 public:
  explicit GrowBuffer(MemoryPool* pool) : pool_(pool) {}

  Status Reserve(int64_t extra_bytes) {
    const int64_t need = length_ + extra_bytes;
    if (!buffer_) {
      QUIVER_ASSIGN_OR_RETURN(buffer_, Buffer::Allocate(pool_, std::max<int64_t>(need, 64)));
    } else if (need > buffer_->size()) {
      QUIVER_RETURN_NOT_OK(buffer_->Resize(std::max(need, buffer_->size() + buffer_->size() / 2), false));
    }
    return Status::OK();
  }
  /// Appends without a capacity check (call Reserve first).
  void Append(const void* bytes, int64_t n) {
    std::memcpy(buffer_->mutable_data() + length_, bytes, static_cast<size_t>(n));
    length_ += n;
  }
  int64_t length() const { return length_; }
  Result<std::shared_ptr<Buffer>> Finish() {
    if (!buffer_) {
      QUIVER_ASSIGN_OR_RETURN(buffer_, Buffer::Allocate(pool_, 0));
    }
    QUIVER_RETURN_NOT_OK(buffer_->Resize(length_, true));
    length_ = 0;
    return std::move(buffer_);
  }

 private:
  MemoryPool* pool_;
  std::shared_ptr<Buffer> buffer_;
  int64_t length_ = 0;
};

/// One column being filled: data (fixed width) or offsets + data (utf8).
struct ColumnBuilder {
  ColSpec spec;
  GrowBuffer data;
  GrowBuffer offsets;
  int64_t reserve_string_bytes_per_row = 0;

  ColumnBuilder(ColSpec s, MemoryPool* pool) : spec(s), data(pool), offsets(pool) {}
};

/// One row's values: ints (integers, dates, decimal unscaled values) and
/// strings, indexed by column.
struct Row {
  std::array<int64_t, 16> ints{};
  std::array<std::string, 16> strs;
};

/// Where the next row comes from.
struct Cursor {
  int64_t row = 0;    ///< global row index
  int64_t order = 0;  ///< lineitem/orders: order index
  int32_t line = 0;   ///< lineitem: line within the order
};

class GeneratorImpl final : public BatchGenerator {
 public:
  explicit GeneratorImpl(const GenOptions& o) : options_(o), schema_(GenSchema(o.kind)), cols_(ColumnsOf(o.kind)) {
    for (const auto& c : cols_) {
      if (c.kind == ColKind::kUtf8) ++num_string_cols_;
      fixed_row_bytes_ += ValueWidth(c.kind);
    }
  }

  const SchemaPtr& schema() const override { return schema_; }
  int64_t rows_generated() const override { return cursor_.row; }

  Result<RecordBatchPtr> Next() override {
    const int64_t remaining = options_.num_rows - cursor_.row;
    if (remaining <= 0) return RecordBatchPtr{};
    const Cursor start = cursor_;
    auto result = Build(remaining);
    if (!result.ok()) cursor_ = start;  // builders' buffers are released with them
    return result;
  }

 private:
  /// Buffer bytes of a batch of n rows whose utf8 data totals string_bytes.
  int64_t BatchBytes(int64_t n, int64_t string_bytes) const {
    return static_cast<int64_t>(cols_.size()) * bit_util::BytesForBits(n) + n * fixed_row_bytes_ +
           num_string_cols_ * 4 * (n + 1) + string_bytes;
  }

  Result<RecordBatchPtr> Build(int64_t remaining) {
    MemoryPool* pool = options_.pool;
    const int64_t cap = options_.max_bytes_per_batch;
    const int64_t est_row = EstimatedRowBytes(options_.kind);
    int64_t est_rows = remaining;
    if (cap > 0) est_rows = std::min(remaining, cap / est_row + 1);
    const int64_t string_row_bytes =
        num_string_cols_ > 0 ? std::max<int64_t>(1, (est_row - fixed_row_bytes_) / num_string_cols_ - 4) : 0;

    std::vector<ColumnBuilder> builders;
    builders.reserve(cols_.size());
    for (const auto& c : cols_) {
      builders.emplace_back(c, pool);
      auto& b = builders.back();
      if (c.kind == ColKind::kUtf8) {
        QUIVER_RETURN_NOT_OK(b.offsets.Reserve(4 * (est_rows + 1)));
        QUIVER_RETURN_NOT_OK(b.data.Reserve(string_row_bytes * est_rows));
        const int32_t zero = 0;
        b.offsets.Append(&zero, 4);
      } else {
        QUIVER_RETURN_NOT_OK(b.data.Reserve(ValueWidth(c.kind) * est_rows));
      }
    }

    int64_t n = 0;
    int64_t string_bytes = 0;
    while (n < remaining) {
      MakeRow(cursor_, &row_);
      int64_t row_string_bytes = 0;
      bool string_overflow = false;
      for (size_t c = 0; c < cols_.size(); ++c) {
        if (cols_[c].kind != ColKind::kUtf8) continue;
        const auto len = static_cast<int64_t>(row_.strs[c].size());
        row_string_bytes += len;
        if (builders[c].data.length() + len > std::numeric_limits<int32_t>::max()) string_overflow = true;
      }
      if (n > 0 && (string_overflow || (cap > 0 && BatchBytes(n + 1, string_bytes + row_string_bytes) > cap))) {
        break;
      }
      if (string_overflow) {
        return Status::Invalid("datagen: one row of " + std::string(GenKindName(options_.kind)) +
                               " exceeds 2 GiB of utf8 data");
      }
      for (size_t c = 0; c < cols_.size(); ++c) {
        auto& b = builders[c];
        switch (cols_[c].kind) {
          case ColKind::kInt64: {
            QUIVER_RETURN_NOT_OK(b.data.Reserve(8));
            b.data.Append(&row_.ints[c], 8);
            break;
          }
          case ColKind::kInt32:
          case ColKind::kDate32: {
            const auto v = static_cast<int32_t>(row_.ints[c]);
            QUIVER_RETURN_NOT_OK(b.data.Reserve(4));
            b.data.Append(&v, 4);
            break;
          }
          case ColKind::kDecimal128: {
            // Little-endian two's complement 128-bit unscaled value.
            const int64_t lo = row_.ints[c];
            const int64_t hi = lo < 0 ? -1 : 0;
            QUIVER_RETURN_NOT_OK(b.data.Reserve(16));
            b.data.Append(&lo, 8);
            b.data.Append(&hi, 8);
            break;
          }
          case ColKind::kUtf8: {
            const auto& s = row_.strs[c];
            QUIVER_RETURN_NOT_OK(b.data.Reserve(static_cast<int64_t>(s.size())));
            b.data.Append(s.data(), static_cast<int64_t>(s.size()));
            const auto end = static_cast<int32_t>(b.data.length());
            QUIVER_RETURN_NOT_OK(b.offsets.Reserve(4));
            b.offsets.Append(&end, 4);
            break;
          }
        }
      }
      string_bytes += row_string_bytes;
      Advance(&cursor_);
      ++n;
    }

    auto batch = std::make_shared<RecordBatch>();
    batch->schema = schema_;
    batch->num_rows = n;
    for (size_t c = 0; c < cols_.size(); ++c) {
      auto& b = builders[c];
      auto a = std::make_shared<ArrayData>();
      a->type = schema_->fields[c]->type;
      a->length = n;
      a->null_count = 0;
      QUIVER_ASSIGN_OR_RETURN(auto validity, AllValidBitmap(pool, n));
      a->buffers.push_back(std::move(validity));
      if (cols_[c].kind == ColKind::kUtf8) {
        QUIVER_ASSIGN_OR_RETURN(auto offsets, b.offsets.Finish());
        a->buffers.push_back(std::move(offsets));
      }
      QUIVER_ASSIGN_OR_RETURN(auto data, b.data.Finish());
      a->buffers.push_back(std::move(data));
      batch->columns.push_back(std::move(a));
    }
    return RecordBatchPtr(std::move(batch));
  }

  static Result<std::shared_ptr<Buffer>> AllValidBitmap(MemoryPool* pool, int64_t n) {
    const int64_t bytes = bit_util::BytesForBits(n);
    QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, bytes));
    if (bytes > 0) {
      std::memset(buf->mutable_data(), 0xFF, static_cast<size_t>(bytes));
      if (n % 8 != 0) buf->mutable_data()[bytes - 1] = static_cast<uint8_t>((1u << (n % 8)) - 1);
    }
    return buf;
  }

  static OrderHeader Header(int64_t order, Rng* rng) { return MakeOrderHeader(order, rng); }

  void Advance(Cursor* cur) const {
    ++cur->row;
    if (options_.kind == GenKind::kLineitem) {
      Rng rng(options_.seed, kStreamOrder, static_cast<uint64_t>(cur->order));
      const OrderHeader h = Header(cur->order, &rng);
      if (++cur->line >= h.num_lines) {
        ++cur->order;
        cur->line = 0;
      }
    } else if (options_.kind == GenKind::kOrders) {
      ++cur->order;
    }
  }

  void MakeRow(const Cursor& cur, Row* row) const {
    const uint64_t seed = options_.seed;
    switch (options_.kind) {
      case GenKind::kBigintSeq: row->ints[0] = cur.row; return;
      case GenKind::kBigintRandom:
        row->ints[0] = static_cast<int64_t>(Rng(seed, kStreamRandom, static_cast<uint64_t>(cur.row)).Next());
        return;
      case GenKind::kUuid: MakeUuid(Rng(seed, kStreamUuid, static_cast<uint64_t>(cur.row)), &row->strs[0]); return;
      case GenKind::kText:
        MakeText(Rng(seed, kStreamText, static_cast<uint64_t>(cur.row)), cur.row, &row->strs[0]);
        return;
      case GenKind::kLineitem: MakeLineitemRow(cur, row); return;
      case GenKind::kOrders: MakeOrdersRow(cur, row); return;
    }
  }

  static void MakeUuid(Rng rng, std::string* out) {
    uint8_t b[16];
    const uint64_t hi = rng.Next(), lo = rng.Next();
    for (int i = 0; i < 8; ++i) {  // big-endian bytes: the same text on every machine
      b[i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
      b[8 + i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
    }
    b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);  // version 4
    b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);  // variant 10xx
    static constexpr char kHex[] = "0123456789abcdef";
    out->clear();
    for (int i = 0; i < 16; ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10) out->push_back('-');
      out->push_back(kHex[b[i] >> 4]);
      out->push_back(kHex[b[i] & 0xF]);
    }
  }

  /// JSON text of exactly a length uniform in [7600, 8470] (mean 8035, the
  /// reference's 64 MiB / 8,348 rows): an object with a user and a list of
  /// events, closed by a "note" of words that pads it to the length.
  static void MakeText(Rng rng, int64_t row, std::string* out) {
    const auto target = static_cast<size_t>(rng.Uniform(7600, 8470));
    out->clear();
    // Words skewed toward the front of the list (min of two draws), as real
    // text repeats its common words: zstd level 3 then gets ~4.6x, as the
    // reference text batch (64.06 -> 13.97 MiB).
    auto word = [&] {
      constexpr auto kLast = static_cast<int64_t>(kWords.size()) - 1;
      const int64_t a = rng.Uniform(0, kLast), b = rng.Uniform(0, kLast);
      return kWords[static_cast<size_t>(std::min(a, b))];
    };
    const int64_t base_ts = 1704067200 + rng.Uniform(0, 365LL * 86400);  // 2024
    out->append("{\"id\":");
    AppendInt(out, row);
    out->append(",\"ts\":\"");
    AppendTimestamp(out, base_ts);
    out->append("\",\"user\":{\"id\":");
    AppendInt(out, rng.Uniform(1, 1000000));
    out->append(",\"name\":\"");
    out->append(word());
    out->push_back(' ');
    out->append(word());
    out->append("\",\"email\":\"");
    out->append(word());
    out->push_back('.');
    out->append(word());
    out->append("@example.com\",\"tags\":[");
    const int64_t tags = rng.Uniform(1, 5);
    for (int64_t t = 0; t < tags; ++t) {
      if (t) out->push_back(',');
      out->push_back('"');
      out->append(word());
      out->push_back('"');
    }
    out->append("]},\"events\":[");
    int64_t ts = base_ts;
    for (int64_t e = 0; out->size() + 420 < target; ++e) {
      if (e) out->push_back(',');
      out->append("{\"seq\":");
      AppendInt(out, e);
      out->append(",\"type\":\"");
      out->append(rng.Pick(kEventTypes));
      out->append("\",\"ts\":\"");
      ts += rng.Uniform(1, 600);
      AppendTimestamp(out, ts);
      out->append("\",\"score\":");
      const int64_t score = rng.Uniform(0, 9999);
      out->append("0.");
      AppendPadded(out, score, 4);
      out->append(",\"ok\":");
      out->append(rng.Uniform(0, 9) == 0 ? "false" : "true");
      out->append(",\"attrs\":{");
      const int64_t attrs = rng.Uniform(1, 4);
      for (int64_t a = 0; a < attrs; ++a) {
        if (a) out->push_back(',');
        out->push_back('"');
        out->append(rng.Pick(kAttrKeys));
        out->append("\":\"");
        out->append(word());
        out->push_back('"');
      }
      out->append("},\"message\":\"");
      const size_t msg_end = out->size() + static_cast<size_t>(rng.Uniform(40, 160));
      const size_t msg_start = out->size();
      while (out->size() < msg_end) {
        if (out->size() > msg_start) out->push_back(' ');
        out->append(word());
      }
      out->append("\"}");
    }
    out->append("],\"note\":\"");
    const size_t note_start = out->size();
    while (out->size() + 2 < target) {
      if (out->size() > note_start) out->push_back(' ');
      out->append(word());
    }
    out->resize(target - 2);
    out->append("\"}");
  }

  void MakeLineitemRow(const Cursor& cur, Row* row) const {
    Rng orng(options_.seed, kStreamOrder, static_cast<uint64_t>(cur.order));
    const OrderHeader h = Header(cur.order, &orng);
    const Line l = MakeLine(options_.seed, cur.order, cur.line, h, &row->strs[15]);
    row->ints[0] = h.orderkey;
    row->ints[1] = l.partkey;
    row->ints[2] = l.suppkey;
    row->ints[3] = cur.line + 1;
    row->ints[4] = l.quantity * 100;
    row->ints[5] = l.extendedprice_cents;
    row->ints[6] = l.discount_cents;
    row->ints[7] = l.tax_cents;
    row->strs[8].assign(1, l.returnflag);
    row->strs[9].assign(1, l.linestatus);
    row->ints[10] = l.shipdate;
    row->ints[11] = l.commitdate;
    row->ints[12] = l.receiptdate;
    row->strs[13].assign(kShipInstruct[static_cast<size_t>(l.shipinstruct)]);
    row->strs[14].assign(kShipMode[static_cast<size_t>(l.shipmode)]);
  }

  void MakeOrdersRow(const Cursor& cur, Row* row) const {
    Rng rng(options_.seed, kStreamOrder, static_cast<uint64_t>(cur.order));
    const OrderHeader h = Header(cur.order, &rng);
    int64_t total = 0;  // in 1e-6 units: cents * (100 + tax) * (100 - discount)
    int num_f = 0;
    for (int32_t i = 0; i < h.num_lines; ++i) {
      const Line l = MakeLine(options_.seed, cur.order, i, h, nullptr);
      total += l.extendedprice_cents * (100 + l.tax_cents) * (100 - l.discount_cents);
      if (l.linestatus == 'F') ++num_f;
    }
    int64_t custkey = rng.Uniform(1, 150000);
    if (custkey % 3 == 0) custkey = custkey == 150000 ? 149999 : custkey + 1;
    row->ints[0] = h.orderkey;
    row->ints[1] = custkey;
    row->strs[2].assign(1, num_f == h.num_lines ? 'F' : num_f == 0 ? 'O' : 'P');
    row->ints[3] = (total + 5000) / 10000;
    row->ints[4] = h.orderdate;
    row->strs[5].assign(rng.Pick(kPriority));
    row->strs[6].assign("Clerk#");
    AppendPadded(&row->strs[6], rng.Uniform(1, 1000), 9);
    row->ints[7] = 0;
    TpchComment(rng, 19, 78, &row->strs[8]);
  }

  GenOptions options_;
  SchemaPtr schema_;
  std::span<const ColSpec> cols_;
  int num_string_cols_ = 0;
  int64_t fixed_row_bytes_ = 0;
  Cursor cursor_;
  Row row_;
};

}  // namespace

std::string_view GenKindName(GenKind kind) {
  switch (kind) {
    case GenKind::kBigintSeq: return "bigint-seq";
    case GenKind::kBigintRandom: return "bigint-random";
    case GenKind::kUuid: return "uuid";
    case GenKind::kText: return "text";
    case GenKind::kLineitem: return "lineitem";
    case GenKind::kOrders: return "orders";
  }
  return "?";
}

Result<GenKind> ParseGenKind(std::string_view name) {
  for (GenKind k : {GenKind::kBigintSeq, GenKind::kBigintRandom, GenKind::kUuid, GenKind::kText, GenKind::kLineitem,
                    GenKind::kOrders}) {
    if (name == GenKindName(k)) return k;
  }
  return Status::Invalid("unknown batch kind '" + std::string(name) +
                         "': expected bigint-seq, bigint-random, uuid, text, lineitem or orders");
}

SchemaPtr GenSchema(GenKind kind) {
  auto schema = std::make_shared<Schema>();
  for (const auto& c : ColumnsOf(kind)) {
    schema->fields.push_back(field(std::string(c.name), TypeOf(c.kind), /*nullable=*/true));
  }
  return schema;
}

Result<std::unique_ptr<BatchGenerator>> BatchGenerator::Make(const GenOptions& options) {
  if (options.pool == nullptr) return Status::Invalid("datagen: GenOptions.pool is required");
  if (options.num_rows < 0) {
    return Status::Invalid("datagen: num_rows must be >= 0, got " + std::to_string(options.num_rows));
  }
  if (options.max_bytes_per_batch < 0) {
    return Status::Invalid("datagen: max_bytes_per_batch must be >= 0, got " +
                           std::to_string(options.max_bytes_per_batch));
  }
  return std::unique_ptr<BatchGenerator>(std::make_unique<GeneratorImpl>(options));
}

Result<std::vector<RecordBatchPtr>> GenerateBatches(const GenOptions& options) {
  QUIVER_ASSIGN_OR_RETURN(auto gen, BatchGenerator::Make(options));
  std::vector<RecordBatchPtr> out;
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(auto batch, gen->Next());
    if (!batch) break;
    out.push_back(std::move(batch));
  }
  return out;
}

int64_t BatchBufferBytes(const RecordBatch& batch) {
  int64_t bytes = 0;
  for (const auto& c : batch.columns) bytes += c->TotalBufferBytes();
  return bytes;
}

}  // namespace quiver::datagen
