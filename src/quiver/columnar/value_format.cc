// quiver/columnar/value_format.cc — see value_format.h.
#include "quiver/columnar/value_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/element_load.h"
#include "quiver/columnar/type_info.h"

namespace quiver {

namespace {

const uint8_t* BufferData(const ArrayData& a, size_t b) {
  return (b < a.buffers.size() && a.buffers[b]) ? a.buffers[b]->data() : nullptr;
}

constexpr char kHexUpper[] = "0123456789ABCDEF";

void AppendHex(std::string_view bytes, std::string* out) {
  size_t start = out->size();
  out->resize(start + bytes.size() * 2);
  char* p = out->data() + start;
  for (unsigned char c : bytes) {
    *p++ = kHexUpper[c >> 4];
    *p++ = kHexUpper[c & 15];
  }
}

template <typename T>
void AppendInt(T v, std::string* out) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, res.ptr);
}

/// Appends at least `width` digits of a non-negative value, zero padded.
void AppendPadded(int64_t v, int width, std::string* out) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  int n = static_cast<int>(res.ptr - buf);
  for (int k = n; k < width; ++k) out->push_back('0');
  out->append(buf, res.ptr);
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/// a mod b in [0, b) for b > 0 (no overflow, unlike a - FloorDiv(a, b) * b).
int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r < 0 ? r + b : r;
}

int64_t UnitsPerSecond(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return 1;
    case TimeUnit::kMilli: return 1000;
    case TimeUnit::kMicro: return 1000000;
    case TimeUnit::kNano: return 1000000000;
  }
  return 1;
}

int FractionDigits(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return 0;
    case TimeUnit::kMilli: return 3;
    case TimeUnit::kMicro: return 6;
    case TimeUnit::kNano: return 9;
  }
  return 0;
}

const char* UnitSuffix(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return "s";
    case TimeUnit::kMilli: return "ms";
    case TimeUnit::kMicro: return "us";
    case TimeUnit::kNano: return "ns";
  }
  return "";
}

// Howard Hinnant's civil_from_days: proleptic Gregorian calendar.
void CivilFromDays(int64_t z, int64_t* year, unsigned* month, unsigned* day) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  *year = y + (m <= 2);
  *month = m;
  *day = d;
}

void AppendDate(int64_t days, std::string* out) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 0) {
    out->push_back('-');
    AppendPadded(-y, 4, out);
  } else {
    AppendPadded(y, 4, out);
  }
  out->push_back('-');
  AppendPadded(m, 2, out);
  out->push_back('-');
  AppendPadded(d, 2, out);
}

/// "HH:MM:SS[.fraction]" for `seconds` (>= 0; hours may exceed 23 for
/// out-of-range times) and a fraction of `digits` digits.
void AppendClock(int64_t seconds, int64_t fraction, int digits, std::string* out) {
  AppendPadded(seconds / 3600, 2, out);
  out->push_back(':');
  AppendPadded((seconds / 60) % 60, 2, out);
  out->push_back(':');
  AppendPadded(seconds % 60, 2, out);
  if (digits > 0) {
    out->push_back('.');
    AppendPadded(fraction, digits, out);
  }
}

void AppendTime(int64_t value, TimeUnit unit, std::string* out) {
  const int64_t per = UnitsPerSecond(unit);
  int64_t secs = FloorDiv(value, per);
  int64_t frac = FloorMod(value, per);
  if (secs < 0) {  // before midnight: show as negative clock
    out->push_back('-');
    // -(secs) with a non-negative fraction: express as -(|value|).
    uint64_t mag = value == std::numeric_limits<int64_t>::min()
                       ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1
                       : static_cast<uint64_t>(-value);
    secs = static_cast<int64_t>(mag / static_cast<uint64_t>(per));
    frac = static_cast<int64_t>(mag % static_cast<uint64_t>(per));
  }
  AppendClock(secs, frac, FractionDigits(unit), out);
}

