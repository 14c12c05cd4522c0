// The big-endian test client is built without OpenSSL (there is none for s390x here): plain
// connections only. Stands in for proto/tls.cpp's client side in that build alone.
#include "proto/tls.h"

namespace rgpu::proto {

TlsClientOptions TlsClientOptions::FromEnvironment() { return {}; }

Result<std::unique_ptr<Stream>> ConnectTls(const Address&, const TlsClientOptions&,
                                           std::chrono::milliseconds) {
  return Status::Error(-5, "this test build has no TLS");
}

Result<std::unique_ptr<Stream>> ConnectClient(const Address& a, std::chrono::milliseconds timeout) {
  if (a.tls) return Status::Error(-5, "this test build has no TLS");
  return Connect(a, timeout);
}

}  // namespace rgpu::proto
