// Tables in an S3 object store (issue 36 section 3; formats/s3_files.h,
// sql/file_tables.h): `s3://bucket/key.parquet`, a glob of keys and a CSV
// object, as --table and in SQL, read from a local HTTP server that answers
// as S3 does (HEAD with ETag, ranged GET with If-Match, ListObjectsV2, the
// error codes). Every byte the server sends is counted, so the tests pin
// what a query fetches: the footer once per object (then cached), and then
// only the column chunks of the columns the query reads. The same reads run
// against Ceph RGW in the objstore test (tests/objstore/run.sh).
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/s3_files.h"
#include "quiver/sql/file_scan.h"
#include "quiver/sql/file_tables.h"
#include "quiver/sql/tests/parquet_test_file.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

// An S3 store of one bucket, "tables", path-style: HEAD and GET of objects
// (Range and If-Match honoured; ETag "v<version>"), GET ?list-type=2
// (ListObjectsV2, one page), HEAD of the bucket; 404 NoSuchBucket for
// other buckets, 403 AccessDenied for everything while deny is set.
class FakeS3 {
 public:
  FakeS3() {
    auto answer = [this](const httplib::Request& req, httplib::Response& res) { Answer(req, res); };
    server_.Get(".*", answer);
    // The clients keep their connections alive: a short keep-alive lets
    // stop() return at once instead of after httplib's default 5 s.
    server_.set_keep_alive_timeout(0);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeS3() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Put(const std::string& key, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& o = objects_[key];
    o.bytes = std::move(bytes);
    ++o.version;
  }
  int64_t bytes_sent() const { return bytes_sent_.load(); }
  int64_t gets() const { return gets_.load(); }
  std::atomic<bool> deny{false};

 private:
  struct Object {
    std::string bytes;
    int version = 0;
  };
  void Error(const httplib::Request& req, httplib::Response& res, int status, const std::string& code) {
    const_cast<httplib::Request&>(req).ranges.clear();  // the whole error body
    res.status = status;
    res.set_content("<Error><Code>" + code + "</Code></Error>", "application/xml");
  }
  void Answer(const httplib::Request& req, httplib::Response& res) {
    if (deny) return Error(req, res, 403, "AccessDenied");
    const std::string path = req.path.substr(1);
    const size_t slash = path.find('/');
    const std::string bucket = path.substr(0, slash);
    const std::string key = slash == std::string::npos ? "" : path.substr(slash + 1);
    if (bucket != "tables") return Error(req, res, 404, "NoSuchBucket");
    std::lock_guard<std::mutex> lock(mu_);
    if (key.empty()) {
      if (req.method == "HEAD") return;  // the bucket exists
      const std::string prefix = req.get_param_value("prefix");
      std::string xml = "<ListBucketResult>";
      for (const auto& [k, o] : objects_) {
        if (k.rfind(prefix, 0) == 0) xml += "<Contents><Key>" + k + "</Key></Contents>";
      }
      xml += "<IsTruncated>false</IsTruncated></ListBucketResult>";
      res.set_content(xml, "application/xml");
      return;
    }
    auto it = objects_.find(key);
    if (it == objects_.end()) return Error(req, res, 404, "NoSuchKey");
    const std::string etag = "\"v" + std::to_string(it->second.version) + "\"";
    if (req.has_header("If-Match") && req.get_header_value("If-Match") != etag) {
      return Error(req, res, 412, "PreconditionFailed");
    }
    res.set_header("ETag", etag);
    if (req.method == "GET") {
      ++gets_;
      int64_t n = static_cast<int64_t>(it->second.bytes.size());
      if (req.ranges.size() == 1) {
        const auto [a, b] = req.ranges[0];
        n = std::min<int64_t>(b, n - 1) - a + 1;
      }
      bytes_sent_ += n;
    }
    res.set_content(it->second.bytes, "application/octet-stream");  // httplib applies the Range: 206
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, Object> objects_;
  std::atomic<int64_t> bytes_sent_{0}, gets_{0};
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class S3FileTableTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    dir_ = fs::temp_directory_path() / ("quiver-s3-table-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // 1,000 rows in 10 row groups of 100: a = row, b = 2 * row, c = row % 7.
    local_ = (dir_ / "t.parquet").string();
    WriteInt64Parquet(local_, {"a", "b", "c"}, 1000, 100,
                      [](int64_t r, size_t c) { return c == 0 ? r : (c == 1 ? 2 * r : r % 7); });
    store_.Put("data/t.parquet", ReadAll(local_));
    const std::string second = (dir_ / "u.parquet").string();
    WriteInt64Parquet(second, {"a", "b", "c"}, 500, 250, [](int64_t r, size_t c) { return c == 0 ? 1000 + r : 1; });
    store_.Put("data/u.parquet", ReadAll(second));
    store_.Put("data/_SUCCESS", "");
    store_.Put("csv/people.csv", "id,name\n1,ann\n2,bob\n3,cy\n");
    // The tail read at open: exactly t.parquet's footer and its last 8 bytes.
    const std::string bytes = ReadAll(local_);
    uint32_t footer = 0;
    std::memcpy(&footer, bytes.data() + bytes.size() - 8, 4);
    tail_bytes_ = int64_t{footer} + 8;
    files_ = MakeFiles(store_.endpoint());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::shared_ptr<formats::S3Files> MakeFiles(const std::string& endpoint) {
    formats::S3FilesOptions o;
    o.client.endpoint = endpoint;
    o.client.credentials = {"AKID", "secret", ""};
    o.client.backoff_base_ms = 1;
    o.client.backoff_max_ms = 2;
    o.client.max_attempts = 2;
    o.pool = pool_.get();
    o.tail_bytes = tail_bytes_;
    o.coalesce_gap_bytes = 0;  // only adjacent chunks are merged here
    auto f = formats::S3Files::Make(o);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? *f : nullptr;
  }
  std::shared_ptr<const FileTableSource> Register(const std::string& name, const std::string& url) {
    FileTableOptions o;
    o.s3 = files_;
    auto info = LoadFileTable(name, {url}, o, pool_.get());
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    if (!info.ok()) return nullptr;
    auto source = info->file_source;
    EXPECT_OK(catalog_->RegisterFileTable(name, std::move(*info)));
    return source;
  }
  ExecuteOptions WithFiles() {
    ExecuteOptions o = Options();
    o.file_tables = true;
    o.s3_files = files_;
    return o;
  }
  V Query(const std::string& sql, ExecuteOptions o) {
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, true) : V{};
  }
  // Bytes of column `column`'s chunks in the local copy (what a query of
  // that column alone must fetch).
  int64_t ColumnBytes(int column) {
    auto reader = parquet::FileReader::Open(*formats::LocalFileSource::Open(local_), pool_.get());
    EXPECT_TRUE(reader.ok());
    int64_t n = 0;
    for (const auto& rg : (*reader)->metadata().row_groups) n += rg.columns[column].meta_data->total_compressed_size;
    return n;
  }
  FakeS3 store_;
  std::shared_ptr<formats::S3Files> files_;
  fs::path dir_;
  std::string local_;
  int64_t tail_bytes_ = 0;
};

TEST(S3CoalesceByteRanges, MergesNeighboursWithinTheGapAndTheBound) {
  using R = formats::ByteRange;
  auto eq = [](const std::vector<R>& a, const std::vector<R>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].offset != b[i].offset || a[i].length != b[i].length) return false;
    }
    return true;
  };
  const std::vector<R> in = {{300, 50}, {0, 100}, {100, 100}, {210, 10}, {1000, 10}};
  EXPECT_TRUE(eq(formats::CoalesceByteRanges(in, 0, 1 << 20), {{0, 200}, {210, 10}, {300, 50}, {1000, 10}}));
  EXPECT_TRUE(eq(formats::CoalesceByteRanges(in, 10, 1 << 20), {{0, 220}, {300, 50}, {1000, 10}}));
  EXPECT_TRUE(eq(formats::CoalesceByteRanges(in, 100, 1 << 20), {{0, 350}, {1000, 10}}));
  EXPECT_TRUE(eq(formats::CoalesceByteRanges(in, 100, 250), {{0, 220}, {300, 50}, {1000, 10}}));
  // overlaps and a range inside another
  EXPECT_TRUE(eq(formats::CoalesceByteRanges(std::vector<R>{{0, 100}, {50, 100}, {60, 10}}, 0, 1 << 20), {{0, 150}}));
  EXPECT_TRUE(formats::CoalesceByteRanges(std::vector<R>{}, 0, 1).empty());
}

