// quiver/base/byte_size.h — byte counts as people read and type them:
// "12.3 MiB" in reports, "256MiB" / "64M" / "1G" in options.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver {

/// Text of a byte count in binary units: "<n> B" below 1 KiB, "%.1f KiB"
/// below 1 MiB, "%.2f MiB" below 1 GiB, "%.2f GiB" above (e.g. 1536 ->
/// "1.5 KiB", 3 << 20 -> "3.00 MiB"). Negative counts print as "<n> B".
std::string FormatBytes(int64_t bytes);

/// Parses a byte count: a decimal number (fraction allowed) and an optional
/// case-insensitive unit, B or none (bytes), K / KB / KiB, M / MB / MiB,
/// G / GB / GiB, all binary (1024-based), spaces allowed before the unit:
/// "256MiB", "64M", "1.5g", "3.00 MiB", "1048576". Every byte option of the
/// quiver CLI takes this form. The result is truncated to whole bytes. Errors: Invalid
/// "not a byte count: '<text>'" when no number leads, "unknown byte unit in
/// '<text>' (use K, M, G)", "byte count out of range: '<text>'" below 1 byte
/// or above 9e18.
Result<int64_t> ParseBytes(std::string_view text);

}  // namespace quiver
