// TLS over TCP (OpenSSL) for both ends of the protocol. The frames inside are unchanged
// (docs/protocol.md); TLS only wraps the byte stream.
//
// A TLS stream is one SSL object shared by a sending and a receiving thread. OpenSSL does
// not allow concurrent calls on one SSL object, so every SSL call holds the stream's lock,
// and the socket is non-blocking: a thread that must wait for the network releases the
// lock and polls, so a reader blocked on an idle connection never holds up a writer.
// Renegotiation is refused (TLS 1.2) and absent (TLS 1.3), so a write never needs to read.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "proto/transport.h"

struct ssl_ctx_st;

namespace rgpu::proto {

// rgpud's side: one per server, shared by every accepted connection.
class TlsServer {
 public:
  // `cert` and `key` are PEM files (the chain first). With `client_ca`, clients must
  // present a certificate signed by it.
  static Result<std::shared_ptr<TlsServer>> Create(const std::string& cert, const std::string& key,
                                                   const std::string& client_ca);
  ~TlsServer();
  // Runs the handshake on an accepted TCP socket, which it owns (closed on failure).
  // `client` receives the client certificate's subject, if one was presented.
  Result<std::unique_ptr<Stream>> Accept(int fd, std::chrono::milliseconds timeout,
                                         std::string* client);

 private:
  explicit TlsServer(ssl_ctx_st* ctx) : ctx_(ctx) {}
  ssl_ctx_st* ctx_;
};

// The client's side, from the environment (README, "Using it"):
//   RGPU_CA    PEM file of the CA that signed the server's certificate; setting it turns
//              TLS on for every TCP server. Without it, tls:// addresses are checked
//              against the system's trust store.
//   RGPU_CERT, RGPU_KEY   a client certificate and its key, for servers that ask for one.
struct TlsClientOptions {
  std::string ca_file, cert_file, key_file;
  static TlsClientOptions FromEnvironment();
};

// Connects and runs the handshake; the server's certificate must chain to the CA and name
// the host (DNS name or IP address) in `a`.
Result<std::unique_ptr<Stream>> ConnectTls(const Address& a, const TlsClientOptions& options,
                                           std::chrono::milliseconds timeout);

// The same on a TCP socket already connected (which it owns, closed on failure); `host`
// is what the server's certificate must name.
Result<std::unique_ptr<Stream>> ConnectTlsOn(int fd, const std::string& host,
                                             const TlsClientOptions& options,
                                             std::chrono::milliseconds timeout);

// What clients call: TLS when the address is tls://... or RGPU_CA is set (TCP only),
// a plain stream otherwise.
Result<std::unique_ptr<Stream>> ConnectClient(const Address& a, std::chrono::milliseconds timeout);

}  // namespace rgpu::proto