/// Parses "+HH:MM" / "-HH:MM" / "+HHMM" into seconds east of UTC.
bool ParseFixedOffset(std::string_view tz, int64_t* seconds) {
  if (tz.size() < 3 || (tz[0] != '+' && tz[0] != '-')) return false;
  std::string_view rest = tz.substr(1);
  int hh = 0, mm = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (rest.size() == 5 && rest[2] == ':' && digit(rest[0]) && digit(rest[1]) && digit(rest[3]) && digit(rest[4])) {
    hh = (rest[0] - '0') * 10 + (rest[1] - '0');
    mm = (rest[3] - '0') * 10 + (rest[4] - '0');
  } else if (rest.size() == 4 && digit(rest[0]) && digit(rest[1]) && digit(rest[2]) && digit(rest[3])) {
    hh = (rest[0] - '0') * 10 + (rest[1] - '0');
    mm = (rest[2] - '0') * 10 + (rest[3] - '0');
  } else if (rest.size() == 2 && digit(rest[0]) && digit(rest[1])) {
    hh = (rest[0] - '0') * 10 + (rest[1] - '0');
  } else {
    return false;
  }
  if (hh > 23 || mm > 59) return false;
  *seconds = (tz[0] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
  return true;
}

bool IsUtcName(std::string_view tz) {
  return tz == "UTC" || tz == "utc" || tz == "Z" || tz == "Etc/UTC" || tz == "GMT" || tz == "Etc/GMT" ||
         tz == "+00:00" || tz == "-00:00" || tz == "+0000" || tz == "+00";
}

void AppendTimestamp(int64_t value, const DataType& type, std::string* out) {
  const int64_t per = UnitsPerSecond(type.unit);
  int64_t secs = FloorDiv(value, per);
  const int64_t frac = FloorMod(value, per);
  int64_t offset_seconds = 0;
  enum { kNone, kUtc, kOffset, kNamed } suffix = kNone;
  if (!type.timezone.empty()) {
    if (IsUtcName(type.timezone)) {
      suffix = kUtc;
    } else if (ParseFixedOffset(type.timezone, &offset_seconds)) {
      int64_t shifted;
      if (!__builtin_add_overflow(secs, offset_seconds, &shifted)) {
        secs = shifted;
        suffix = kOffset;
      } else {
        suffix = kUtc;
      }
    } else {
      suffix = kNamed;
    }
  }
  const int64_t days = FloorDiv(secs, 86400);
  const int64_t sod = FloorMod(secs, 86400);
  AppendDate(days, out);
  out->push_back('T');
  AppendClock(sod, frac, FractionDigits(type.unit), out);
  switch (suffix) {
    case kNone: break;
    case kUtc: out->push_back('Z'); break;
    case kOffset: {
      out->push_back(offset_seconds < 0 ? '-' : '+');
      int64_t mag = offset_seconds < 0 ? -offset_seconds : offset_seconds;
      AppendPadded(mag / 3600, 2, out);
      out->push_back(':');
      AppendPadded((mag / 60) % 60, 2, out);
      break;
    }
    case kNamed:
      out->append("Z[");
      out->append(type.timezone);
      out->push_back(']');
      break;
  }
}

/// Two's-complement little-endian integer of `width` bytes (4..32) as a
/// decimal digit string with `scale` applied.
void AppendDecimal(const uint8_t* p, int width, int32_t scale, std::string* out) {
  uint32_t limbs[8];
  const bool negative = (p[width - 1] & 0x80) != 0;
  uint8_t bytes[32];
  std::memset(bytes, negative ? 0xFF : 0x00, sizeof(bytes));
  std::memcpy(bytes, p, static_cast<size_t>(width));
  std::memcpy(limbs, bytes, sizeof(limbs));
  if (negative) {  // magnitude = ~x + 1
    uint64_t carry = 1;
    for (auto& l : limbs) {
      uint64_t v = static_cast<uint64_t>(static_cast<uint32_t>(~l)) + carry;
      l = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
  }
  // Repeated division by 1e9, most significant limb first.
  char digits[96];
  int nd = 0;  // digits written backwards into the end of `digits`
  bool nonzero = true;
  while (nonzero) {
    uint64_t rem = 0;
    nonzero = false;
    for (int k = 7; k >= 0; --k) {
      uint64_t cur = (rem << 32) | limbs[k];
      limbs[k] = static_cast<uint32_t>(cur / 1000000000u);
      rem = cur % 1000000000u;
      if (limbs[k] != 0) nonzero = true;
    }
    for (int k = 0; k < 9; ++k) {
      digits[sizeof(digits) - 1 - nd++] = static_cast<char>('0' + rem % 10);
      rem /= 10;
      if (!nonzero && rem == 0) break;
    }
  }
  std::string_view s(digits + sizeof(digits) - nd, static_cast<size_t>(nd));
  // Strip leading zeros (keep one).
  while (s.size() > 1 && s.front() == '0') s.remove_prefix(1);
  if (negative) out->push_back('-');
  if (scale == 0) {
    out->append(s);
  } else if (scale < 0 || scale > 100) {
    if (scale < -100 || scale > 100) {
      out->append(s);
      out->append("E");
      AppendInt(-static_cast<int64_t>(scale), out);
    } else {
      out->append(s);
      out->append(static_cast<size_t>(-scale), '0');
    }
  } else {
    const size_t sc = static_cast<size_t>(scale);
    if (s.size() <= sc) {
      out->append("0.");
      out->append(sc - s.size(), '0');
      out->append(s);
    } else {
      out->append(s.substr(0, s.size() - sc));
      out->push_back('.');
      out->append(s.substr(s.size() - sc));
    }
  }
}

/// Length of the well-formed UTF-8 sequence starting at s[i] (lead byte
/// >= 0x80), or 0 when it is not well formed (Unicode Table 3-7).
int Utf8SequenceLength(std::string_view s, size_t i) {
  const size_t n = s.size();
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  auto cont = [&](size_t k, unsigned char lo, unsigned char hi) { return k < n && b(k) >= lo && b(k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1, 0x80, 0xBF) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0, 0xBF) && cont(i + 2, 0x80, 0xBF) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
    return cont(i + 1, 0x80, 0xBF) && cont(i + 2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90, 0xBF) && cont(i + 2, 0x80, 0xBF) && cont(i + 3, 0x80, 0xBF) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3)
    return cont(i + 1, 0x80, 0xBF) && cont(i + 2, 0x80, 0xBF) && cont(i + 3, 0x80, 0xBF) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2, 0x80, 0xBF) && cont(i + 3, 0x80, 0xBF) ? 4 : 0;
  return 0;
}

