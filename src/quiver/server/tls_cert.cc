// quiver/server/tls_cert.cc — self-signed certificate generation (OpenSSL 3).
#include "quiver/server/tls_cert.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

namespace quiver::server {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
struct FileClose {
  void operator()(FILE* f) const { std::fclose(f); }
};

Status AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) return Status::IOError(std::string("tls cert: cannot make extension ") + value);
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (!ok) return Status::IOError(std::string("tls cert: cannot add extension ") + value);
  return Status::OK();
}

}  // namespace

Result<GeneratedCert> GenerateSelfSignedCert(const std::string& dir) {
  std::unique_ptr<EVP_PKEY, PkeyFree> key(EVP_EC_gen("P-256"));
  if (!key) return Status::IOError("tls cert: EC P-256 key generation failed");
  std::unique_ptr<X509, X509Free> cert(X509_new());
  if (!cert) return Status::IOError("tls cert: X509_new failed");
  X509_set_version(cert.get(), 2);
  uint8_t serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof serial_bytes) != 1) return Status::IOError("tls cert: RAND_bytes failed");
  serial_bytes[0] &= 0x7F;
  BIGNUM* bn = BN_bin2bn(serial_bytes, sizeof serial_bytes, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 30L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("quiver serve"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  QUIVER_RETURN_NOT_OK(AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE"));
  QUIVER_RETURN_NOT_OK(AddExtension(cert.get(), NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"));
  QUIVER_RETURN_NOT_OK(AddExtension(cert.get(), NID_subject_key_identifier, "hash"));
  if (!X509_sign(cert.get(), key.get(), EVP_sha256())) return Status::IOError("tls cert: X509_sign failed");

  GeneratedCert out;
  out.cert_path = dir + "/quiver-serve-cert.pem";
  out.key_path = dir + "/quiver-serve-key.pem";
  {
    unlink(out.key_path.c_str());
    const int fd = open(out.key_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return Status::IOError("tls cert: cannot create " + out.key_path);
    std::unique_ptr<FILE, FileClose> f(fdopen(fd, "w"));
    if (!f) {
      close(fd);
      return Status::IOError("tls cert: fdopen " + out.key_path);
    }
    if (!PEM_write_PrivateKey(f.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr)) {
      return Status::IOError("tls cert: cannot write " + out.key_path);
    }
  }
  {
    std::unique_ptr<FILE, FileClose> f(std::fopen(out.cert_path.c_str(), "w"));
    if (!f) return Status::IOError("tls cert: cannot create " + out.cert_path);
    if (!PEM_write_X509(f.get(), cert.get())) return Status::IOError("tls cert: cannot write " + out.cert_path);
  }
  return out;
}

}  // namespace quiver::server
