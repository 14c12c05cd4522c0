#include "proto/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace rgpu::proto {

namespace {

constexpr int32_t kIoError = -5;     // CL_OUT_OF_RESOURCES, as for plain socket errors
constexpr int32_t kConfigError = -30;  // CL_INVALID_VALUE

// OpenSSL's error queue as one line, with a hint for the failures people meet first.
std::string SslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    const char* reason = ERR_reason_error_string(e);
    if (!out.empty()) out += "; ";
    out += reason ? reason : buf;
    switch (ERR_GET_REASON(e)) {
      case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
        out += " (the server requires a client certificate: set RGPU_CERT and RGPU_KEY)";
        break;
      case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
      case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
        out += " (the peer did not accept the certificate it was shown)";
        break;
      default:
        break;
    }
  }
  return out.empty() ? "unknown TLS error" : out;
}

int Millis(std::chrono::milliseconds t) { return t.count() > 0 ? static_cast<int>(t.count()) : -1; }

class TlsStream : public Stream {
 public:
  TlsStream(int fd, SSL* ssl) : Stream(fd), ssl_(ssl) {}
  ~TlsStream() override { SSL_free(ssl_); }

  // Runs `op` (an SSL call that returns 1 on success) until it succeeds, polling without
  // the lock whenever OpenSSL waits for the socket.
  template <typename Op>
  Status Run(Op op, const char* what, int timeout_ms) {
    for (;;) {
      short want;
      {
        std::lock_guard lk(mu_);
        ERR_clear_error();
        errno = 0;
        int rc = op();
        if (rc == 1) return Status::Ok();
        switch (SSL_get_error(ssl_, rc)) {
          case SSL_ERROR_WANT_READ: want = POLLIN; break;
          case SSL_ERROR_WANT_WRITE: want = POLLOUT; break;
          case SSL_ERROR_ZERO_RETURN: return Status::Error(kIoError, "connection closed");
          case SSL_ERROR_SYSCALL:
            if (ERR_peek_error() == 0)
              return Status::Error(kIoError, errno ? std::string(what) + ": " + std::strerror(errno)
                                                   : "connection closed");
            [[fallthrough]];
          default:
            return Status::Error(kIoError, std::string(what) + ": " + Describe());
        }
      }
      pollfd p{fd_, want, 0};
      int rc = ::poll(&p, 1, timeout_ms);
      if (rc == 0) return Status::Error(kIoError, std::string(what) + ": timed out");
      if (rc < 0 && errno != EINTR)
        return Status::Error(kIoError, std::string(what) + ": " + std::strerror(errno));
    }
  }

  // The certificate check's verdict comes first: it says more than the alert that follows.
  std::string Describe() {
    std::string errors = SslErrors();
    long v = SSL_get_verify_result(ssl_);
    if (v == X509_V_OK) return errors;
    return "certificate verify failed: " + std::string(X509_verify_cert_error_string(v)) + " (" +
           errors + ")";
  }

  Status Handshake(bool server, std::chrono::milliseconds timeout) {
    return Run([&] { return server ? SSL_accept(ssl_) : SSL_connect(ssl_); },
               "TLS handshake", Millis(timeout));
  }

