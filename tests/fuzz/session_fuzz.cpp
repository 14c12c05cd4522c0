// libFuzzer target: arbitrary bytes from a client, through rgpud's real decoder and request
// handlers (Session::Serve over a socketpair), against the fake backend (fake_backend.h says
// why not PoCL). scripts/fuzz.sh builds and runs it.
//
// Input: the first byte chooses the mode. Even: a valid Hello is sent first and the rest of
// the input is the stream of requests that follows (so that mutations reach the handlers
// behind the handshake); with bit 1 set as well, a shared region (a sealed memfd, as the ICD
// passes one) is attached after the Hello, so that requests naming shared data reach their
// handlers. Odd: the rest of the input is the whole stream, Hello included.
//
// Beyond the sanitizers, after every input the session must have released every backend
// object and every byte charged to the tenant's quota.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <thread>

#include <spdlog/spdlog.h>

#include "proto/shared_region.h"
#include "proto/transport.h"
#include "proto/messages.h"
#include "proto/wire.h"
#include "server/server.h"
#include "server/session.h"
#include "tests/support/fake_backend.h"

namespace {

using namespace rgpu;

server::Server* g_server;
fake::FakeBackend* g_backend;
uint64_t g_next_session = 1;

std::vector<uint8_t> HelloFrame() {
  proto::HelloRequest hello;  // no token: the anonymous tenant needs none
  hello.client_name = "fuzz";
  const std::vector<uint8_t> body = hello.Encode();
  std::vector<uint8_t> frame(proto::kHeaderSize);
  proto::EncodeHeader(proto::FrameHeader{static_cast<uint32_t>(body.size()),
                                         static_cast<uint16_t>(proto::Op::Hello), 0, 1},
                      frame.data());
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

void WriteAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0) return;  // the session ended early (it refused the input): fine
    p += k;
    n -= static_cast<size_t>(k);
  }
}

int g_region_fd = -1;
constexpr uint64_t kRegionBytes = rgpu::proto::kSharedHeader + (8u << 20);

// Passes the region to the session as the ICD does: AttachShared with the descriptor.
void AttachRegion(int sock) {
  std::vector<uint8_t> frame(proto::kHeaderSize);
  proto::EncodeHeader(proto::FrameHeader{8, static_cast<uint16_t>(proto::Op::AttachShared), 0, 2},
                      frame.data());
  proto::Writer w(&frame);
  proto::AttachSharedRequest{kRegionBytes}.EncodeTo(w);
  iovec iov{frame.data(), frame.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &g_region_fd, sizeof(int));
  if (::sendmsg(sock, &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(frame.size())) std::abort();
}

[[noreturn]] void Leak(const char* what, long n) {
  std::fprintf(stderr, "session_fuzz: %ld %s left after the session ended\n", n, what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  server::ServerOptions opt;
  // Small bounds keep each input cheap; the limits' code paths are the same.
  opt.max_staging_bytes = 8 << 20;
  opt.max_outbox_bytes = 8 << 20;
  opt.max_objects_per_session = 4096;
  g_region_fd = memfd_create("session_fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (g_region_fd < 0 || ftruncate(g_region_fd, kRegionBytes) != 0 ||
      fcntl(g_region_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    std::abort();
  auto backend = std::make_unique<fake::FakeBackend>();
  g_backend = backend.get();
  g_server = new server::Server(opt, std::move(backend));
  // The server's threads end before the statics they use do. Left running, they outlived
  // spdlog's registry at the fuzzer's exit (made above, so destroyed after this handler runs),
  // which the heap trimmer asks whether to log half a second after a session ends: ASan
  // reported a heap-use-after-free in a server thread after "Done ... runs" (no stack: the
  // process exited while printing it).
  std::atexit([] {
    delete g_server;
    g_server = nullptr;
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> input;
  const bool with_hello = (data[0] & 1) == 0, with_region = (data[0] & 3) == 2;
  if (with_hello && !with_region) input = HelloFrame();
  input.insert(input.end(), data + 1, data + size);

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
  std::thread serve([fd = sv[0]] {
    server::Session session(g_server, g_next_session++, std::make_unique<proto::Stream>(fd),
                            "fuzz");
    session.Serve();
  });
  // Answers are read (and dropped) as they come, so that backpressure never stalls us.
  std::thread drain([fd = sv[1]] {
    char buf[65536];
    while (::recv(fd, buf, sizeof(buf), 0) > 0) {
    }
  });
  if (with_region) {
    const auto hello = HelloFrame();
    WriteAll(sv[1], hello.data(), hello.size());
    AttachRegion(sv[1]);
  }
  WriteAll(sv[1], input.data(), input.size());
  ::shutdown(sv[1], SHUT_WR);
  serve.join();
  drain.join();
  ::close(sv[1]);

  if (long n = g_backend->LiveObjects(); n != 0) Leak("backend objects", n);
  if (uint64_t n = g_server->TotalObjects(); n != 0) Leak("session objects", static_cast<long>(n));
  for (const auto& t : g_server->tenants())
    if (uint64_t n = g_server->Usage(t.get()).mem_bytes.load(); n != 0)
      Leak("bytes charged to the tenant's quota", static_cast<long>(n));
  return 0;
}