class Formatter {
 public:
  Formatter(ValueFormat format, std::string* out) : json_(format == ValueFormat::kJson), out_(out) {}

  void Value(const ArrayData& a, int64_t i) {
    const DataType& t = *a.type;
    if (IsPhysicalNull(a, i)) {
      out_->append("null");
      return;
    }
    const int64_t p = a.offset + i;
    const uint8_t* data = BufferData(a, 1);
    switch (t.id) {
      case TypeId::kInt8:
      case TypeId::kInt16:
      case TypeId::kInt32:
      case TypeId::kInt64:
      case TypeId::kUInt8:
      case TypeId::kUInt16:
      case TypeId::kUInt32:
      case TypeId::kUInt64:  // in full, uint64 above INT64_MAX included
        VisitIntegerType(
            t.id, [&]<typename T>() { AppendInt(LoadValue<T>(data, p), out_); }, [] {});
        return;
      case TypeId::kNull: out_->append("null"); return;
      case TypeId::kBool: out_->append(data != nullptr && bit_util::GetBit(data, p) ? "true" : "false"); return;
      case TypeId::kFloat16: Float(HalfToDouble(LoadValue<uint16_t>(data, p)), true); return;
      case TypeId::kFloat32: Float(LoadValue<float>(data, p), true); return;
      case TypeId::kFloat64: Float(LoadValue<double>(data, p), false); return;
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
      case TypeId::kUtf8View:
        if (json_) {
          AppendJsonString(BinaryValueAt(a, i), out_);
        } else {
          out_->append(BinaryValueAt(a, i));
        }
        return;
      case TypeId::kBinary:
      case TypeId::kLargeBinary:
      case TypeId::kBinaryView:
      case TypeId::kFixedSizeBinary:
        if (json_) out_->push_back('"');
        AppendHex(BinaryValueAt(a, i), out_);
        if (json_) out_->push_back('"');
        return;
      case TypeId::kDecimal: {
        const int width = t.bit_width / 8;
        if (json_) out_->push_back('"');
        if (data != nullptr && (width == 4 || width == 8 || width == 16 || width == 32)) {
          AppendDecimal(data + p * width, width, t.scale, out_);
        } else {
          out_->append("?");
        }
        if (json_) out_->push_back('"');
        return;
      }
      case TypeId::kDate32: Quoted([&] { AppendDate(LoadValue<int32_t>(data, p), out_); }); return;
      case TypeId::kDate64: Quoted([&] { AppendDate(FloorDiv(LoadValue<int64_t>(data, p), 86400000), out_); }); return;
      case TypeId::kTime32: Quoted([&] { AppendTime(LoadValue<int32_t>(data, p), t.unit, out_); }); return;
      case TypeId::kTime64: Quoted([&] { AppendTime(LoadValue<int64_t>(data, p), t.unit, out_); }); return;
      case TypeId::kTimestamp: Quoted([&] { AppendTimestamp(LoadValue<int64_t>(data, p), t, out_); }); return;
      case TypeId::kDuration:
        AppendInt(LoadValue<int64_t>(data, p), out_);
        if (!json_) out_->append(UnitSuffix(t.unit));
        return;
      case TypeId::kIntervalYearMonth: {
        const int32_t months = LoadValue<int32_t>(data, p);
        if (json_) {
          out_->append("{\"months\":");
          AppendInt(months, out_);
          out_->push_back('}');
        } else {
          AppendInt(months, out_);
          out_->push_back('M');
        }
        return;
      }
      case TypeId::kIntervalDayTime: {
        const int32_t days = LoadValue<int32_t>(data, 2 * p);
        const int32_t ms = LoadValue<int32_t>(data, 2 * p + 1);
        if (json_) {
          out_->append("{\"days\":");
          AppendInt(days, out_);
          out_->append(",\"milliseconds\":");
          AppendInt(ms, out_);
          out_->push_back('}');
        } else {
          AppendInt(days, out_);
          out_->push_back('d');
          AppendInt(ms, out_);
          out_->append("ms");
        }
        return;
      }
      case TypeId::kIntervalMonthDayNano: {
        const uint8_t* base = data == nullptr ? nullptr : data + p * 16;
        int32_t months = 0, days = 0;
        int64_t nanos = 0;
        if (base != nullptr) {
          months = bit_util::LoadLE<int32_t>(base);
          days = bit_util::LoadLE<int32_t>(base + 4);
          nanos = bit_util::LoadLE<int64_t>(base + 8);
        }
        if (json_) {
          out_->append("{\"months\":");
          AppendInt(months, out_);
          out_->append(",\"days\":");
          AppendInt(days, out_);
          out_->append(",\"nanoseconds\":");
          AppendInt(nanos, out_);
          out_->push_back('}');
        } else {
          AppendInt(months, out_);
          out_->push_back('M');
          AppendInt(days, out_);
          out_->push_back('d');
          AppendInt(nanos, out_);
          out_->append("ns");
        }
        return;
      }
      case TypeId::kList:
      case TypeId::kLargeList:
      case TypeId::kListView:
      case TypeId::kLargeListView:
      case TypeId::kFixedSizeList: {
        int64_t off = 0, len = 0;
        ListRangeAt(a, i, &off, &len);
        out_->push_back('[');
        if (!a.children.empty() && a.children[0]) {
          for (int64_t k = 0; k < len; ++k) {
            if (k > 0) out_->append(json_ ? "," : ", ");
            Value(*a.children[0], off + k);
          }
        }
        out_->push_back(']');
        return;
      }
      case TypeId::kStruct: {
        out_->push_back('{');
        for (size_t k = 0; k < a.children.size() && k < t.children.size(); ++k) {
          if (k > 0) out_->append(json_ ? "," : ", ");
          const std::string& name = t.children[k]->name;
          if (json_) {
            AppendJsonString(name, out_);
            out_->push_back(':');
          } else {
            out_->append(name);
            out_->append(": ");
          }
          Value(*a.children[k], p);
        }
        out_->push_back('}');
        return;
      }
      case TypeId::kMap: {
        int64_t off = 0, len = 0;
        ListRangeAt(a, i, &off, &len);
        out_->push_back('{');
        if (!a.children.empty() && a.children[0] && a.children[0]->children.size() >= 2) {
          const ArrayData& entries = *a.children[0];
          const ArrayData& keys = *entries.children[0];
          const ArrayData& items = *entries.children[1];
          for (int64_t k = 0; k < len; ++k) {
            if (k > 0) out_->append(json_ ? "," : ", ");
            const int64_t e = entries.offset + off + k;
            if (json_) {
              std::string key;
              Formatter(ValueFormat::kText, &key).Value(keys, e);
              AppendJsonString(key, out_);
              out_->push_back(':');
            } else {
              Value(keys, e);
              out_->append(": ");
            }
            Value(items, e);
          }
        }
        out_->push_back('}');
        return;
      }
      case TypeId::kSparseUnion:
      case TypeId::kDenseUnion: {
        int child = 0;
        int64_t ci = 0;
        if (UnionChildAt(a, i, &child, &ci)) {
          Value(*a.children[child], ci);
        } else {
          out_->append("null");
        }
        return;
      }
      case TypeId::kRunEndEncoded:
        if (a.children.size() == 2) {
          Value(*a.children[1], RunIndexAt(a, i));
        } else {
          out_->append("null");
        }
        return;
      case TypeId::kDictionary:
        if (a.dictionary) {
          Value(*a.dictionary, DictionaryIndexAt(a, i));
        } else {
          AppendInt(DictionaryIndexAt(a, i), out_);
        }
        return;
    }
    out_->append("null");
  }

