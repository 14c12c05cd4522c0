// Session's request handlers (server/session.cpp), driven in-process: a real Server and
// Session over a socketpair, the fake backend (tests/support/fake_backend.h) behind them,
// and requests written byte by byte as docs/protocol.md lays them out. Each case expects the
// exact OpenCL error the client would hand to the application: wrong handle types, objects
// used after their release, and the limits a session must keep.
#include <gtest/gtest.h>

#include <CL/cl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <thread>

#include "proto/transport.h"
#include "proto/messages.h"
#include "proto/wire.h"
#include "server/server.h"
#include "server/session.h"
#include "tests/support/fake_backend.h"

namespace rgpu::server {
namespace {

using proto::ObjType;
using proto::Op;

// An AsyncError notification: a request without a reply failed (docs/protocol.md).
struct AsyncError {
  Op op;
  uint64_t id;
  int32_t code;
};

// One client connection to a Session served on its own thread.
class Connection {
 public:
  explicit Connection(Server* server, std::string token = "") {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    fd_ = sv[1];
    timeval tv{5, 0};  // a reply that never comes fails the test instead of hanging it
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    serve_ = std::thread([server, fd = sv[0]] {
      static std::atomic<uint64_t> next_id{1};
      Session session(server, next_id++, std::make_unique<proto::Stream>(fd), "session_test");
      session.Serve();
    });
    proto::HelloRequest hello;
    hello.token = token;
    hello.client_name = "session_test";
    hello_code_ = Call(Op::Hello, hello.Encode());
  }
  ~Connection() {
    ::shutdown(fd_, SHUT_WR);
    while (Next()) {
    }
    serve_.join();
    ::close(fd_);
  }
  int32_t hello_code() const { return hello_code_; }

  void Send(Op op, const std::vector<uint8_t>& body, uint64_t tag = 0) {
    ASSERT_TRUE(TrySend(op, body, tag));
  }
  // False when the session has already closed its end: after a request that ends the session,
  // the next send races the session's close and may fail (EPIPE) or land unread.
  bool TrySend(Op op, const std::vector<uint8_t>& body, uint64_t tag, uint16_t flags = 0) {
    std::vector<uint8_t> frame(proto::kHeaderSize);
    proto::EncodeHeader({static_cast<uint32_t>(body.size()), static_cast<uint16_t>(op), flags, tag},
                        frame.data());
    frame.insert(frame.end(), body.begin(), body.end());
    return ::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(frame.size());
  }
  // Sends a request that has a reply and returns the reply's status code; AsyncErrors that
  // come first (from earlier requests: a session answers in order) are kept in errors().
  // A send the closed session refused still reads what the session wrote before it closed.
  int32_t Call(Op op, const std::vector<uint8_t>& body, uint16_t flags = 0) {
    const uint64_t tag = next_tag_++;
    TrySend(op, body, tag, flags);
    while (auto f = Next()) {
      if ((f->h.flags & proto::kFlagReply) && f->h.tag == tag) {
        proto::Reader r(f->body.data(), f->body.size());
        proto::ReplyStatus head;
        proto::ReplyStatus::Decode(r, &head);
        return head.code;
      }
    }
    return 1;  // no reply: the session ended (goodbye() says why)
  }
  // Everything before this point has been handled.
  void Sync() { Call(Op::GetInfo, InfoBody(proto::InfoFamily::Device, 0, CL_DEVICE_NAME)); }
  const std::vector<AsyncError>& errors() const { return errors_; }
  std::optional<AsyncError> ErrorFor(uint64_t id) {
    for (auto& e : errors_)
      if (e.id == id) return e;
    return std::nullopt;
  }
  const std::string& goodbye() const { return goodbye_; }
  bool closed() const { return closed_; }

  static std::vector<uint8_t> InfoBody(proto::InfoFamily family, uint64_t id, uint32_t param) {
    return proto::EncodeBody(proto::GetInfoRequest{family, id, param, /*device*/ 0, /*aux*/ 0});
  }