  Status SendAll(const struct iovec* iov, int iovcnt) override {
    // Small frames go out as one record rather than a record per piece.
    size_t total = 0;
    for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
    if (iovcnt > 1 && total <= sizeof(small_)) {
      size_t at = 0;
      for (int i = 0; i < iovcnt; ++i) {
        std::memcpy(small_ + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
      }
      return Write(small_, total);
    }
    for (int i = 0; i < iovcnt; ++i)
      if (Status s = Write(iov[i].iov_base, iov[i].iov_len); !s.ok()) return s;
    return Status::Ok();
  }

  // A record cannot be half-sent from one thread and finished from another: the caller's
  // writer thread sends everything (SendAll).
  size_t TrySend(const struct iovec*, int) override { return 0; }

  Status RecvAll(void* buf, size_t n) override {
    auto* p = static_cast<uint8_t*>(buf);
    while (n > 0) {
      size_t got = 0;
      Status s = Run([&] { return SSL_read_ex(ssl_, p, n, &got); }, "TLS recv", recv_timeout_ms_);
      if (!s.ok()) return s;
      CountReceived(got);
      p += got;
      n -= got;
    }
    return Status::Ok();
  }

  Result<size_t> RecvSome(void* buf, size_t max) override {
    size_t got = 0;
    Status s = Run([&] { return SSL_read_ex(ssl_, buf, max, &got); }, "TLS recv", recv_timeout_ms_);
    if (!s.ok()) return s;
    CountReceived(got);
    return got;
  }

  void SetRecvTimeout(std::chrono::milliseconds timeout) override {
    recv_timeout_ms_ = Millis(timeout);
  }

  SSL* ssl() { return ssl_; }
  bool PollShowsData() const override { return false; }

 private:
  Status Write(const void* buf, size_t n) {
    const auto* p = static_cast<const uint8_t*>(buf);
    while (n > 0) {
      size_t put = 0;
      Status s = Run([&] { return SSL_write_ex(ssl_, p, n, &put); }, "TLS send", -1);
      if (!s.ok()) return s;
      CountSent(put);
      p += put;
      n -= put;
    }
    return Status::Ok();
  }

  std::mutex mu_;  // every SSL call on ssl_
  SSL* ssl_;
  int recv_timeout_ms_ = -1;  // written before the receiving thread starts
  uint8_t small_[4096];       // used only by the (single) sending thread
};

SSL_CTX* NewContext(bool server) {
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (!ctx) return nullptr;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (server) SSL_CTX_set_num_tickets(ctx, 0);  // sessions are long; resumption buys nothing
  return ctx;
}

// Client side: called when the server asks for a certificate and none was configured.
// Noting it lets the client say so at once; with TLS 1.3 the server's refusal would only
// arrive after the handshake, as a reset connection.
int NoteCertificateRequest(SSL* ssl, X509**, EVP_PKEY**) {
  if (auto* asked = static_cast<bool*>(SSL_get_app_data(ssl))) *asked = true;
  return 0;
}

Result<std::unique_ptr<Stream>> Wrap(SSL_CTX* ctx, int fd, bool server, const std::string& host,
                                     std::chrono::milliseconds timeout) {
  SSL* ssl = SSL_new(ctx);
  if (!ssl) {
    ::close(fd);
    return Status::Error(kIoError, "TLS: " + SslErrors());
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  SSL_set_fd(ssl, fd);
  if (!server) {
    // The certificate must name the host we dialled: an IP address or a DNS name.
    in6_addr ip;
    if (inet_pton(AF_INET, host.c_str(), &ip) == 1 || inet_pton(AF_INET6, host.c_str(), &ip) == 1) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, host.c_str());
      SSL_set1_host(ssl, host.c_str());
    }
  }
  bool certificate_asked = false;
  SSL_set_app_data(ssl, &certificate_asked);
  auto stream = std::make_unique<TlsStream>(fd, ssl);  // owns fd and ssl from here
  Status s = stream->Handshake(server, timeout);
  SSL_set_app_data(ssl, nullptr);
  if (!s.ok()) return s;
  if (certificate_asked)
    return Status::Error(kIoError, "the server requires a client certificate: set RGPU_CERT "
                                   "and RGPU_KEY");
  return std::unique_ptr<Stream>(std::move(stream));
}

}  // namespace

