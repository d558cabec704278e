// quiver/sql/expression/order_key.cc — Fn::kOrderedValue: a value behind
// its sort keys' order-preserving bytes (the layout is order_key.h's).
#include "quiver/sql/expression/order_key.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "quiver/sql/expression/kernels.h"

namespace quiver::sql {

OrderedValueParts SplitOrderedValue(std::string_view encoded) {
  uint32_t key_bytes = 0;
  if (encoded.size() < 4) return {{}, encoded};
  std::memcpy(&key_bytes, encoded.data(), 4);  // little-endian hosts only (as the IPC layer)
  if (key_bytes > encoded.size() - 4) return {{}, encoded};
  return {encoded.substr(4, key_bytes), encoded.substr(4 + key_bytes)};
}

namespace kernels {
namespace {

constexpr unsigned char kNullFirst = 0x00, kNotNull = 0x01, kNullLast = 0x02;

// Appends the `n` bytes of `v` most significant first, each inverted when `invert`.
void AppendBigEndian(unsigned __int128 v, int n, bool invert, std::string* out) {
  for (int b = n - 1; b >= 0; --b) {
    auto byte = static_cast<unsigned char>(v >> (8 * b));
    out->push_back(static_cast<char>(invert ? static_cast<unsigned char>(~byte) : byte));
  }
}

// Appends row i of key `k` (not NULL) as order_key.h lays it out.
void AppendKeyValue(TypeClass c, const Vec& k, int64_t i, bool desc, std::string* out) {
  switch (c) {
    case TypeClass::kFloat: {
      double d = k.FloatAt(i);
      if (d == 0) d = 0;  // -0.0 sorts as 0.0
      uint64_t bits;
      if (std::isnan(d)) {
        bits = uint64_t{0x7FF8} << 48;  // one NaN, after +Infinity
      } else {
        std::memcpy(&bits, &d, 8);
      }
      bits = (bits >> 63) ? ~bits : bits ^ (uint64_t{1} << 63);
      AppendBigEndian(bits, 8, desc, out);
      return;
    }
    case TypeClass::kString: {
      const std::string_view s = k.StringAt(i);
      const auto put = [&](unsigned char b) { out->push_back(static_cast<char>(desc ? ~b : b)); };
      for (char ch : s) {
        put(static_cast<unsigned char>(ch));
        if (ch == 0) put(0xFF);
      }
      put(0x00);
      put(0x00);
      return;
    }
    default: {
      const auto u = static_cast<unsigned __int128>(k.ExactAt(i)) ^ (static_cast<unsigned __int128>(1) << 127);
      AppendBigEndian(u, 16, desc, out);
      return;
    }
  }
}

}  // namespace

Result<Vec> OrderedValue(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  if (args.empty() || args.size() % 2 == 0 || e.args.size() != args.size())
    return Status::Invalid("ordered_value takes a value and (key, flags) pairs");
  struct Key {
    const Vec* vec;
    TypeClass c;
    bool desc, nulls_first;
  };
  std::vector<Key> keys;
  bool all_const = args[0].constant;
  for (size_t k = 1; k < args.size(); k += 2) {
    const Expr& flags = *e.args[k + 1];
    if (flags.kind != Expr::Kind::kConstant || flags.value.is_null)
      return Status::Invalid("ordered_value's flags must be constants");
    const auto f = static_cast<int64_t>(flags.value.i);
    keys.push_back(
        {&args[k], ClassOf(*args[k].type()), (f & kOrderKeyDescending) != 0, (f & kOrderKeyNullsFirst) != 0});
    all_const = all_const && args[k].constant;
  }
  const int64_t rows = all_const ? 1 : n;
  QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(rows, rows * 32, ctx->pool));
  std::string row;
  for (int64_t i = 0; i < rows; ++i) {
    if (args[0].IsNull(i)) {
      QUIVER_RETURN_NOT_OK(b.AppendNull());
      continue;
    }
    row.assign(4, '\0');
    for (const Key& k : keys) {
      if (k.c == TypeClass::kNull || k.vec->IsNull(i)) {
        row.push_back(static_cast<char>(k.nulls_first ? kNullFirst : kNullLast));
        continue;
      }
      row.push_back(static_cast<char>(kNotNull));
      AppendKeyValue(k.c, *k.vec, i, k.desc, &row);
    }
    const size_t key_bytes = row.size() - 4;
    if (key_bytes > UINT32_MAX)
      return Status::Invalid("ordered_value: sort keys of " + std::to_string(key_bytes) + " bytes");
    const auto len = static_cast<uint32_t>(key_bytes);
    std::memcpy(row.data(), &len, 4);
    row.append(args[0].StringAt(i));
    QUIVER_RETURN_NOT_OK(b.Append(row));
  }
  Vec v;
  QUIVER_ASSIGN_OR_RETURN(v.array, b.Finish());
  v.constant = all_const;
  return v;
}

}  // namespace kernels
}  // namespace quiver::sql
