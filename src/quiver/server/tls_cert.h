// quiver/server/tls_cert.h — a self-signed TLS certificate for the result
// server when none is given: an EC P-256 key, valid from one hour ago for
// 30 days, CN=localhost, subjectAltName IP:127.0.0.1 and DNS:localhost (Node
// clients match an IP host only against an IP SAN), basicConstraints CA:TRUE
// so that clients can trust it directly (customCaCert / NODE_EXTRA_CA_CERTS).
#pragma once

#include <string>

#include "quiver/base/result.h"

namespace quiver::server {

struct GeneratedCert {
  std::string cert_path;  ///< PEM certificate (0644)
  std::string key_path;   ///< PEM private key (0600)
};

/// Generates the certificate and key and writes them into `dir` (which must
/// exist) as quiver-serve-cert.pem and quiver-serve-key.pem, replacing older
/// ones. Errors: IOError naming the OpenSSL step or the file.
Result<GeneratedCert> GenerateSelfSignedCert(const std::string& dir);

}  // namespace quiver::server
