// quiver/integration/gzip.cc — see gzip_internal.h.
#include "quiver/integration/gzip_internal.h"

#include <zlib.h>

#include <cstring>
#include <limits>

namespace quiver::integration {

Result<std::string> Gunzip(std::string_view compressed, const std::string& path, int64_t max_size_bytes) {
  if (compressed.size() > std::numeric_limits<uInt>::max()) {
    return Status::Invalid(path + ": gzip input exceeds " + std::to_string(std::numeric_limits<uInt>::max()) +
                           " bytes");
  }
  std::string out;
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return Status::IOError(path + ": cannot initialise zlib");
  }
  struct Closer {
    z_stream* z;
    ~Closer() { inflateEnd(z); }
  } closer{&zs};
  const Bytef* base = reinterpret_cast<const Bytef*>(compressed.data());
  size_t pos = 0;
  bool first = true;
  char chunk[1 << 16];
  while (pos < compressed.size()) {
    if (!first) {
      // Concatenated members; trailing zero padding is ignored.
      bool all_zero = true;
      for (size_t k = pos; k < compressed.size() && all_zero; ++k) all_zero = compressed[k] == 0;
      if (all_zero) break;
      if (inflateReset(&zs) != Z_OK) return Status::Invalid(path + ": corrupt gzip data");
    }
    first = false;
    zs.next_in = const_cast<Bytef*>(base + pos);
    zs.avail_in = static_cast<uInt>(compressed.size() - pos);
    while (true) {
      zs.next_out = reinterpret_cast<Bytef*>(chunk);
      zs.avail_out = sizeof(chunk);
      const int rc = inflate(&zs, Z_NO_FLUSH);
      out.append(chunk, sizeof(chunk) - zs.avail_out);
      if (static_cast<int64_t>(out.size()) > max_size_bytes) {
        return Status::Invalid(path + ": decompressed size exceeds " + std::to_string(max_size_bytes) + " bytes");
      }
      if (rc == Z_STREAM_END) break;
      if (rc == Z_OK) continue;
      if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
        return Status::Invalid(path + ": truncated gzip data");
      }
      return Status::Invalid(path + ": corrupt gzip data (" + std::string(zs.msg != nullptr ? zs.msg : "zlib error") +
                             ")");
    }
    pos = static_cast<size_t>(zs.next_in - base);
  }
  return out;
}

}  // namespace quiver::integration
