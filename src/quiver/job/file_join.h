// quiver/job/file_join.h — `quiver join`: a hash join of two Arrow IPC
// inputs (files or streams), the build side in a hashed relation in on-heap
// or off-heap memory (join/hash_join.h, join/task_memory_manager.h), the
// result written as Arrow IPC (optionally body-compressed), and what it took:
// rows, times and memory.
//
// Everything that can be refused (join type, memory mode, codec, the key
// spec against both schemas) is checked before any batch is read; the build
// side is read whole, the probe side batch by batch, and the output is
// opened only once the relation stands and committed only on success
// (ipc::OpenOutputFile: a failed run leaves no file).
//
// Thread safety: one run per call; the run uses the calling thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/data_type.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::job {

struct FileJoinOptions {
  std::string build_path;               ///< build side (right input): IPC file or stream; "-" = stdin
  std::string probe_path;               ///< probe side (left input); "-" = stdin (not both)
  std::string on;                       ///< key columns "BUILD_COL=PROBE_COL[,...]"
  std::string type = "inner";           ///< join::ParseJoinType: inner|left|right|full|semi|anti|null-aware-anti
  std::string memory_mode = "on-heap";  ///< join::ParseMemoryMode: on-heap|off-heap
  int64_t memory_limit_bytes = -1;      ///< limit of the "join" pool (relation and output); < 0 none
  std::string output_path = "-";        ///< "-" = stdout
  std::string compression = "none";     ///< output body codec: none|lz4|zstd
  bool file_format = false;             ///< IPC file (true) or stream (false) output
  int64_t max_output_rows = 64 * 1024;  ///< output batch bound in rows
  int64_t max_output_bytes = int64_t{16} << 20;  ///< output batch bound in bytes
  bool huge_pages = false;                       ///< advise transparent huge pages for off-heap pages
  bool prefault = false;                         ///< fault relation pages in when they are acquired
};

/// What one run did (bytes in bytes, times in seconds).
struct FileJoinResult {
  std::string type;         ///< join::JoinTypeName
  std::string memory_mode;  ///< join::MemoryModeName
  int64_t build_rows = 0;
  int64_t num_keys = 0;     ///< distinct keys in the relation
  std::string index_mode;   ///< "dense" / "sparse" (LongHashedRelation) or "generic"
  int64_t index_bytes = 0;  ///< the relation's index
  int64_t probe_rows = 0;
  int64_t output_rows = 0;
  double build_seconds = 0;     ///< read build side + build the relation
  double probe_seconds = 0;     ///< probe + write + commit
  int64_t relation_bytes = 0;   ///< the relation's pages in use
  int64_t join_held_bytes = 0;  ///< the "join" pool after the relation is closed
  int64_t join_peak_bytes = 0;  ///< the "join" pool's peak over the run
  int64_t mapped_bytes = 0;     ///< off-heap pages mapped (TaskMemoryManager)
  int64_t peak_mapped_bytes = 0;
};

/// Key column indices from `spec` ("b1=p1,b2=p2"; spaces around names are
/// ignored): Invalid for a malformed spec (empty, an empty piece as in
/// "a=b," or "a=b,,c=d", a piece without exactly one '=' or with an empty
/// side), KeyError naming the missing column, the side's path and its
/// columns.
Status ResolveJoinKeys(const std::string& spec, const Schema& build, const std::string& build_path, const Schema& probe,
                       const std::string& probe_path, std::vector<int>* build_keys, std::vector<int>* probe_keys);

/// Runs the join. Memory is charged to children of `root`: "join" (limited
/// by memory_limit_bytes: the relation and the output batches), "read" and
/// "write". Errors: the option parsers', ResolveJoinKeys', the readers'
/// (with "--build PATH" / "--probe PATH" context), the join's (OutOfMemory
/// past the limit) and the writer's; nothing is committed then.
Result<FileJoinResult> RunFileJoin(const FileJoinOptions& options, const std::shared_ptr<MemoryPool>& root);

/// The two report lines of `quiver join` (stderr):
/// "join TYPE: B build rows (K keys, MODE index SIZE, X B/key), P probe rows
/// -> O rows; build S s, probe S s" and "memory (MODE): relation SIZE; join
/// pool held SIZE, peak SIZE; mapped SIZE (peak SIZE)", each ending "\n".
std::string FormatFileJoinReport(const FileJoinResult& result);

}  // namespace quiver::job
