// quiver/sql/tests/parquet_test_file.h — writes small Parquet files for the
// file-scan tests: required INT64 columns, PLAIN-encoded, uncompressed, one
// data page (v1) per column chunk, with min / max statistics in both the
// deprecated and the new fields (parquet.thrift, Thrift compact protocol).
// Just enough of a writer to control row-group sizes and statistics; the
// reader is checked against DuckDB-written files elsewhere.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace quiver::sql::testing {

class CompactWriter {
 public:
  std::vector<uint8_t> bytes;
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      bytes.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    bytes.push_back(static_cast<uint8_t>(v));
  }
  static uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
  void Field(int id, int type) {
    const int delta = id - last_.back();
    if (delta > 0 && delta <= 15) {
      bytes.push_back(static_cast<uint8_t>((delta << 4) | type));
    } else {
      bytes.push_back(static_cast<uint8_t>(type));
      Varint(ZigZag(id));
    }
    last_.back() = id;
  }
  void I32(int id, int32_t v) {
    Field(id, 5);
    Varint(ZigZag(v));
  }
  void I64(int id, int64_t v) {
    Field(id, 6);
    Varint(ZigZag(v));
  }
  void Binary(int id, const std::string& s) {
    Field(id, 8);
    Str(s);
  }
  void Str(const std::string& s) {
    Varint(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void List(int id, int elem_type, size_t n) {
    Field(id, 9);
    if (n < 15) {
      bytes.push_back(static_cast<uint8_t>((n << 4) | static_cast<size_t>(elem_type)));
    } else {
      bytes.push_back(static_cast<uint8_t>(0xF0 | elem_type));
      Varint(n);
    }
  }
  void BeginStruct(int id) {
    Field(id, 12);
    last_.push_back(0);
  }
  void BeginListStruct() { last_.push_back(0); }  // a struct element of a list
  void EndStruct() {
    bytes.push_back(0);
    last_.pop_back();
  }

 private:
  std::vector<int> last_{0};
};

/// Writes `path`: columns `names` (required INT64), `num_rows` rows in row
/// groups of `rows_per_group`, value(row, column) for the values.
inline void WriteInt64Parquet(const std::string& path, const std::vector<std::string>& names, int64_t num_rows,
                              int64_t rows_per_group, const std::function<int64_t(int64_t, size_t)>& value) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  int64_t offset = 0;
  auto put = [&](const void* p, size_t n) {
    out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    offset += static_cast<int64_t>(n);
  };
  put("PAR1", 4);
  struct Chunk {
    int64_t offset, size;
    int64_t min, max;
  };
  struct Group {
    int64_t rows;
    std::vector<Chunk> chunks;
  };
  std::vector<Group> groups;
  auto raw = [](int64_t v) {
    std::string s(8, '\0');
    std::memcpy(s.data(), &v, 8);
    return s;
  };
  std::vector<uint8_t> values;
  for (int64_t first = 0; first < num_rows; first += rows_per_group) {
    Group g;
    g.rows = std::min(rows_per_group, num_rows - first);
    for (size_t c = 0; c < names.size(); ++c) {
      values.resize(static_cast<size_t>(g.rows) * 8);
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int64_t r = 0; r < g.rows; ++r) {
        const int64_t v = value(first + r, c);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        std::memcpy(values.data() + r * 8, &v, 8);
      }
      CompactWriter h;
      h.I32(1, 0);  // DATA_PAGE
      h.I32(2, static_cast<int32_t>(values.size()));
      h.I32(3, static_cast<int32_t>(values.size()));
      h.BeginStruct(5);  // DataPageHeader
      h.I32(1, static_cast<int32_t>(g.rows));
      h.I32(2, 0);  // PLAIN
      h.I32(3, 3);  // RLE
      h.I32(4, 3);
      h.EndStruct();
      h.bytes.push_back(0);
      Chunk k{offset, static_cast<int64_t>(h.bytes.size() + values.size()), lo, hi};
      put(h.bytes.data(), h.bytes.size());
      put(values.data(), values.size());
      g.chunks.push_back(k);
    }
    groups.push_back(std::move(g));
  }
  CompactWriter m;
  m.I32(1, 1);  // version
  m.List(2, 12, names.size() + 1);
  m.BeginListStruct();
  m.Binary(4, "schema");
  m.I32(5, static_cast<int32_t>(names.size()));
  m.EndStruct();
  for (const auto& n : names) {
    m.BeginListStruct();
    m.I32(1, 2);  // INT64
    m.I32(3, 0);  // REQUIRED
    m.Binary(4, n);
    m.EndStruct();
  }
  m.I64(3, num_rows);
  m.List(4, 12, groups.size());
  for (const Group& g : groups) {
    m.BeginListStruct();
    m.List(1, 12, g.chunks.size());
    int64_t total = 0;
    for (size_t c = 0; c < g.chunks.size(); ++c) {
      const Chunk& k = g.chunks[c];
      total += k.size;
      m.BeginListStruct();
      m.I64(2, k.offset);
      m.BeginStruct(3);  // ColumnMetaData
      m.I32(1, 2);
      m.List(2, 5, 1);
      m.Varint(CompactWriter::ZigZag(0));
      m.List(3, 8, 1);
      m.Str(names[c]);
      m.I32(4, 0);  // UNCOMPRESSED
      m.I64(5, g.rows);
      m.I64(6, k.size);
      m.I64(7, k.size);
      m.I64(9, k.offset);
      m.BeginStruct(12);  // Statistics
      m.Binary(1, raw(k.max));
      m.Binary(2, raw(k.min));
      m.I64(3, 0);
      m.Binary(5, raw(k.max));
      m.Binary(6, raw(k.min));
      m.EndStruct();
      m.EndStruct();
      m.EndStruct();
    }
    m.I64(2, total);
    m.I64(3, g.rows);
    m.EndStruct();
  }
  m.bytes.push_back(0);  // end of FileMetaData
  put(m.bytes.data(), m.bytes.size());
  const uint32_t len = static_cast<uint32_t>(m.bytes.size());
  put(&len, 4);
  put("PAR1", 4);
}

}  // namespace quiver::sql::testing