 private:
  template <typename F>
  void Quoted(F&& f) {
    if (json_) out_->push_back('"');
    f();
    if (json_) out_->push_back('"');
  }

  void Float(double v, bool single) {
    if (std::isnan(v)) {
      out_->append(json_ ? "\"NaN\"" : "NaN");
      return;
    }
    if (std::isinf(v)) {
      if (json_) {
        out_->append(v < 0 ? "\"-Infinity\"" : "\"Infinity\"");
      } else {
        out_->append(v < 0 ? "-inf" : "inf");
      }
      return;
    }
    char buf[64];
    auto res = single ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                      : std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, res.ptr);
  }

  bool json_;
  std::string* out_;
};

}  // namespace

// ---- logical access ---------------------------------------------------------

bool IsPhysicalNull(const ArrayData& array, int64_t i) {
  if (array.type->id == TypeId::kNull) return true;
  if (!HasValidityBitmap(array.type->id) || array.null_count == 0) return false;
  const uint8_t* bits = BufferData(array, 0);
  return bits != nullptr && !bit_util::GetBit(bits, array.offset + i);
}

bool IsLogicalNull(const ArrayData& array, int64_t i) {
  switch (array.type->id) {
    case TypeId::kDictionary:
      if (IsPhysicalNull(array, i)) return true;
      return array.dictionary && IsLogicalNull(*array.dictionary, DictionaryIndexAt(array, i));
    case TypeId::kRunEndEncoded:
      return array.children.size() == 2 && IsLogicalNull(*array.children[1], RunIndexAt(array, i));
    case TypeId::kSparseUnion:
    case TypeId::kDenseUnion: {
      int child = 0;
      int64_t ci = 0;
      if (!UnionChildAt(array, i, &child, &ci)) return true;
      return IsLogicalNull(*array.children[child], ci);
    }
    default: return IsPhysicalNull(array, i);
  }
}

