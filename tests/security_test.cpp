// rgpud under attack, spoken to in raw protocol frames (proto/ directly, no ICD): wrong
// tokens, guessed and replayed ids, wrong object types, over-quota buffers, oversized
// frames and floods. Run by security_test.sh, which starts rgpud with a config of three
// tenants (see there). The quota check through the real ICD is at the end.
#include <CL/cl.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <string>
#include <vector>

#include "proto/transport.h"
#include "proto/messages.h"
#include "proto/wire.h"

using namespace rgpu;
using proto::FrameHeader;
using proto::Op;
using proto::Reader;
using proto::Writer;

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct Frame {
  FrameHeader h;
  std::vector<uint8_t> body;
};

// A hand-driven session. Notifications that arrive while waiting for a reply are kept in
// `notes`, in order.
class RawClient {
 public:
  Status Open(const std::string& token) {
    auto addr = proto::ParseAddress(Env("RGPU_SERVER"));
    if (!addr.ok()) return addr.status();
    auto s = proto::Connect(*addr, std::chrono::seconds(5));
    if (!s.ok()) return s.status();
    stream_ = std::move(s.value());
    proto::HelloRequest hello;
    hello.token = token;
    hello.client_name = "security_test";
    Frame rep = Call(Op::Hello, hello.Encode());
    Reader r(rep.body.data(), rep.body.size());
    proto::ReplyStatus head;
    proto::ReplyStatus::Decode(r, &head);
    if (rep.h.op != static_cast<uint16_t>(Op::Hello) || head.code != 0)
      return Status::Error(head.code ? head.code : -1,
                           head.message.empty() ? "no Hello reply" : head.message);
    proto::HelloReply reply;  // asked for no features: nothing follows the quota
    if (!proto::HelloReply::Decode(r, &reply) || !r.done())
      return Status::Error(-1, "malformed Hello reply");
    return Status::Ok();
  }
  void Send(Op op, const std::vector<uint8_t>& body, uint64_t tag = 0) {
    stream_->SendFrame(FrameHeader{static_cast<uint32_t>(body.size()), static_cast<uint16_t>(op), 0, tag},
                       body.data(), body.size());
  }
  // Sends and waits for the reply with this tag; an empty frame when the server hung up.
  Frame Call(Op op, const std::vector<uint8_t>& body) {
    uint64_t tag = next_tag_++;
    Send(op, body, tag);
    for (;;) {
      Frame f;
      if (!stream_->RecvFrame(&f.h, &f.body, 64u << 20).ok()) return {};
      if ((f.h.flags & proto::kFlagReply) && f.h.tag == tag) return f;
      notes.push_back(std::move(f));
    }
  }
  // The OpenCL code of a reply.
  static int32_t Code(const Frame& f) {
    Reader r(f.body.data(), f.body.size());
    proto::ReplyStatus head;
    proto::ReplyStatus::Decode(r, &head);
    return f.body.empty() ? 1 : head.code;
  }
  // Everything before this point has been handled once this returns (requests are served
  // in order, and notifications go out before the reply).
  bool Sync() { return !Call(Op::Stats, proto::EncodeBody(proto::StatsRequest{})).body.empty(); }
  // The codes of the AsyncError notifications received so far; clears them.
  std::vector<int32_t> TakeAsyncErrors() {
    std::vector<int32_t> codes;
    for (auto& f : notes)
      if (f.h.op == static_cast<uint16_t>(Op::AsyncError)) {
        Reader r(f.body.data(), f.body.size());
        proto::AsyncErrorNotice note;
        proto::AsyncErrorNotice::Decode(r, &note);
        codes.push_back(note.code);
      }
    notes.clear();
    return codes;
  }
  // The server's object count for this session (Stats).
  uint64_t Objects() {
    Frame f = Call(Op::Stats, proto::EncodeBody(proto::StatsRequest{}));
    Reader r(f.body.data(), f.body.size());
    proto::ReplyStatus head;
    proto::ReplyStatus::Decode(r, &head);
    proto::StatsReply stats;
    EXPECT_TRUE(proto::StatsReply::Decode(r, &stats) && r.done()) << "malformed Stats reply";
    return stats.objects;
  }

