// `rgpu status`: connects like a client (RGPU_SERVER, RGPU_TOKEN) and prints what the
// server's Stats op reports: tenants, sessions, memory and device time.
#include "cli/status.h"

#include <cstdio>
#include <string>
#include <vector>

#include "proto/tls.h"
#include "proto/transport.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace rgpu::cli {
namespace {

using proto::FrameHeader;
using proto::Op;
using proto::Reader;

Result<std::vector<uint8_t>> Call(proto::Stream& s, Op op, const std::vector<uint8_t>& body) {
  Status st = s.SendFrame(FrameHeader{static_cast<uint32_t>(body.size()), static_cast<uint16_t>(op), 0, 1},
                          body.data(), body.size());
  if (!st.ok()) return st;
  for (;;) {
    FrameHeader h;
    std::vector<uint8_t> rb;
    st = s.RecvFrame(&h, &rb, 64u << 20);
    if (!st.ok()) return st;
    if (h.op == static_cast<uint16_t>(Op::Goodbye)) {
      Reader r(rb.data(), rb.size());
      proto::GoodbyeNotice bye;
      proto::GoodbyeNotice::Decode(r, &bye);  // cut short or too long: no reason given
      return Status::Error(-1, "server refused: " + bye.reason);
    }
    if (!(h.flags & proto::kFlagReply) || h.tag != 1) continue;
    Reader r(rb.data(), rb.size());
    proto::ReplyStatus head;
    if (!proto::ReplyStatus::Decode(r, &head)) return Status::Error(-1, "malformed reply");
    if (head.code != 0) return head.ToStatus();
    return std::vector<uint8_t>(rb.begin() + (rb.size() - r.remaining()), rb.end());
  }
}

std::string Mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", bytes / 1048576.0);
  return buf;
}

}  // namespace

int PrintStatus(const StatusOptions& o) {
  auto addr = proto::ParseAddress(o.server);
  if (!addr.ok()) return std::fprintf(stderr, "rgpu: %s\n", addr.status().message().c_str()), 2;
  auto stream = proto::ConnectClient(*addr, std::chrono::milliseconds(3000));  // TLS: proto/tls.h
  if (!stream.ok())
    return std::fprintf(stderr, "rgpu: %s: %s\n", o.server.c_str(), stream.status().message().c_str()), 1;
  proto::HelloRequest hello;
  hello.token = o.token;
  hello.client_name = "rgpu status";
  auto h = Call(**stream, Op::Hello, hello.Encode());
  if (!h.ok()) return std::fprintf(stderr, "rgpu: %s\n", h.status().message().c_str()), 1;
  Reader hr(h->data(), h->size());
  proto::HelloReply hello_reply;  // asked for no features: no fields after the quota
  if (!proto::HelloReply::Decode(hr, &hello_reply))
    return std::fprintf(stderr, "rgpu: malformed Hello reply\n"), 1;
  auto st = Call(**stream, Op::Stats, proto::EncodeBody(proto::StatsRequest{}));
  if (!st.ok()) return std::fprintf(stderr, "rgpu: %s\n", st.status().message().c_str()), 1;
  Reader r(st->data(), st->size());
  proto::StatsReply stats;
  if (!proto::StatsReply::Decode(r, &stats))
    return std::fprintf(stderr, "rgpu: malformed Stats reply\n"), 1;
  std::printf("server %s (%s): %llu sessions, %llu objects\n\n", hello_reply.server_name.c_str(),
              addr->ToString().c_str(), static_cast<unsigned long long>(stats.session_count - 1),
              static_cast<unsigned long long>(stats.total_objects));
  std::printf("%-20s %-17s %7s %9s %12s %12s %14s %12s\n", "TENANT", "PRIORITY", "WEIGHT",
              "SESSIONS", "MEM MiB", "QUOTA MiB", "DEVICE TIME s", "COMMANDS");
  for (const auto& t : stats.tenants)
    std::printf("%-20s %-17s %7.2f %9u %12s %12s %14.3f %12llu\n", t.id.c_str(), t.priority.c_str(),
                t.milli_weight / 1000.0, t.sessions, Mib(t.mem_bytes).c_str(),
                t.mem_quota ? Mib(t.mem_quota).c_str() : "-", t.device_ns * 1e-9,
                static_cast<unsigned long long>(t.commands));
  std::printf("\n%-8s %-20s %-28s %9s %12s %10s\n", "SESSION", "TENANT", "PEER", "OBJECTS",
              "COMMANDS", "IN FLIGHT");
  for (const auto& s : stats.sessions)
    std::printf("%-8llu %-20s %-28s %9llu %12llu %10llu\n", static_cast<unsigned long long>(s.id),
                s.tenant.c_str(), s.peer.c_str(), static_cast<unsigned long long>(s.objects),
                static_cast<unsigned long long>(s.commands),
                static_cast<unsigned long long>(s.in_flight));
  (*stream)->SendFrame(FrameHeader{0, static_cast<uint16_t>(Op::Goodbye), 0, 0}, nullptr, 0);
  return 0;
}

}  // namespace rgpu::cli