std::string_view BinaryValueAt(const ArrayData& array, int64_t i) {
  const int64_t p = array.offset + i;
  const TypeId id = array.type->id;
  if (IsBinaryLike(id) || IsLargeBinaryLike(id)) {
    const uint8_t* offsets = BufferData(array, 1);
    const uint8_t* data = BufferData(array, 2);
    if (offsets == nullptr) return {};
    const int bits = IsLargeBinaryLike(id) ? 64 : 32;
    const int64_t start = LoadOffset(offsets, p, bits);
    const int64_t end = LoadOffset(offsets, p + 1, bits);
    if (data == nullptr || end <= start) return {};
    return {reinterpret_cast<const char*>(data) + start, static_cast<size_t>(end - start)};
  }
  if (id == TypeId::kBinaryView || id == TypeId::kUtf8View) {
    const uint8_t* views = BufferData(array, 1);
    if (views == nullptr) return {};
    const uint8_t* v = views + 16 * p;
    const int32_t size = bit_util::LoadLE<int32_t>(v);
    if (size <= 0) return {};
    if (size <= 12) return {reinterpret_cast<const char*>(v + 4), static_cast<size_t>(size)};
    const int32_t buffer_index = bit_util::LoadLE<int32_t>(v + 8);
    const int32_t offset = bit_util::LoadLE<int32_t>(v + 12);
    const uint8_t* data = BufferData(array, 2 + static_cast<size_t>(buffer_index));
    if (data == nullptr) return {};
    return {reinterpret_cast<const char*>(data) + offset, static_cast<size_t>(size)};
  }
  if (id == TypeId::kFixedSizeBinary) {
    const uint8_t* data = BufferData(array, 1);
    const int64_t w = array.type->byte_width;
    if (data == nullptr || w <= 0) return {};
    return {reinterpret_cast<const char*>(data) + p * w, static_cast<size_t>(w)};
  }
  return {};
}