 private:
  struct Frame {
    proto::FrameHeader h;
    std::vector<uint8_t> body;
  };
  bool ReadAll(uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t k = ::recv(fd_, p, n, 0);
      if (k <= 0) return false;
      p += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }
  // The next frame; notifications are recorded on the way.
  std::optional<Frame> Next() {
    if (closed_) return std::nullopt;
    uint8_t head[proto::kHeaderSize];
    Frame f;
    if (!ReadAll(head, sizeof head)) {
      closed_ = true;
      return std::nullopt;
    }
    f.h = proto::DecodeHeader(head);
    f.body.resize(f.h.body_len);
    if (!ReadAll(f.body.data(), f.body.size())) {
      closed_ = true;
      return std::nullopt;
    }
    proto::Reader r(f.body.data(), f.body.size());
    if (f.h.op == static_cast<uint16_t>(Op::AsyncError)) {
      proto::AsyncErrorNotice note;
      proto::AsyncErrorNotice::Decode(r, &note);
      errors_.push_back({static_cast<Op>(note.op), note.object, note.code});
    } else if (f.h.op == static_cast<uint16_t>(Op::Goodbye)) {
      proto::GoodbyeNotice bye;
      proto::GoodbyeNotice::Decode(r, &bye);
      goodbye_ = bye.reason;
    }
    return f;
  }

