#include "s3_options.h"

namespace quiver::cli {

void AddS3StoreOptions(CLI::App* cmd, S3StoreOptions* o, bool for_chunks) {
  cmd->add_option("--s3-endpoint", o->endpoint,
                  for_chunks ? "https://HOST:PORT of the S3 store of --chunk-store s3://... (links are signed for "
                               "exactly this host name) and of s3://BUCKET/KEY tables"
                             : "https://HOST:PORT of the S3 store of s3://BUCKET/KEY tables (credentials from "
                               "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN)");
  cmd->add_option("--s3-region", o->region, "region in the SigV4 scope (default us-east-1)");
  cmd->add_option("--s3-ca-cert", o->ca_cert, "extra CA certificate (PEM) to trust for the S3 store");
}

Result<objstore::S3ClientOptions> S3ClientOptionsFrom(const S3StoreOptions& o, const std::string& bucket) {
  QUIVER_ASSIGN_OR_RETURN(auto creds, objstore::S3CredentialsFromEnv());
  objstore::S3ClientOptions c;
  c.endpoint = o.endpoint;
  c.bucket = bucket;
  c.region = o.region;
  c.credentials = std::move(creds);
  c.tls.ca_cert_path = o.ca_cert;
  return c;
}

Result<std::shared_ptr<formats::S3Files>> MakeS3Files(const S3StoreOptions& o, MemoryPool* pool) {
  if (o.endpoint.empty()) return std::shared_ptr<formats::S3Files>();
  formats::S3FilesOptions fo;
  QUIVER_ASSIGN_OR_RETURN(fo.client, S3ClientOptionsFrom(o, "tables"));
  fo.pool = pool;
  return formats::S3Files::Make(std::move(fo));
}

std::string S3FilesSummary(const formats::S3Files* files) {
  if (files == nullptr) return "";
  const formats::S3FilesStats s = files->stats();
  if (s.heads == 0 && s.gets == 0 && s.lists == 0) return "";
  return "; s3 " + std::to_string(s.gets) + " GETs, " + FormatBytes(s.get_bytes) + " (" + std::to_string(s.get_bytes) +
         " bytes; " + std::to_string(s.heads) + " HEADs, " + std::to_string(s.lists) + " listings, footers cached " +
         std::to_string(s.tail_cache_hits) + " of " + std::to_string(s.tail_cache_hits + s.tail_cache_misses) + ")";
}

}  // namespace quiver::cli
