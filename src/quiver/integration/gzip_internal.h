// quiver/integration/gzip_internal.h — gunzip of bytes already in memory, for
// the ".json.gz" files of arrow-testing (not installed API; only
// src/quiver/integration/*.cc include it). A decoder, not I/O: the bytes
// come from ipc::ReadFile.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver::integration {

/// Decompresses gzip data (RFC 1952, zlib; concatenated members are
/// accepted, trailing zero padding is ignored). The output is a plain
/// std::string (parsed right after, then freed), not charged to a pool.
/// Errors: Invalid naming `path` for corrupt or truncated data, or when the
/// output would exceed `max_size_bytes`; IOError when zlib cannot start.
/// Reentrant.
Result<std::string> Gunzip(std::string_view compressed, const std::string& path, int64_t max_size_bytes);

}  // namespace quiver::integration
