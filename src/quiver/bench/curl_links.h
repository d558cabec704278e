// quiver/bench/curl_links.h — the peer the fetch benchmarks compare with:
// every CloudFetch link of a result, collected through the protocol, then
// downloaded by `curl --parallel` to /dev/null over the same TLS.
//
// Thread safety: CollectLinks uses its client from the calling thread only;
// CurlParallel runs one curl child and may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/fetch/protocol_client.h"

namespace quiver::bench {

/// Every link of a finished statement: those of its direct results, then
/// FetchResults pages until hasMoreRows is false. Errors: the client's.
Result<std::vector<fetch::ResultLink>> CollectLinks(fetch::ProtocolClient* client,
                                                    const fetch::StatementResult& statement);

/// Writes a curl config of `links` (url, /dev/null output, the links' HTTP
/// headers) to `config_path` and runs `curl` (a program or a command
/// prefix, through the shell) with --parallel --parallel-max `parallel`,
/// trusting `ca_cert_path`; returns curl's wall seconds. Errors: IOError
/// when the config cannot be written or curl exits non-zero (naming the
/// command and its status).
Result<double> CurlParallel(const std::vector<fetch::ResultLink>& links, const std::string& curl, int parallel,
                            const std::string& ca_cert_path, const std::string& config_path);

}  // namespace quiver::bench