  // --- requests ---
  void CreateContext(uint64_t id) {
    Send(Op::CreateContext, proto::EncodeBody(proto::CreateContextRequest{id, {0}}));
  }
  void CreateQueue(uint64_t id, uint64_t ctx) {
    Send(Op::CreateQueue, proto::EncodeBody(proto::CreateQueueRequest{id, ctx, 0, 0}));
  }
  void CreateBuffer(uint64_t id, uint64_t ctx, uint64_t size, const std::vector<uint8_t>& init = {}) {
    std::vector<uint8_t> b;
    Writer w(&b);
    proto::CreateBufferRequest{id, ctx, CL_MEM_READ_WRITE, size, init.size()}.EncodeTo(w);
    w.raw(init.data(), init.size());
    Send(Op::CreateBuffer, b);
  }
  static void CommandHeader(Writer& w, uint64_t queue) {
    proto::CommandHeader{queue, /*no event*/ 0, /*no waits*/ {}}.EncodeTo(w);
  }
  void WriteBuffer(uint64_t queue, uint64_t mem, const std::vector<uint8_t>& data) {
    std::vector<uint8_t> b;
    b.reserve(64 + data.size());
    Writer w(&b);
    CommandHeader(w, queue);
    proto::WriteBufferRequest{mem, 0, data.size()}.EncodeTo(w);
    w.raw(data.data(), data.size());
    Send(Op::WriteBuffer, b);
  }
  // Reads `size` bytes; returns the data, or the error code in `code`.
  std::vector<uint8_t> ReadBuffer(uint64_t queue, uint64_t mem, uint64_t size, int32_t* code) {
    std::vector<uint8_t> b;
    Writer w(&b);
    CommandHeader(w, queue);
    proto::ReadBufferRequest{mem, 0, size}.EncodeTo(w);
    Frame rep = Call(Op::ReadBuffer, b);
    *code = Code(rep);
    std::vector<uint8_t> data(size);
    for (auto& f : notes)
      if (f.h.op == static_cast<uint16_t>(Op::ReadData) && f.h.tag == rep.h.tag) {
        Reader r(f.body.data(), f.body.size());
        proto::ReadDataNotice note;
        proto::ReadDataNotice::Decode(r, &note);
        const uint64_t off = note.offset;
        size_t len = 0;
        const uint8_t* p = r.rest(&len);
        if (off + len <= size) std::copy(p, p + len, data.begin() + off);
      }
    std::erase_if(notes, [](const Frame& f) { return f.h.op == static_cast<uint16_t>(Op::ReadData); });
    return data;
  }
  void Release(proto::ObjType type, uint64_t id) {
    Send(Op::Release, proto::EncodeBody(proto::ReleaseRequest{type, id}));
  }

  proto::Stream& stream() { return *stream_; }
  std::vector<Frame> notes;

 private:
  std::unique_ptr<proto::Stream> stream_;
  uint64_t next_tag_ = 1;
};

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

// A victim with a context (1), a queue (2) and a 4 KiB buffer (3) holding Pattern(4096, 42).
void MakeVictim(RawClient& v, const char* token_env = "ALICE_TOKEN") {
  ASSERT_TRUE(v.Open(Env(token_env)).ok());
  v.CreateContext(1);
  v.CreateQueue(2, 1);
  v.CreateBuffer(3, 1, 4096, Pattern(4096, 42));
  ASSERT_TRUE(v.Sync());
  ASSERT_TRUE(v.TakeAsyncErrors().empty());
}