TEST_F(S3FileTableTest, ParquetObjectReadsTheFooterThenOnlyTheColumnsAsked) {
  auto src = Register("t", "s3://tables/data/t.parquet");
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->num_rows(), 1000);
  const int64_t size = static_cast<int64_t>(fs::file_size(local_));
  // Opening: one HEAD and one GET of the object's tail (its footer).
  auto s = files_->stats();
  EXPECT_EQ(s.heads, 1);
  EXPECT_EQ(s.gets, 1);
  EXPECT_EQ(s.get_bytes, tail_bytes_);
  EXPECT_EQ(store_.bytes_sent(), tail_bytes_);
  ASSERT_GT(size, tail_bytes_ + 3 * ColumnBytes(1));
  EXPECT_EQ(Query("SELECT sum(b) FROM t", Options()), (V{"999000"}));
  // b's 10 chunks and nothing else: one GET per row group.
  EXPECT_EQ(store_.bytes_sent() - tail_bytes_, ColumnBytes(1));
  EXPECT_EQ(files_->stats().gets, 1 + 10);
  // a and b are adjacent chunks of each row group: one GET each (merged).
  const int64_t before = store_.bytes_sent();
  EXPECT_EQ(Query("SELECT sum(a), max(b) FROM t", Options()), (V{"499500|1998"}));
  EXPECT_EQ(store_.bytes_sent() - before, ColumnBytes(0) + ColumnBytes(1));
  EXPECT_EQ(files_->stats().gets, 1 + 10 + 10);
  // ReadRanges of nothing is nothing (no request).
  auto opened = files_->Open("s3://tables/data/t.parquet");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const int64_t gets = files_->stats().gets;
  auto none = (*opened)->ReadRanges({}, pool_.get());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(files_->stats().gets, gets);
  // The same answers as the local file.
  EXPECT_EQ(Query("SELECT c, count(*), sum(a) FROM t WHERE a >= 250 AND a < 420 GROUP BY c", Options()),
            (V{"0|24|7980", "1|24|8004", "2|24|8028", "3|24|8052", "4|24|8076", "5|25|8350", "6|25|8375"}));
}

