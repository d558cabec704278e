// quiver/bench/curl_links.cc — see curl_links.h.
#include "quiver/bench/curl_links.h"

#include <cstdlib>
#include <fstream>

#include "quiver/bench/measure.h"

namespace quiver::bench {

Result<std::vector<fetch::ResultLink>> CollectLinks(fetch::ProtocolClient* client,
                                                    const fetch::StatementResult& statement) {
  std::vector<fetch::ResultLink> links;
  if (statement.first_page) links = statement.first_page->links;
  bool more = !statement.first_page || statement.first_page->has_more_rows;
  bool first = !statement.first_page;
  while (more) {
    QUIVER_ASSIGN_OR_RETURN(auto page, client->Fetch(statement.operation, first, -1));
    first = false;
    links.insert(links.end(), page.links.begin(), page.links.end());
    more = page.has_more_rows;
  }
  return links;
}

Result<double> CurlParallel(const std::vector<fetch::ResultLink>& links, const std::string& curl, int parallel,
                            const std::string& ca_cert_path, const std::string& config_path) {
  {
    std::ofstream f(config_path);
    for (const auto& l : links) {
      f << "url = \"" << l.file_link << "\"\noutput = \"/dev/null\"\n";
      for (const auto& [k, v] : l.http_headers) f << "header = \"" << k << ": " << v << "\"\n";
    }
    if (!f) return Status::IOError("bench: cannot write the curl config " + config_path);
  }
  const std::string command = curl + " --silent --no-progress-meter --show-error --fail --parallel --parallel-max " +
                              std::to_string(parallel) + " --cacert '" + ca_cert_path + "' -K '" + config_path + "'";
  const auto t0 = Clock::now();
  const int rc = std::system(command.c_str());
  const double seconds = Seconds(t0, Clock::now());
  if (rc != 0) return Status::IOError("bench: curl failed (" + std::to_string(rc) + "): " + command);
  return seconds;
}

}  // namespace quiver::bench
