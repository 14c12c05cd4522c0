// One client connection: its object table, its request handlers and its outbound queue.
//
// Ids are chosen by the client (so that creating an object costs no round trip) and are
// only meaningful inside the session that chose them: every request is resolved against
// this session's table, with the object's type checked, and nothing else.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "proto/transport.h"
#include "proto/wire.h"
#include "server/backend/backend.h"

namespace rgpu::server {

class Server;

// Frames waiting to go to the client. Small control frames go before bulk chunks so that a
// large read does not delay the answers queued behind it.
class Outbox {
 public:
  explicit Outbox(proto::Stream* stream) : stream_(stream) {}
  void Push(proto::FrameHeader h, std::vector<uint8_t> body);
  // A chunk of bulk data `data[off, off+len)` preceded by `prefix` in one frame.
  void PushBulk(proto::FrameHeader h, std::vector<uint8_t> prefix, Bytes data, size_t off,
                size_t len);
  void Run();    // the writer thread's loop
  void Close();  // stops Run after what is queued has been sent or the stream failed

 private:
  struct Frame {
    proto::FrameHeader h;
    std::vector<uint8_t> body;
    Bytes bulk;
    size_t off = 0, len = 0;
  };
  proto::Stream* stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Frame> control_;  // GUARDED_BY(mu_)
  std::deque<Frame> bulk_;     // GUARDED_BY(mu_)
  bool closed_ = false;        // GUARDED_BY(mu_)
};

struct SessionStats {
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> bytes_in{0};
  std::atomic<uint64_t> bytes_out{0};
};

class Session {
 public:
  Session(Server* server, uint64_t id, std::unique_ptr<proto::Stream> stream, std::string peer);
  ~Session();
  // Serves the connection until it closes; then releases everything the client owned.
  void Serve();
  void Stop() { stream_->Shutdown(); }
  uint64_t id() const { return id_; }
  size_t LiveObjects() const { return live_objects_.load(); }

 private:
  struct Entry {
    proto::ObjType type = proto::ObjType::None;
    void* handle = nullptr;
    uint64_t parent = 0;       // context of a queue/mem/program/event, program of a kernel
    int device = -1;           // queues
    uint64_t size = 0;         // memory objects
    std::vector<int> devices;  // contexts
    std::vector<KernelArgValue> args;  // kernels: the arguments set so far
    std::vector<uint64_t> arg_mem_ids; // kernels: id behind each Mem argument (0 = none)
    bool is_user_event = false;
  };

  Status Dispatch(const proto::FrameHeader& h, proto::Reader& r);
  Status Hello(const proto::FrameHeader& h, proto::Reader& r);
  Status CreateContext(proto::Reader& r);
  Status CreateQueue(proto::Reader& r);
  Status CreateBuffer(proto::Reader& r);
  Status CreateSubBuffer(proto::Reader& r);
  Status CreateProgramWithSource(proto::Reader& r);
  Status CreateProgramWithBinary(const proto::FrameHeader& h, proto::Reader& r);
  Status BuildProgram(const proto::FrameHeader& h, proto::Reader& r);
  Status CompileProgram(const proto::FrameHeader& h, proto::Reader& r);
  Status LinkProgram(const proto::FrameHeader& h, proto::Reader& r);
  Status CreateKernel(proto::Reader& r);
  Status SetKernelArg(proto::Reader& r);
  Status CreateUserEvent(proto::Reader& r);
  Status SetUserEventStatus(proto::Reader& r);
  Status Release(proto::Reader& r);
  Status GetInfo(const proto::FrameHeader& h, proto::Reader& r);
  Status GetEventProfiling(const proto::FrameHeader& h, proto::Reader& r);
  Status PutData(proto::Reader& r);
  Status Enqueue(const proto::FrameHeader& h, proto::Reader& r);
  Status Flush(proto::Reader& r);
  Status Finish(const proto::FrameHeader& h, proto::Reader& r);
  Status WaitEvents(const proto::FrameHeader& h, proto::Reader& r);
  Status WatchEvent(proto::Reader& r);
  Status Stats(const proto::FrameHeader& h, proto::Reader& r);

  // Looks `id` up with the expected type; errors carry the OpenCL code for that type.
  Result<Entry*> Lookup(uint64_t id, proto::ObjType type);
  Status Insert(uint64_t id, Entry e);
  void ReleaseEntry(uint64_t id, Entry& e);
  void ReleaseAll();
  // Reads the trailing bulk blob of a request: staged PutData bytes plus the frame's tail.
  Result<Bytes> TakeBlob(proto::Reader& r);

  void Reply(const proto::FrameHeader& req, const Status& s, const std::vector<uint8_t>& fields = {});
  void Notify(proto::Op op, uint64_t tag, std::vector<uint8_t> body);
  // An asynchronous request failed: the client learns it through the command's event (if
  // it asked for one) and an AsyncError notification.
  void AsyncFailure(proto::Op op, uint64_t id, const Status& s);

  Server* server_;
  uint64_t id_;
  std::unique_ptr<proto::Stream> stream_;
  std::string peer_;
  std::shared_ptr<Outbox> outbox_;
  std::thread writer_;
  bool hello_done_ = false;
  std::string client_name_;

  // Touched only by the session's reader thread (Serve), hence no lock.
  std::unordered_map<uint64_t, Entry> objects_;
  std::vector<uint8_t> staging_;
  std::atomic<size_t> live_objects_{0};
  SessionStats stats_;
};

}  // namespace rgpu::server
