// quiver CLI — the S3 store options every subcommand that reaches one
// shares (`quiver serve` for its chunk store and its tables, `quiver sql`
// for tables): --s3-endpoint, --s3-region, --s3-ca-cert, and the
// credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN.
#pragma once

#include <memory>
#include <string>

#include "quiver/cli.h"
#include "quiver/formats/s3_files.h"
#include "quiver/objstore/s3_client.h"

namespace quiver::cli {

struct S3StoreOptions {
  std::string endpoint;  ///< https://HOST:PORT; empty = no store
  std::string region = "us-east-1";
  std::string ca_cert;  ///< extra trusted CA (PEM); empty = the system's
};

/// Adds --s3-endpoint, --s3-region and --s3-ca-cert to `cmd`, writing into
/// `*o` (which must outlive parsing). `for_chunks`: the help also names the
/// chunk store (quiver serve).
void AddS3StoreOptions(CLI::App* cmd, S3StoreOptions* o, bool for_chunks);

/// The client options for `bucket` from `o` and the environment's
/// credentials. Errors: Invalid naming the missing variable.
Result<objstore::S3ClientOptions> S3ClientOptionsFrom(const S3StoreOptions& o, const std::string& bucket);

/// The tables' view of the store (formats/s3_files.h), its cached footers
/// charged to `pool` (kept alive by the buffers); null when no endpoint was
/// given (s3:// tables are then refused, naming the option). Errors: as
/// S3ClientOptionsFrom, and a malformed endpoint.
Result<std::shared_ptr<formats::S3Files>> MakeS3Files(const S3StoreOptions& o, MemoryPool* pool);

/// "; s3 N GETs, B (H HEADs, L listings, footers cached C of O)" for the
/// stats line a command prints; "" when `files` is null or did nothing.
std::string S3FilesSummary(const formats::S3Files* files);

}  // namespace quiver::cli
