// quiver/base/byte_size.cc — see byte_size.h.
#include "quiver/base/byte_size.h"

#include <cctype>
#include <cstdio>
#include <string>

namespace quiver {

std::string FormatBytes(int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else if (bytes < (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  } else if (bytes < (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1 << 30));
  }
  return buf;
}

Result<int64_t> ParseBytes(std::string_view text_view) {
  const std::string text(text_view);
  size_t pos = 0;
  long double v = 0;
  try {
    v = std::stold(text, &pos);
  } catch (...) {
    return Status::Invalid("not a byte count: '" + text + "'");
  }
  std::string unit = text.substr(pos);
  unit.erase(0, unit.find_first_not_of(' '));  // "64 MiB" as FormatBytes writes it
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  long double mul = 1;
  if (unit.empty() || unit == "b") {
    mul = 1;
  } else if (unit == "k" || unit == "kib" || unit == "kb") {
    mul = 1024.0L;
  } else if (unit == "m" || unit == "mib" || unit == "mb") {
    mul = 1024.0L * 1024;
  } else if (unit == "g" || unit == "gib" || unit == "gb") {
    mul = 1024.0L * 1024 * 1024;
  } else {
    return Status::Invalid("unknown byte unit in '" + text + "' (use K, M, G)");
  }
  const long double bytes = v * mul;
  if (!(bytes >= 1) || bytes > 9.0e18L) return Status::Invalid("byte count out of range: '" + text + "'");
  return static_cast<int64_t>(bytes);
}

}  // namespace quiver