Result<std::shared_ptr<TlsServer>> TlsServer::Create(const std::string& cert, const std::string& key,
                                                     const std::string& client_ca) {
  SSL_CTX* ctx = NewContext(true);
  if (!ctx) return Status::Error(kConfigError, "TLS: " + SslErrors());
  std::shared_ptr<TlsServer> server(new TlsServer(ctx));
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1)
    return Status::Error(kConfigError, "TLS: cannot use certificate " + cert + ": " + SslErrors());
  if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1)
    return Status::Error(kConfigError, "TLS: cannot use key " + key + ": " + SslErrors());
  if (SSL_CTX_check_private_key(ctx) != 1)
    return Status::Error(kConfigError, "TLS: key " + key + " does not match " + cert);
  if (!client_ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, client_ca.c_str(), nullptr) != 1)
      return Status::Error(kConfigError, "TLS: cannot read client CA " + client_ca + ": " + SslErrors());
    SSL_CTX_set_client_CA_list(ctx, SSL_load_client_CA_file(client_ca.c_str()));
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return server;
}

TlsServer::~TlsServer() { SSL_CTX_free(ctx_); }

Result<std::unique_ptr<Stream>> TlsServer::Accept(int fd, std::chrono::milliseconds timeout,
                                                  std::string* client) {
  auto stream = Wrap(ctx_, fd, true, "", timeout);
  if (!stream.ok()) return stream;
  client->clear();
  if (X509* peer = SSL_get_peer_certificate(static_cast<TlsStream&>(**stream).ssl())) {
    char name[256];
    X509_NAME_oneline(X509_get_subject_name(peer), name, sizeof(name));
    *client = name;
    X509_free(peer);
  }
  return stream;
}

TlsClientOptions TlsClientOptions::FromEnvironment() {
  TlsClientOptions o;
  if (const char* v = std::getenv("RGPU_CA")) o.ca_file = v;
  if (const char* v = std::getenv("RGPU_CERT")) o.cert_file = v;
  if (const char* v = std::getenv("RGPU_KEY")) o.key_file = v;
  return o;
}

Result<std::unique_ptr<Stream>> ConnectTls(const Address& a, const TlsClientOptions& options,
                                           std::chrono::milliseconds timeout) {
  Address plain = a;
  plain.tls = false;
  auto tcp = Connect(plain, timeout);
  if (!tcp.ok()) return tcp.status();
  // The plain stream hands its socket over to the TLS one.
  int fd = ::dup((*tcp)->fd());
  tcp->reset();
  if (fd < 0) return Status::Error(kIoError, std::string("dup: ") + std::strerror(errno));
  auto s = ConnectTlsOn(fd, a.host, options, timeout);
  if (!s.ok())
    return Status::Error(s.status().code(), "TLS with " + a.ToString() + " failed: " +
                                                s.status().message());
  return s;
}

Result<std::unique_ptr<Stream>> ConnectTlsOn(int fd, const std::string& host,
                                             const TlsClientOptions& options,
                                             std::chrono::milliseconds timeout) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(NewContext(false), SSL_CTX_free);
  auto fail = [fd](Status s) -> Result<std::unique_ptr<Stream>> {
    ::close(fd);
    return s;
  };
  if (!ctx) return fail(Status::Error(kIoError, "TLS: " + SslErrors()));
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_client_cert_cb(ctx.get(), NoteCertificateRequest);
  if (!options.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), options.ca_file.c_str(), nullptr) != 1)
      return fail(Status::Error(kConfigError, "TLS: cannot read RGPU_CA file " + options.ca_file +
                                                  ": " + SslErrors()));
  } else {
    SSL_CTX_set_default_verify_paths(ctx.get());
  }
  if (!options.cert_file.empty() || !options.key_file.empty()) {
    const std::string& key = options.key_file.empty() ? options.cert_file : options.key_file;
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), options.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) != 1)
      return fail(Status::Error(kConfigError, "TLS: cannot use RGPU_CERT/RGPU_KEY: " + SslErrors()));
  }
  return Wrap(ctx.get(), fd, false, host, timeout);  // the SSL keeps ctx referenced
}

Result<std::unique_ptr<Stream>> ConnectClient(const Address& a, std::chrono::milliseconds timeout) {
  TlsClientOptions options = TlsClientOptions::FromEnvironment();
  if (!a.is_unix && (a.tls || !options.ca_file.empty())) return ConnectTls(a, options, timeout);
  return Connect(a, timeout);
}

}  // namespace rgpu::proto