void ListRangeAt(const ArrayData& array, int64_t i, int64_t* child_offset, int64_t* child_length) {
  const int64_t p = array.offset + i;
  *child_offset = 0;
  *child_length = 0;
  const uint8_t* b1 = BufferData(array, 1);
  const TypeId id = array.type->id;
  const int bits = id == TypeId::kLargeList || id == TypeId::kLargeListView ? 64 : 32;
  switch (TypeInfoOf(id).child_rows) {
    case ChildRows::kByOffsets:  // list, large list, map
      if (b1 != nullptr) {
        *child_offset = LoadOffset(b1, p, bits);
        *child_length = LoadOffset(b1, p + 1, bits) - *child_offset;
      }
      break;
    case ChildRows::kByListViews: {
      const uint8_t* b2 = BufferData(array, 2);
      if (b1 != nullptr && b2 != nullptr) {
        *child_offset = LoadOffset(b1, p, bits);
        *child_length = LoadOffset(b2, p, bits);
      }
      break;
    }
    case ChildRows::kFixedSize:
      *child_offset = p * array.type->list_size;
      *child_length = array.type->list_size;
      break;
    default:  // not a list-like
      break;
  }
  if (*child_length < 0) *child_length = 0;
}

bool UnionChildAt(const ArrayData& array, int64_t i, int* child, int64_t* child_index) {
  const int64_t p = array.offset + i;
  const uint8_t* type_ids = BufferData(array, 0);
  if (type_ids == nullptr) return false;
  const int8_t code = static_cast<int8_t>(type_ids[p]);
  const auto& codes = array.type->type_codes;
  int found = -1;
  for (size_t k = 0; k < codes.size(); ++k) {
    if (codes[k] == code) {
      found = static_cast<int>(k);
      break;
    }
  }
  if (found < 0 || static_cast<size_t>(found) >= array.children.size()) return false;
  *child = found;
  if (array.type->id == TypeId::kDenseUnion) {
    const uint8_t* offsets = BufferData(array, 1);
    if (offsets == nullptr) return false;
    *child_index = LoadValue<int32_t>(offsets, p);
  } else {
    *child_index = p;
  }
  return true;
}