void ExpectVictimIntact(RawClient& v) {
  int32_t code = 1;
  auto data = v.ReadBuffer(2, 3, 4096, &code);
  EXPECT_EQ(code, CL_SUCCESS);
  EXPECT_EQ(data, Pattern(4096, 42));
  EXPECT_EQ(v.Objects(), 3u);
}

}  // namespace

TEST(Auth, WrongOrMissingTokenIsRefusedWithAReason) {
  RawClient c;
  Status s = c.Open("not-a-token");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("unknown token"), std::string::npos) << s.message();
  RawClient d;
  s = d.Open("");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("needs a token"), std::string::npos) << s.message();
}

TEST(Auth, FirstFrameMustBeHello) {
  auto addr = proto::ParseAddress(Env("RGPU_SERVER"));
  auto st = proto::Connect(*addr, std::chrono::seconds(5));
  ASSERT_TRUE(st.ok());
  const auto b = proto::EncodeBody(proto::CreateContextRequest{1, {0}});
  (*st)->SendFrame(FrameHeader{static_cast<uint32_t>(b.size()), static_cast<uint16_t>(Op::CreateContext), 0, 0},
                   b.data(), b.size());
  FrameHeader h;
  std::vector<uint8_t> body;
  ASSERT_TRUE((*st)->RecvFrame(&h, &body).ok());
  EXPECT_EQ(h.op, static_cast<uint16_t>(Op::Goodbye));  // the reason, then the end
  EXPECT_FALSE((*st)->RecvFrame(&h, &body).ok());
}