  int fd_ = -1;
  std::thread serve_;
  uint64_t next_tag_ = 1;
  int32_t hello_code_ = 0;
  std::vector<AsyncError> errors_;
  std::string goodbye_;
  bool closed_ = false;
};

// Request bodies, as the ICD writes them.
std::vector<uint8_t> CreateContextBody(uint64_t id) {
  return proto::EncodeBody(proto::CreateContextRequest{id, {/*device*/ 0}});
}
std::vector<uint8_t> CreateQueueBody(uint64_t id, uint64_t ctx) {
  return proto::EncodeBody(proto::CreateQueueRequest{id, ctx, 0, 0});
}
std::vector<uint8_t> CreateBufferBody(uint64_t id, uint64_t ctx, uint64_t size) {
  return proto::EncodeBody(
      proto::CreateBufferRequest{id, ctx, CL_MEM_READ_WRITE, size, /*no initial data*/ 0});
}
std::vector<uint8_t> CreateUserEventBody(uint64_t id, uint64_t ctx) {
  return proto::EncodeBody(proto::CreateUserEventRequest{id, ctx});
}
std::vector<uint8_t> ReleaseBody(ObjType type, uint64_t id) {
  return proto::EncodeBody(proto::ReleaseRequest{type, id});
}
std::vector<uint8_t> QueueBody(uint64_t queue) {
  return proto::EncodeBody(proto::QueueRequest{queue});
}
std::vector<uint8_t> SubBufferBody(uint64_t id, uint64_t parent) {
  return proto::EncodeBody(
      proto::CreateSubBufferRequest{id, parent, CL_MEM_READ_WRITE, /*origin*/ 0, /*size*/ 256});
}
std::vector<uint8_t> WaitBody(std::vector<uint64_t> ids) {
  return proto::EncodeBody(proto::WaitEventsRequest{std::move(ids)});
}

class SessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { spdlog::set_level(spdlog::level::warn); }
  void StartServer(ServerOptions opt = {}) {
    auto backend = std::make_unique<fake::FakeBackend>();
    backend_ = backend.get();
    server_ = std::make_unique<Server>(opt, std::move(backend));
  }
  void TearDown() override {
    // The session released everything it made.
    if (server_) {
      EXPECT_EQ(server_->TotalObjects(), 0u);
      EXPECT_EQ(backend_->LiveObjects(), 0);
    }
    server_.reset();
  }
  fake::FakeBackend* backend_ = nullptr;
  std::unique_ptr<Server> server_;
};

TEST_F(SessionTest, HandleOfTheWrongTypeIsTheErrorOfTheTypeExpected) {
  StartServer();
  {
    Connection c(server_.get());
    ASSERT_EQ(c.hello_code(), CL_SUCCESS);
    c.Send(Op::CreateContext, CreateContextBody(1));
    c.Send(Op::CreateBuffer, CreateBufferBody(2, 1, 1024));
    c.Send(Op::CreateQueue, CreateQueueBody(3, /*a buffer, not a context*/ 2));
    c.Send(Op::CreateBuffer, CreateBufferBody(4, /*a buffer*/ 2, 1024));
    EXPECT_EQ(c.Call(Op::Finish, QueueBody(/*a context*/ 1)), CL_INVALID_COMMAND_QUEUE);
    EXPECT_EQ(c.Call(Op::WaitEvents, WaitBody({2})), CL_INVALID_EVENT);
    EXPECT_EQ(c.Call(Op::GetInfo,
                     Connection::InfoBody(proto::InfoFamily::Event, 1, CL_EVENT_COMMAND_TYPE)),
              CL_INVALID_EVENT);
    EXPECT_EQ(c.Call(Op::GetInfo,
                     Connection::InfoBody(proto::InfoFamily::Kernel, 2, CL_KERNEL_NUM_ARGS)),
              CL_INVALID_KERNEL);
    ASSERT_TRUE(c.ErrorFor(3));
    EXPECT_EQ(c.ErrorFor(3)->op, Op::CreateQueue);
    EXPECT_EQ(c.ErrorFor(3)->code, CL_INVALID_CONTEXT);
    ASSERT_TRUE(c.ErrorFor(4));
    EXPECT_EQ(c.ErrorFor(4)->code, CL_INVALID_CONTEXT);
    EXPECT_EQ(c.errors().size(), 2u);
    EXPECT_FALSE(c.closed()) << "an OpenCL error is not a reason to end the session";
  }
}

// Copies between an image and a buffer that would run past the buffer's end are refused by
// rgpud itself (CL_INVALID_VALUE), whatever the client checked; in range, they run.
TEST_F(SessionTest, ImageBufferCopiesStayInsideTheBuffer) {
  StartServer();
  Connection c(server_.get());
  ASSERT_EQ(c.hello_code(), CL_SUCCESS);
  c.Send(Op::CreateContext, CreateContextBody(1));
  c.Send(Op::CreateQueue, CreateQueueBody(2, 1));
  c.Send(Op::CreateBuffer, CreateBufferBody(3, 1, 64));  // 16 pixels of 4 bytes
  proto::CreateImageRequest image;
  image.mem = 4;
  image.context = 1;
  image.flags = CL_MEM_READ_WRITE;
  image.channel_order = CL_RGBA;
  image.channel_type = CL_UNORM_INT8;
  image.image_type = CL_MEM_OBJECT_IMAGE2D;
  image.width = 16;
  image.height = 16;
  ASSERT_EQ(c.Call(Op::CreateImage, proto::EncodeBody(image)), CL_SUCCESS);
  auto command = [](uint64_t event, const auto& m) {
    std::vector<uint8_t> body;
    proto::Writer w(&body);
    proto::CommandHeader{2, event, {}}.EncodeTo(w);
    m.EncodeTo(w);
    return body;
  };
  const proto::Triple whole{16, 16, 1}, row{16, 1, 1};
  c.Send(Op::CopyBufferToImage, command(10, proto::CopyBufferToImageRequest{3, 4, 0, {}, whole}));
  c.Send(Op::CopyImageToBuffer, command(11, proto::CopyImageToBufferRequest{4, 3, {}, whole, 0}));
  c.Send(Op::CopyImageToBuffer, command(12, proto::CopyImageToBufferRequest{4, 3, {}, row, 4}));
  c.Send(Op::CopyBufferToImage, command(13, proto::CopyBufferToImageRequest{3, 4, 0, {}, row}));
  c.Send(Op::CopyImageToBuffer, command(14, proto::CopyImageToBufferRequest{4, 3, {}, row, 0}));
  c.Sync();
  for (uint64_t bad : {10, 11, 12}) {
    ASSERT_TRUE(c.ErrorFor(bad)) << "command " << bad;
    EXPECT_EQ(c.ErrorFor(bad)->code, CL_INVALID_VALUE) << "command " << bad;
  }
  EXPECT_FALSE(c.ErrorFor(13)) << "a row of 64 bytes fits the 64-byte buffer";
  EXPECT_FALSE(c.ErrorFor(14));
  EXPECT_FALSE(c.closed());
}

// A small read the client blocks on is read by the session's thread with the driver's
// blocking call; the driver makes it an event only when the client asked for one (making
// and freeing one costs NVIDIA's driver several microseconds, and freeing a batch of them
// stalled every 32nd request by 50-136 us on an H100).
TEST_F(SessionTest, BlockingReadsMakeNoDeviceEventUnlessTheClientAsksForOne) {
  StartServer();
  Connection c(server_.get());
  ASSERT_EQ(c.hello_code(), CL_SUCCESS);
  c.Send(Op::CreateContext, CreateContextBody(1));
  c.Send(Op::CreateQueue, CreateQueueBody(2, 1));
  c.Send(Op::CreateBuffer, CreateBufferBody(3, 1, 64));
  auto read = [](uint64_t event) {
    std::vector<uint8_t> body;
    proto::Writer w(&body);
    proto::CommandHeader{2, event, {}}.EncodeTo(w);
    proto::ReadBufferRequest{3, 0, 4}.EncodeTo(w);
    return body;
  };
  // Blocking, no event: no device event.
  EXPECT_EQ(c.Call(Op::ReadBuffer, read(0), proto::kFlagWaiting), CL_SUCCESS);
  EXPECT_EQ(backend_->blocking_reads_without_event(), 1);
  EXPECT_EQ(c.Call(Op::ReadBuffer, read(0), proto::kFlagWaiting), CL_SUCCESS);
  EXPECT_EQ(backend_->blocking_reads_without_event(), 2);
  // Blocking with an event: the client's event is the device's, and answers.
  EXPECT_EQ(c.Call(Op::ReadBuffer, read(20), proto::kFlagWaiting), CL_SUCCESS);
  EXPECT_EQ(backend_->blocking_reads_without_event(), 2);
  EXPECT_EQ(c.Call(Op::GetInfo, Connection::InfoBody(proto::InfoFamily::Event, 20,
                                                     CL_EVENT_COMMAND_EXECUTION_STATUS)),
            CL_SUCCESS);
  // Not blocking: answered when the device is done, with an event of rgpud's own.
  EXPECT_EQ(c.Call(Op::ReadBuffer, read(0)), CL_SUCCESS);
  EXPECT_EQ(backend_->blocking_reads_without_event(), 2);
  EXPECT_EQ(c.Call(Op::Finish, QueueBody(2)), CL_SUCCESS);
  c.Send(Op::Release, ReleaseBody(ObjType::Event, 20));
  c.Send(Op::Release, ReleaseBody(ObjType::Mem, 3));
  c.Send(Op::Release, ReleaseBody(ObjType::Queue, 2));
  c.Send(Op::Release, ReleaseBody(ObjType::Context, 1));
  c.Sync();
  EXPECT_TRUE(c.errors().empty());
  EXPECT_FALSE(c.closed());
}

TEST_F(SessionTest, ReleasedObjectsAreGone) {
  StartServer();
  {
    Connection c(server_.get());
    c.Send(Op::CreateContext, CreateContextBody(1));
    c.Send(Op::CreateQueue, CreateQueueBody(2, 1));
    c.Send(Op::CreateBuffer, CreateBufferBody(3, 1, 4096));
    EXPECT_EQ(c.Call(Op::Finish, QueueBody(2)), CL_SUCCESS);
    c.Send(Op::CreateUserEvent, CreateUserEventBody(5, 1));
    EXPECT_EQ(c.Call(Op::GetInfo,
                     Connection::InfoBody(proto::InfoFamily::Event, 5, CL_EVENT_COMMAND_TYPE)),
              CL_SUCCESS);
    c.Send(Op::Release, ReleaseBody(ObjType::Queue, 2));
    c.Send(Op::Release, ReleaseBody(ObjType::Mem, 3));
    c.Send(Op::Release, ReleaseBody(ObjType::Event, 5));
    EXPECT_EQ(c.Call(Op::Finish, QueueBody(2)), CL_INVALID_COMMAND_QUEUE);
    EXPECT_EQ(c.Call(Op::GetInfo,
                     Connection::InfoBody(proto::InfoFamily::Event, 5, CL_EVENT_COMMAND_TYPE)),
              CL_INVALID_EVENT);
    EXPECT_EQ(c.Call(Op::WaitEvents, WaitBody({5})), CL_INVALID_EVENT);
    c.Send(Op::CreateSubBuffer, SubBufferBody(6, /*released*/ 3));
    c.Send(Op::Release, ReleaseBody(ObjType::Context, 1));
    c.Send(Op::CreateBuffer, CreateBufferBody(4, 1, 4096));
    c.Sync();
    ASSERT_TRUE(c.ErrorFor(6));
    EXPECT_EQ(c.ErrorFor(6)->code, CL_INVALID_MEM_OBJECT);
    ASSERT_TRUE(c.ErrorFor(4));
    EXPECT_EQ(c.ErrorFor(4)->code, CL_INVALID_CONTEXT);
    // Releasing twice is not an error the session can see: the client was told already.
    c.Send(Op::Release, ReleaseBody(ObjType::Mem, 3));
    c.Sync();
    EXPECT_FALSE(c.closed());
    EXPECT_EQ(server_->TotalObjects(), 0u);
  }
  EXPECT_EQ(backend_->LiveObjects(), 0);
}

TEST_F(SessionTest, BufferSizesAndTheTenantsMemoryQuota) {
  ServerOptions opt;
  auto t = std::make_shared<Tenant>();
  t->id = "small";
  t->mem_quota_bytes = 1 << 20;
  t->token_hash = HashToken("t0ken");
  opt.tenants.push_back(t);
  StartServer(opt);
  {
    Connection wrong(server_.get(), "not the token");
    EXPECT_NE(wrong.hello_code(), CL_SUCCESS);
  }
  Connection c(server_.get(), "t0ken");
  ASSERT_EQ(c.hello_code(), CL_SUCCESS);
  c.Send(Op::CreateContext, CreateContextBody(1));
  c.Send(Op::CreateBuffer, CreateBufferBody(2, 1, 0));                  // size 0
  c.Send(Op::CreateBuffer, CreateBufferBody(3, 1, uint64_t{1} << 40));  // over the quota too
  c.Send(Op::CreateBuffer, CreateBufferBody(4, 1, 512 << 10));
  c.Send(Op::CreateBuffer, CreateBufferBody(5, 1, 768 << 10));  // 1.25 MiB in all
  c.Send(Op::Release, ReleaseBody(ObjType::Mem, 4));
  c.Send(Op::CreateBuffer, CreateBufferBody(6, 1, 768 << 10));  // fits now
  c.Sync();
  ASSERT_TRUE(c.ErrorFor(2));
  EXPECT_EQ(c.ErrorFor(2)->code, CL_INVALID_BUFFER_SIZE);
  ASSERT_TRUE(c.ErrorFor(3));
  EXPECT_EQ(c.ErrorFor(3)->code, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_FALSE(c.ErrorFor(4));
  ASSERT_TRUE(c.ErrorFor(5));
  EXPECT_EQ(c.ErrorFor(5)->code, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_FALSE(c.ErrorFor(6));
  EXPECT_EQ(server_->Usage(t.get()).mem_bytes.load(), uint64_t{768} << 10);
}

TEST_F(SessionTest, DeviceOutOfRangeIsInvalidDevice) {
  StartServer();
  Connection c(server_.get());
  EXPECT_EQ(c.Call(Op::GetInfo, Connection::InfoBody(proto::InfoFamily::Device, 7, CL_DEVICE_NAME)),
            CL_INVALID_DEVICE);
  EXPECT_EQ(c.Call(Op::GetInfo, Connection::InfoBody(proto::InfoFamily::Device, 0, CL_DEVICE_NAME)),
            CL_SUCCESS);
}

// Limits a client cannot talk its way past: each ends that session (with a Goodbye saying
// why), and only that one.
TEST_F(SessionTest, ObjectLimitEndsTheSessionAndOnlyIt) {
  ServerOptions opt;
  opt.max_objects_per_session = 3;
  StartServer(opt);
  Connection bystander(server_.get());
  bystander.Send(Op::CreateContext, CreateContextBody(1));
  {
    Connection c(server_.get());
    for (uint64_t id = 1; id <= 4; ++id) c.Send(Op::CreateContext, CreateContextBody(id));
    c.Sync();
    EXPECT_TRUE(c.closed());
    EXPECT_NE(c.goodbye().find("too many objects"), std::string::npos) << c.goodbye();
  }
  EXPECT_EQ(bystander.Call(Op::GetInfo,
                           Connection::InfoBody(proto::InfoFamily::Device, 0, CL_DEVICE_NAME)),
            CL_SUCCESS);
  EXPECT_FALSE(bystander.closed());
  bystander.Send(Op::Release, ReleaseBody(ObjType::Context, 1));
  bystander.Sync();
}

TEST_F(SessionTest, MalformedRequestsEndTheSession) {
  StartServer();
  {
    Connection c(server_.get());
    c.Send(Op::CreateContext, CreateContextBody(0));  // id 0 is reserved
    c.Sync();
    EXPECT_TRUE(c.closed());
    EXPECT_NE(c.goodbye().find("id 0"), std::string::npos) << c.goodbye();
  }
  {
    Connection c(server_.get());
    std::vector<uint8_t> body = QueueBody(1);
    body.push_back(0);  // a trailing byte
    c.Send(Op::Flush, body);
    c.Sync();
    EXPECT_TRUE(c.closed());
  }
  {
    Connection c(server_.get());
    std::vector<uint8_t> too_many;
    proto::Writer w(&too_many);
    w.u32(proto::kMaxWaitList + 1);
    for (uint32_t i = 0; i <= proto::kMaxWaitList; ++i) w.u64(1);
    c.Call(Op::WaitEvents, too_many);
    EXPECT_TRUE(c.closed());
  }
}

}  // namespace
}  // namespace rgpu::server
