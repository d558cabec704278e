// quiver/fetch/tests/chunk_fixtures.h — builds CloudFetch chunk bodies for
// the fetch tests: generated batches, written as one Arrow IPC stream with
// quiver's writer, optionally LZ4-framed (content size and checksum flags
// chosen by the test), helpers that compare fetched rows to the source, and
// a fixed link-signing secret.
#pragma once

#include <lz4frame.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "quiver/columnar/compare.h"
#include "quiver/datagen/batch_generator.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::fetch::testing {

/// A link-signing secret of bytes seed, seed + 1, ... (mod 256), so that
/// tests can sign and verify with known keys.
inline std::array<uint8_t, LinkSigner::kSecretBytes> FixedSecret(uint8_t seed) {
  std::array<uint8_t, LinkSigner::kSecretBytes> s{};
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(seed + i);
  return s;
}

/// Batches of `kind` with `num_rows` rows starting at row `first_row`
/// (bigint-seq: "id" = row index), at most `rows_per_batch` rows each.
inline std::vector<RecordBatchPtr> SeqBatches(MemoryPool* pool, int64_t first_row, int64_t num_rows,
                                              int64_t rows_per_batch) {
  datagen::GenOptions o;
  o.kind = datagen::GenKind::kBigintSeq;
  o.num_rows = first_row + num_rows;
  o.pool = pool;
  auto all = datagen::GenerateBatches(o);
  if (!all.ok()) throw std::runtime_error(all.status().ToString());
  std::vector<RecordBatchPtr> out;
  for (int64_t r = first_row; r < first_row + num_rows; r += rows_per_batch) {
    const int64_t n = std::min(rows_per_batch, first_row + num_rows - r);
    auto s = SliceBatch((*all)[0], r, n);
    if (!s.ok()) throw std::runtime_error(s.status().ToString());
    out.push_back(*s);
  }
  return out;
}

/// One Arrow IPC stream (schema, batches, end-of-stream) of `batches`.
inline std::string IpcStream(MemoryPool* pool, const SchemaPtr& schema, const std::vector<RecordBatchPtr>& batches) {
  ipc::BufferOutputStream sink;
  ipc::WriteOptions w;
  w.pool = pool;
  Status st = ipc::WriteTable(&sink, schema, batches, ipc::IpcFormat::kStream, w);
  if (!st.ok()) throw std::runtime_error(st.ToString());
  return std::string(sink.bytes().begin(), sink.bytes().end());
}

/// One LZ4 frame of `raw`.
inline std::string Lz4Frame(const std::string& raw, bool content_size = true, bool checksum = true,
                            LZ4F_blockSizeID_t block = LZ4F_max64KB) {
  LZ4F_preferences_t p;
  std::memset(&p, 0, sizeof p);
  p.frameInfo.contentSize = content_size ? raw.size() : 0;
  p.frameInfo.contentChecksumFlag = checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
  p.frameInfo.blockSizeID = block;
  std::string out(LZ4F_compressFrameBound(raw.size(), &p), '\0');
  size_t n = LZ4F_compressFrame(out.data(), out.size(), raw.data(), raw.size(), &p);
  if (LZ4F_isError(n)) throw std::runtime_error(LZ4F_getErrorName(n));
  out.resize(n);
  return out;
}

/// Concatenates the rows of `batches` and compares them with `expected`
/// (both concatenated): OK or the first difference.
inline Status SameRows(const std::vector<RecordBatchPtr>& expected, const std::vector<RecordBatchPtr>& actual) {
  int64_t ne = 0, na = 0;
  for (auto& b : expected) ne += b->num_rows;
  for (auto& b : actual) na += b->num_rows;
  if (ne != na) {
    return Status::Invalid("row count: expected " + std::to_string(ne) + ", actual " + std::to_string(na));
  }
  // Walk both lists row-range by row-range, comparing slices.
  size_t ie = 0, ia = 0;
  int64_t oe = 0, oa = 0;
  CompareOptions co;
  while (ie < expected.size() && ia < actual.size()) {
    const int64_t n = std::min(expected[ie]->num_rows - oe, actual[ia]->num_rows - oa);
    if (n > 0) {
      auto se = SliceBatch(expected[ie], oe, n);
      auto sa = SliceBatch(actual[ia], oa, n);
      if (!se.ok()) return se.status();
      if (!sa.ok()) return sa.status();
      QUIVER_RETURN_NOT_OK(CompareBatches(**se, **sa, co));
    }
    oe += n;
    oa += n;
    if (oe == expected[ie]->num_rows) {
      ++ie;
      oe = 0;
    }
    if (oa == actual[ia]->num_rows) {
      ++ia;
      oa = 0;
    }
  }
  return Status::OK();
}

}  // namespace quiver::fetch::testing