TEST_F(S3FileTableTest, FootersAreCachedPerObjectVersion) {
  ASSERT_NE(Register("s3t1", "s3://tables/data/t.parquet"), nullptr);
  ASSERT_NE(Register("s3t2", "s3://tables/data/t.parquet"), nullptr);
  auto s = files_->stats();
  EXPECT_EQ(s.heads, 2);
  EXPECT_EQ(s.gets, 1);  // the second open found the tail cached
  EXPECT_EQ(s.tail_cache_hits, 1);
  // A new version of the object (another ETag) is read afresh ...
  store_.Put("data/t.parquet", ReadAll(local_));
  ASSERT_NE(Register("s3t3", "s3://tables/data/t.parquet"), nullptr);
  EXPECT_EQ(files_->stats().tail_cache_misses, 2);
  // ... and a table opened before it was replaced fails its reads with 412
  // (If-Match) instead of mixing versions.
  auto r = Run("SELECT sum(a) FROM s3t1", Options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("s3://tables/data/t.parquet"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("HTTP 412"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(Query("SELECT sum(a) FROM s3t3", Options()), (V{"499500"}));
}

TEST_F(S3FileTableTest, GlobsFoldersAndSqlPaths) {
  auto src = Register("g", "s3://tables/data/*.parquet");
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->paths(), (V{"s3://tables/data/t.parquet", "s3://tables/data/u.parquet"}));
  EXPECT_EQ(Query("SELECT count(*), sum(a) FROM g", Options()), (V{"1500|1124250"}));
  // A folder: its Parquet objects (_SUCCESS skipped).
  auto folder = Register("f", "s3://tables/data/");
  ASSERT_NE(folder, nullptr);
  EXPECT_EQ(folder->paths().size(), 2u);
  // In SQL, as DuckDB writes it.
  EXPECT_EQ(Query("SELECT count(*) FROM 's3://tables/data/t.parquet'", WithFiles()), (V{"1000"}));
  EXPECT_EQ(Query("SELECT max(a) FROM read_parquet('s3://tables/data/*.parquet')", WithFiles()), (V{"1499"}));
  EXPECT_EQ(Query("SELECT name FROM read_csv('s3://tables/csv/people.csv', header => true) WHERE id >= 2", WithFiles()),
            (V{"bob", "cy"}));
  EXPECT_EQ(Query("SELECT sum(id) FROM 's3://tables/csv/people.csv'", WithFiles()), (V{"6"}));
}

TEST_F(S3FileTableTest, ErrorsNameTheUrlAndTheStatus) {
  FileTableOptions o;
  o.s3 = files_;
  auto missing = LoadFileTable("m", {"s3://tables/data/missing.parquet"}, o, pool_.get());
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsKeyError()) << missing.status().ToString();
  EXPECT_EQ(missing.status().sql_state(), "42P01");
  EXPECT_NE(missing.status().message().find("s3://tables/data/missing.parquet: no such object (HTTP 404)"),
            std::string::npos)
      << missing.status().ToString();
  auto bucket = LoadFileTable("m", {"s3://nobucket/t.parquet"}, o, pool_.get());
  ASSERT_FALSE(bucket.ok());
  EXPECT_NE(bucket.status().message().find("s3://nobucket/t.parquet: no such bucket 'nobucket' (HTTP 404"),
            std::string::npos)
      << bucket.status().ToString();
  auto none = LoadFileTable("m", {"s3://tables/nothing/*.parquet"}, o, pool_.get());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no object matches 's3://tables/nothing/*.parquet'"), std::string::npos);
  store_.deny = true;
  auto denied = LoadFileTable("m", {"s3://tables/data/t.parquet"}, o, pool_.get());
  ASSERT_FALSE(denied.ok());
  EXPECT_TRUE(denied.status().IsIOError());
  EXPECT_NE(denied.status().message().find("s3://tables/data/t.parquet: "), std::string::npos);
  EXPECT_NE(denied.status().message().find("answered HTTP 403"), std::string::npos) << denied.status().ToString();
  store_.deny = false;
  // No store configured: refused, naming the path and the option.
  auto nostore = LoadFileTable("m", {"s3://tables/data/t.parquet"}, FileTableOptions{}, pool_.get());
  ASSERT_FALSE(nostore.ok());
  EXPECT_NE(nostore.status().message().find("'s3://tables/data/t.parquet': no S3 store configured (give --s3-endpoint"),
            std::string::npos)
      << nostore.status().ToString();
  auto sql = Run("SELECT * FROM 's3://tables/data/t.parquet'", [&] {
    ExecuteOptions e = Options();
    e.file_tables = true;
    return e;
  }());
  ASSERT_FALSE(sql.ok());
  EXPECT_NE(sql.status().message().find("no S3 store configured"), std::string::npos) << sql.status().ToString();
}

}  // namespace
}  // namespace quiver::sql