int64_t RunIndexAt(const ArrayData& array, int64_t i) {
  if (array.children.empty() || !array.children[0]) return 0;
  const ArrayData& run_ends = *array.children[0];
  const int64_t target = array.offset + i;
  // First run whose end is > target.
  int64_t lo = 0, hi = run_ends.length;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (IntegerValueAt(run_ends, mid) <= target) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

int64_t IntegerValueAt(const ArrayData& array, int64_t i) {
  return LoadIntegerAsInt64(array.type->id, BufferData(array, 1), array.offset + i);
}

int64_t DictionaryIndexAt(const ArrayData& array, int64_t i) {
  const TypeId index_id = array.type->index_type ? array.type->index_type->id : TypeId::kInt32;
  return LoadIntegerAsInt64(index_id, BufferData(array, 1), array.offset + i);
}

double HalfToDouble(uint16_t bits) {
  const int sign = (bits >> 15) & 1;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double v;
  if (exponent == 0) {
    v = std::ldexp(static_cast<double>(mantissa), -24);
  } else if (exponent == 31) {
    v = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else {
    v = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -v : v;
}

uint16_t DoubleToHalf(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return static_cast<uint16_t>(sign | 0x7E00);
  double mag = std::fabs(value);
  if (std::isinf(mag)) return static_cast<uint16_t>(sign | 0x7C00);
  // Round to nearest even at the half-precision grid for the magnitude.
  int exp2;
  std::frexp(mag, &exp2);  // mag = f * 2^exp2, f in [0.5, 1)
  int e = exp2 - 1;        // mag in [2^e, 2^(e+1))
  if (e < -14) e = -14;    // subnormal range uses a fixed quantum 2^-24
  const double quantum = std::ldexp(1.0, e - 10);
  double q = std::nearbyint(mag / quantum);  // default rounding: to nearest even
  double rounded = q * quantum;
  if (rounded >= 65520.0 || rounded > 65504.0) return static_cast<uint16_t>(sign | 0x7C00);
  if (rounded == 0.0) return sign;
  int rexp;
  std::frexp(rounded, &rexp);
  int re = rexp - 1;
  if (re < -14) {  // subnormal
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::ldexp(rounded, 24)));
  }
  const uint16_t biased = static_cast<uint16_t>(re + 15);
  const uint16_t mant = static_cast<uint16_t>(std::ldexp(rounded, 10 - re) - 1024.0);  // 10 fraction bits
  return static_cast<uint16_t>(sign | (biased << 10) | mant);
}

void AppendJsonString(std::string_view bytes, std::string* out) {
  out->push_back('"');
  size_t i = 0;
  size_t run = 0;
  const size_t n = bytes.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out->append(bytes.data() + run, i - run);
    if (c < 0x80) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\b': out->append("\\b"); break;
        case '\f': out->append("\\f"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        default: {
          char esc[7] = {'\\', 'u', '0', '0', kHexUpper[c >> 4], kHexUpper[c & 15], 0};
          out->append(esc, 6);
        }
      }
      ++i;
    } else {
      const int len = Utf8SequenceLength(bytes, i);
      if (len > 0) {
        out->append(bytes.data() + i, static_cast<size_t>(len));
        i += static_cast<size_t>(len);
      } else {
        out->append("\\ufffd");
        ++i;
      }
    }
    run = i;
  }
  out->append(bytes.data() + run, n - run);
  out->push_back('"');
}

void FormatValue(const ArrayData& array, int64_t row, ValueFormat format, std::string* out) {
  Formatter(format, out).Value(array, row);
}

std::string FormatValueToString(const ArrayData& array, int64_t row, ValueFormat format) {
  std::string out;
  FormatValue(array, row, format, &out);
  return out;
}

}  // namespace quiver
