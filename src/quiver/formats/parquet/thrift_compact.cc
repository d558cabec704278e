#include "quiver/formats/parquet/thrift_compact.h"

#include <cstring>

namespace quiver::parquet {

Status ThriftCompactReader::Fail(const std::string& what) const {
  return Status::Invalid("thrift compact: " + what + " at byte " + std::to_string(pos_));
}

Result<uint64_t> ThriftCompactReader::ReadVarint() {
  uint64_t out = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) return Fail("truncated varint");
    const uint8_t b = data_[pos_++];
    if (shift == 63 && (b & 0x7e) != 0) return Fail("varint over 64 bits");
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return out;
  }
  return Fail("varint over 10 bytes");
}

Result<int64_t> ThriftCompactReader::ReadZigzag() {
  QUIVER_ASSIGN_OR_RETURN(uint64_t v, ReadVarint());
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

Status ThriftCompactReader::ReadStruct(const std::function<Status(int16_t, ThriftType)>& on_field) {
  if (++depth_ > kMaxDepth) return Fail("structs nested deeper than " + std::to_string(kMaxDepth));
  int16_t last_id = 0;
  while (true) {
    if (pos_ >= data_.size()) return Fail("truncated struct (no stop byte)");
    const uint8_t b = data_[pos_++];
    const auto type = static_cast<ThriftType>(b & 0x0f);
    if (type == ThriftType::kStop) break;
    if ((b & 0x0f) > 12) return Fail("unknown wire type " + std::to_string(b & 0x0f));
    int16_t id = 0;
    if ((b >> 4) != 0) {
      id = static_cast<int16_t>(last_id + (b >> 4));
    } else {
      QUIVER_ASSIGN_OR_RETURN(int64_t v, ReadZigzag());
      if (v < INT16_MIN || v > INT16_MAX) return Fail("field id out of range");
      id = static_cast<int16_t>(v);
    }
    last_id = id;
    QUIVER_RETURN_NOT_OK(on_field(id, type));
  }
  --depth_;
  return Status::OK();
}

Result<bool> ThriftCompactReader::ReadBool(ThriftType type) {
  if (type == ThriftType::kTrue) return true;
  if (type == ThriftType::kFalse) return false;
  return Fail("expected a bool, found wire type " + std::to_string(static_cast<int>(type)));
}

Result<int64_t> ThriftCompactReader::ReadI64(ThriftType type) {
  switch (type) {
    case ThriftType::kByte: {
      if (pos_ >= data_.size()) return Fail("truncated byte");
      return static_cast<int64_t>(static_cast<int8_t>(data_[pos_++]));
    }
    case ThriftType::kI16:
    case ThriftType::kI32:
    case ThriftType::kI64: return ReadZigzag();
    default: return Fail("expected an integer, found wire type " + std::to_string(static_cast<int>(type)));
  }
}

Result<int32_t> ThriftCompactReader::ReadI32(ThriftType type) {
  QUIVER_ASSIGN_OR_RETURN(int64_t v, ReadI64(type));
  if (v < INT32_MIN || v > INT32_MAX) return Fail("i32 value out of range: " + std::to_string(v));
  return static_cast<int32_t>(v);
}

Result<double> ThriftCompactReader::ReadDouble(ThriftType type) {
  if (type != ThriftType::kDouble) return Fail("expected a double");
  if (data_.size() - pos_ < 8) return Fail("truncated double");
  double d;
  std::memcpy(&d, data_.data() + pos_, 8);
  pos_ += 8;
  return d;
}

Result<std::string_view> ThriftCompactReader::ReadBinary(ThriftType type) {
  if (type != ThriftType::kBinary) {
    return Fail("expected a binary, found wire type " + std::to_string(static_cast<int>(type)));
  }
  QUIVER_ASSIGN_OR_RETURN(uint64_t n, ReadVarint());
  if (n > data_.size() - pos_) {
    return Fail("binary of " + std::to_string(n) + " bytes with " + std::to_string(data_.size() - pos_) + " left");
  }
  std::string_view out(reinterpret_cast<const char*>(data_.data() + pos_), n);
  pos_ += n;
  return out;
}

Result<ThriftListHeader> ThriftCompactReader::ReadListHeader(ThriftType type) {
  if (type != ThriftType::kList && type != ThriftType::kSet) return Fail("expected a list");
  if (pos_ >= data_.size()) return Fail("truncated list header");
  const uint8_t b = data_[pos_++];
  ThriftListHeader h;
  h.element_type = static_cast<ThriftType>(b & 0x0f);
  if ((b & 0x0f) > 12 || (b & 0x0f) == 0) return Fail("bad list element type " + std::to_string(b & 0x0f));
  if ((b >> 4) == 15) {
    QUIVER_ASSIGN_OR_RETURN(uint64_t n, ReadVarint());
    if (n > static_cast<uint64_t>(INT32_MAX)) return Fail("list size out of range");
    h.size = static_cast<int64_t>(n);
  } else {
    h.size = b >> 4;
  }
  if (static_cast<uint64_t>(h.size) > data_.size() - pos_) {
    return Fail("list of " + std::to_string(h.size) + " elements with " + std::to_string(data_.size() - pos_) +
                " bytes left");
  }
  return h;
}

Status ThriftCompactReader::Skip(ThriftType type) { return SkipDepth(type, depth_); }

Status ThriftCompactReader::SkipDepth(ThriftType type, int depth) {
  if (depth > kMaxDepth) return Fail("values nested deeper than " + std::to_string(kMaxDepth));
  switch (type) {
    case ThriftType::kTrue:
    case ThriftType::kFalse: return Status::OK();
    case ThriftType::kByte:
    case ThriftType::kI16:
    case ThriftType::kI32:
    case ThriftType::kI64: return ReadI64(type).status();
    case ThriftType::kDouble: return ReadDouble(type).status();
    case ThriftType::kBinary: return ReadBinary(type).status();
    case ThriftType::kList:
    case ThriftType::kSet: {
      QUIVER_ASSIGN_OR_RETURN(auto h, ReadListHeader(type));
      for (int64_t i = 0; i < h.size; ++i) {
        if (h.element_type == ThriftType::kTrue || h.element_type == ThriftType::kFalse) {
          if (pos_ >= data_.size()) return Fail("truncated bool element");
          ++pos_;  // bools in containers take one byte each
        } else {
          QUIVER_RETURN_NOT_OK(SkipDepth(h.element_type, depth + 1));
        }
      }
      return Status::OK();
    }
    case ThriftType::kMap: {
      QUIVER_ASSIGN_OR_RETURN(uint64_t n, ReadVarint());
      if (n == 0) return Status::OK();
      if (n > data_.size() - pos_) return Fail("map size out of range");
      if (pos_ >= data_.size()) return Fail("truncated map header");
      const uint8_t kv = data_[pos_++];
      const auto kt = static_cast<ThriftType>(kv >> 4), vt = static_cast<ThriftType>(kv & 0x0f);
      if ((kv >> 4) > 12 || (kv & 0x0f) > 12) return Fail("bad map types");
      for (uint64_t i = 0; i < n; ++i) {
        for (ThriftType t : {kt, vt}) {
          if (t == ThriftType::kTrue || t == ThriftType::kFalse) {
            if (pos_ >= data_.size()) return Fail("truncated bool element");
            ++pos_;
          } else {
            QUIVER_RETURN_NOT_OK(SkipDepth(t, depth + 1));
          }
        }
      }
      return Status::OK();
    }
    case ThriftType::kStruct: {
      const int saved = depth_;
      depth_ = depth;
      Status st = ReadStruct([&](int16_t, ThriftType t) { return SkipDepth(t, depth + 1); });
      depth_ = saved;
      return st;
    }
    case ThriftType::kStop: break;
  }
  return Fail("cannot skip wire type " + std::to_string(static_cast<int>(type)));
}

}  // namespace quiver::parquet
