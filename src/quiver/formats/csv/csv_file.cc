#include "quiver/formats/csv/csv_file.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "quiver/formats/csv/csv_stream.h"

namespace quiver::formats::csv {
namespace {

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Grows `out` (logical size `*used`) so that at least `want` bytes are free,
// doubling, capped at max_bytes.
Status Reserve(Buffer* out, int64_t used, int64_t want, int64_t max_bytes, std::string_view source) {
  if (out->size() - used >= want) return Status::OK();
  if (used >= max_bytes) {
    return Status::Invalid(std::string(source) + ": decompressed text exceeds " + std::to_string(max_bytes) + " bytes");
  }
  const int64_t grown = std::min<int64_t>(max_bytes, std::max<int64_t>(out->size() * 2, used + want));
  return out->Resize(grown, false);
}

}  // namespace

CsvCompression CsvCompressionOf(std::string_view path) {
  if (EndsWith(path, ".gz")) return CsvCompression::kGzip;
  if (EndsWith(path, ".zst")) return CsvCompression::kZstd;
  return CsvCompression::kNone;
}

bool IsCsvPath(std::string_view path) {
  return EndsWith(path, ".csv") || EndsWith(path, ".csv.gz") || EndsWith(path, ".csv.zst");
}

Result<std::shared_ptr<Buffer>> DecompressCsv(std::span<const uint8_t> input, CsvCompression compression,
                                              MemoryPool* pool, std::string_view source, int64_t max_bytes) {
  const int64_t first =
      std::min<int64_t>(max_bytes, std::max<int64_t>(1 << 16, static_cast<int64_t>(input.size()) * 4));
  QUIVER_ASSIGN_OR_RETURN(auto out, Buffer::Allocate(pool, std::max<int64_t>(first, 1)));
  int64_t used = 0;
  constexpr int64_t kStep = 1 << 16;
  if (compression == CsvCompression::kGzip) {
    size_t in_pos = 0;
    while (in_pos < input.size()) {  // one member per pass
      z_stream z{};
      if (inflateInit2(&z, 15 + 16) != Z_OK) return Status::Invalid(std::string(source) + ": gzip: inflateInit failed");
      z.next_in = const_cast<Bytef*>(input.data() + in_pos);
      z.avail_in = static_cast<uInt>(std::min<size_t>(input.size() - in_pos, UINT32_MAX));
      int rc = Z_OK;
      while (rc != Z_STREAM_END) {
        Status st = Reserve(out.get(), used, kStep, max_bytes, source);
        if (!st.ok()) {
          inflateEnd(&z);
          return st;
        }
        const int64_t room = std::min<int64_t>(out->size() - used, UINT32_MAX);
        z.next_out = out->mutable_data() + used;
        z.avail_out = static_cast<uInt>(room);
        rc = inflate(&z, Z_NO_FLUSH);
        used += room - z.avail_out;
        if (rc == Z_BUF_ERROR && z.avail_in == 0) rc = Z_DATA_ERROR;  // truncated
        if (rc != Z_OK && rc != Z_STREAM_END) {
          std::string msg = z.msg ? z.msg : "truncated or corrupt data";
          inflateEnd(&z);
          return Status::Invalid(std::string(source) + ": gzip: " + msg + " (input byte " +
                                 std::to_string(in_pos + z.total_in) + ")");
        }
      }
      in_pos += z.total_in;
      inflateEnd(&z);
      // Trailing zero padding after the last member is allowed.
      if (std::all_of(input.begin() + in_pos, input.end(), [](uint8_t b) { return b == 0; })) break;
    }
  } else if (compression == CsvCompression::kZstd) {
    std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (!dctx) return Status::OutOfMemory(std::string(source) + ": zstd context");
    ZSTD_inBuffer in{input.data(), input.size(), 0};
    size_t last = 1;  // not at a frame end yet
    while (in.pos < in.size || last != 0) {
      QUIVER_RETURN_NOT_OK(Reserve(out.get(), used, kStep, max_bytes, source));
      const size_t in_before = in.pos;
      ZSTD_outBuffer o{out->mutable_data() + used, static_cast<size_t>(out->size() - used), 0};
      last = ZSTD_decompressStream(dctx.get(), &o, &in);
      if (ZSTD_isError(last)) {
        return Status::Invalid(std::string(source) + ": zstd: " + ZSTD_getErrorName(last) + " (input byte " +
                               std::to_string(in.pos) + ")");
      }
      used += static_cast<int64_t>(o.pos);
      if (last != 0 && in.pos == in.size && in.pos == in_before && o.pos < o.size) {
        return Status::Invalid(std::string(source) + ": zstd: truncated input");
      }
    }
  } else {
    return Buffer::CopyOf(pool, input);
  }
  QUIVER_RETURN_NOT_OK(out->Resize(used));
  return out;
}

Result<CsvTable> ReadCsvStream(std::shared_ptr<RandomAccessSource> source, const CsvOptions& options, MemoryPool* pool,
                               CsvStreamOptions stream_options) {
  QUIVER_ASSIGN_OR_RETURN(auto stream, OpenCsvByteStream(std::move(source), pool));
  QUIVER_ASSIGN_OR_RETURN(auto reader, CsvStreamReader::Open(std::move(stream), options, pool, stream_options));
  CsvTable table;
  table.schema = reader->layout().schema;
  table.delimiter = reader->layout().delimiter;
  table.quote = reader->layout().quote;
  table.header = reader->layout().header;
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(auto batch, reader->Next());
    if (!batch) break;
    table.num_rows += batch->num_rows;
    table.batches.push_back(std::move(batch));
  }
  return table;
}

Result<CsvTable> ReadCsvSource(RandomAccessSource& source, const CsvOptions& options, MemoryPool* pool) {
  // Not owned: the caller keeps the source alive for the call.
  std::shared_ptr<RandomAccessSource> view(std::shared_ptr<void>(), &source);
  return ReadCsvStream(std::move(view), options, pool);
}

Result<CsvTable> ReadCsvFile(const std::string& path, const CsvOptions& options, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto source, LocalFileSource::Open(path));
  return ReadCsvStream(std::move(source), options, pool);
}

}  // namespace quiver::formats::csv