TEST(Auth, MaxSessionsPerTenant) {
  // carol may have two sessions.
  RawClient a, b, c;
  ASSERT_TRUE(a.Open(Env("CAROL_TOKEN")).ok());
  ASSERT_TRUE(b.Open(Env("CAROL_TOKEN")).ok());
  Status s = c.Open(Env("CAROL_TOKEN"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("maximum of 2 sessions"), std::string::npos) << s.message();
}

TEST(Isolation, GuessedReplayedAndMistypedIdsFailAndTheVictimIsIntact) {
  RawClient victim;
  MakeVictim(victim);
  for (const char* token_env : {"ALICE_TOKEN", "BOB_TOKEN"}) {  // same tenant, other tenant
    RawClient attacker;
    ASSERT_TRUE(attacker.Open(Env(token_env)).ok());
    // Replay the victim's ids and guess more: read, overwrite and free them.
    for (uint64_t id = 1; id <= 64; ++id) {
      int32_t code = 0;
      attacker.ReadBuffer(2, id, 16, &code);
      EXPECT_NE(code, CL_SUCCESS) << "read of guessed buffer " << id;
      attacker.WriteBuffer(2, id, Pattern(64, 0));
      for (auto t : {proto::ObjType::Context, proto::ObjType::Queue, proto::ObjType::Mem})
        attacker.Release(t, id);
    }
    // Its own objects, named with the wrong types.
    attacker.CreateContext(7);
    attacker.CreateQueue(8, 7);
    attacker.CreateBuffer(9, 7, 4096);
    ASSERT_TRUE(attacker.Sync());
    attacker.TakeAsyncErrors();
    attacker.WriteBuffer(9, 8, Pattern(64, 1));   // queue and buffer swapped
    attacker.CreateQueue(10, 9);                  // a buffer as context
    attacker.CreateBuffer(11, 8, 64);             // a queue as context
    ASSERT_TRUE(attacker.Sync());
    auto errs = attacker.TakeAsyncErrors();
    ASSERT_EQ(errs.size(), 3u);
    EXPECT_EQ(errs[0], CL_INVALID_COMMAND_QUEUE);
    EXPECT_EQ(errs[1], CL_INVALID_CONTEXT);
    EXPECT_EQ(errs[2], CL_INVALID_CONTEXT);
    EXPECT_EQ(attacker.Objects(), 3u);
    ExpectVictimIntact(victim);
  }
}

// dave and erin share a context group: their sessions' contexts are one device context, but
// ids stay per session, and a context outlives the session that created it first.
TEST(ContextGroup, SharedDeviceContextKeepsObjectsPerSession) {
  auto erin = std::make_unique<RawClient>();
  {
    RawClient dave;
    MakeVictim(dave, "DAVE_TOKEN");
    ASSERT_TRUE(erin->Open(Env("ERIN_TOKEN")).ok());
    for (uint64_t id = 1; id <= 16; ++id) {
      int32_t code = 0;
      erin->ReadBuffer(2, id, 16, &code);
      EXPECT_NE(code, CL_SUCCESS) << "read of dave's buffer " << id;
      erin->WriteBuffer(2, id, Pattern(64, 0));
      for (auto t : {proto::ObjType::Context, proto::ObjType::Queue, proto::ObjType::Mem}) erin->Release(t, id);
    }
    ASSERT_TRUE(erin->Sync());
    erin->TakeAsyncErrors();
    EXPECT_EQ(erin->Objects(), 0u);
    ExpectVictimIntact(dave);
    erin->CreateContext(1);
    erin->CreateQueue(2, 1);
    erin->CreateBuffer(3, 1, 4096, Pattern(4096, 7));
    ASSERT_TRUE(erin->Sync());
    ASSERT_TRUE(erin->TakeAsyncErrors().empty());
    ExpectVictimIntact(dave);  // same ids, same device context, still dave's own data
  }
  // dave has gone and released its reference to the shared context; erin's objects live on.
  int32_t code = 1;
  EXPECT_EQ(erin->ReadBuffer(2, 3, 4096, &code), Pattern(4096, 7));
  EXPECT_EQ(code, CL_SUCCESS);
  RawClient dave2;  // and a new session of the group gets the context again
  MakeVictim(dave2, "DAVE_TOKEN");
  ExpectVictimIntact(dave2);
}

TEST(Quota, BufferOverQuotaFailsAndTheSessionGoesOn) {
  // bob's quota is 1 MiB.
  RawClient c;
  ASSERT_TRUE(c.Open(Env("BOB_TOKEN")).ok());
  c.CreateContext(1);
  c.CreateQueue(2, 1);
  c.CreateBuffer(3, 1, 768 << 10);
  c.CreateBuffer(4, 1, 512 << 10);  // over: 1.25 MiB in all
  ASSERT_TRUE(c.Sync());
  auto errs = c.TakeAsyncErrors();
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0], CL_MEM_OBJECT_ALLOCATION_FAILURE);
  // Freeing makes room again.
  c.Release(proto::ObjType::Mem, 3);
  c.CreateBuffer(5, 1, 1 << 20, Pattern(1 << 20, 3));
  int32_t code = 1;
  auto data = c.ReadBuffer(2, 5, 1 << 20, &code);
  EXPECT_EQ(code, CL_SUCCESS);
  EXPECT_EQ(data, Pattern(1 << 20, 3));
  EXPECT_TRUE(c.TakeAsyncErrors().empty());
}

TEST(Limits, OversizedFrameEndsOnlyThatSession) {
  RawClient victim;
  MakeVictim(victim);
  RawClient c;
  ASSERT_TRUE(c.Open(Env("BOB_TOKEN")).ok());
  // A header announcing 1 GiB: refused before anything is allocated.
  uint8_t hdr[proto::kHeaderSize];
  proto::EncodeHeader(FrameHeader{1u << 30, static_cast<uint16_t>(Op::PutData), 0, 0}, hdr);
  iovec iov{hdr, sizeof(hdr)};
  ASSERT_TRUE(c.stream().SendAll(&iov, 1).ok());
  FrameHeader h;
  std::vector<uint8_t> body;
  bool closed = false;
  for (int i = 0; i < 10 && !closed; ++i) closed = !c.stream().RecvFrame(&h, &body).ok();
  EXPECT_TRUE(closed);
  ExpectVictimIntact(victim);
}

TEST(Limits, ObjectsPerSession) {
  // The config allows 2000 objects per session; the 2001st ends the session.
  RawClient c;
  ASSERT_TRUE(c.Open(Env("BOB_TOKEN")).ok());
  c.CreateContext(1);
  for (uint64_t id = 2; id <= 2001; ++id) {
    c.Send(Op::CreateUserEvent, proto::EncodeBody(proto::CreateUserEventRequest{id, 1}));
  }
  EXPECT_FALSE(c.Sync());  // the server hung up
  bool told = false;
  for (auto& f : c.notes) told |= f.h.op == static_cast<uint16_t>(Op::Goodbye);
  EXPECT_TRUE(told);
}

namespace {
long RssKiB(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}
}  // namespace

TEST(Limits, AFloodOfReadsThatIsNeverReadBackIsSlowedNotBuffered) {
  // 512 reads of 1 MiB each (512 MiB of answers) from a client that never reads its
  // socket: the server stops reading its requests once max_outbox (16 MiB) is queued.
  const std::string pid = Env("RGPUD_PID");
  RawClient victim;
  MakeVictim(victim);
  RawClient c;
  ASSERT_TRUE(c.Open(Env("BOB_TOKEN")).ok());
  c.CreateContext(1);
  c.CreateQueue(2, 1);
  c.CreateBuffer(3, 1, 1 << 20);
  ASSERT_TRUE(c.Sync());
  long before = RssKiB(pid);
  int fd = c.stream().fd();
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);  // the flood stops when the server stops reading
  int sent = 0;
  for (int i = 0; i < 512; ++i) {
    std::vector<uint8_t> b;
    Writer w(&b);
    RawClient::CommandHeader(w, 2);
    proto::ReadBufferRequest{3, 0, 1 << 20}.EncodeTo(w);
    uint8_t hdr[proto::kHeaderSize];
    proto::EncodeHeader(FrameHeader{static_cast<uint32_t>(b.size()), static_cast<uint16_t>(Op::ReadBuffer), 0,
                                    static_cast<uint64_t>(100 + i)},
                        hdr);
    std::vector<uint8_t> frame(hdr, hdr + sizeof(hdr));
    frame.insert(frame.end(), b.begin(), b.end());
    if (::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(frame.size())) break;
    ++sent;
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  long after = RssKiB(pid);
  std::printf("flood: %d reads sent, server RSS %ld -> %ld KiB\n", sent, before, after);
  EXPECT_LT(after - before, 160 * 1024) << "server memory grew with the flood";
  ExpectVictimIntact(victim);  // other sessions are served meanwhile
}

TEST(Quota, ClCreateBufferOverQuotaFailsAtOnce) {
  // Through the real ICD as tenant bob (quota 1 MiB).
  setenv("RGPU_TOKEN", Env("BOB_TOKEN").c_str(), 1);
  cl_platform_id platforms[8];
  cl_uint n = 0;
  ASSERT_EQ(clGetPlatformIDs(8, platforms, &n), CL_SUCCESS);
  cl_platform_id rgpu = nullptr;
  for (cl_uint i = 0; i < n; ++i) {
    char name[64] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name), name, nullptr);
    if (std::string(name) == "rgpu") rgpu = platforms[i];
  }
  ASSERT_NE(rgpu, nullptr);
  cl_device_id dev;
  ASSERT_EQ(clGetDeviceIDs(rgpu, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr), CL_SUCCESS);
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 768 << 10, nullptr, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 512 << 10, nullptr, &err);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(b, nullptr);
  clReleaseMemObject(a);
  b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, nullptr, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  std::vector<uint8_t> in = Pattern(1 << 20, 9), out(1 << 20);
  EXPECT_EQ(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, in.size(), in.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(clEnqueueReadBuffer(q, b, CL_TRUE, 0, out.size(), out.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(in, out);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}
