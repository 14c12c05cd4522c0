// rgpud's top level: the listener, the registry of live sessions, and the services that
// sessions share (the backend, the kernel-launch path, counters).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "proto/liveness.h"
#include "proto/tls.h"
#include "proto/transport.h"
#include "server/backend/backend.h"
#include "server/buffer_pool.h"
#include "server/gate.h"
#include "server/heap_trimmer.h"
#include "server/scheduler/scheduler.h"
#include "server/metrics.h"
#include "server/pool.h"
#include "server/tenant.h"

namespace rgpu::server {

class Session;

struct ServerOptions {
  std::string listen = "127.0.0.1:7420";
  std::string platform;  // substring of the OpenCL platform name; empty = best found
  std::string name = "rgpud";
  SchedulerOptions sched;
  // fair's best-effort turns (SchedulerOptions::be_turns) per device: -1 on for GPU devices
  // and off for CPU devices, 0 off, 1 on. Off on CPUs: with turns, PoCL 3.1's CPU device
  // aborted rgpud on an assertion in its kernel cache (pocl_release_dlhandle_cache) in 3 of 7
  // runs of tests/stress_vanishing_clients.sh (0 of 8 later), against 0 of 4 without: that
  // cache gives a reference back to the wrong entry when one kernel runs at two grid sizes at
  // once (docs/scheduling.md, "Turns are on for GPU devices only").
  int be_turns = -1;
  bool insecure = false;
  uint32_t max_frame = proto::kMaxBody;
  size_t max_objects_per_session = 1 << 20;
  size_t max_staging_bytes = size_t{2} << 30;  // bytes one session may have in flight
  // The largest shared bulk region (proto/shared_region.h) a client on the Unix socket may
  // attach; 0 turns shared memory off. Host memory the client allocates, mapped by rgpud.
  uint64_t max_shared_bytes = (uint64_t{64} << 20) + 4096;
  // Host memory a session registers with its device context (pinned) to land the pieces of
  // reads its client waits for over the socket (server/pinned_staging.h); 0 turns it off.
  // At most kPinnedSessions sessions hold it at once; the others stage in ordinary memory.
  size_t pinned_staging_bytes = size_t{16} << 20;
  static constexpr int kPinnedSessions = 32;
  // Backpressure: a session's socket is not read while it has more commands than this
  // unfinished on the device, or more than max_outbox_bytes of answers not yet sent.
  size_t max_commands_in_flight = 1 << 16;
  size_t max_outbox_bytes = size_t{256} << 20;
  // SIGTERM: how long running commands may take to finish before sessions are cut.
  std::chrono::milliseconds stop_grace{10000};
  // Before authentication: Hello deadline, connection limits, failed-authentication
  // throttling (server/gate.h).
  GateOptions gate;
  // A client that sent nothing for this long is dead: its session ends as if it had closed.
  // Clients that speak Heartbeat (proto/wire.h) send one after a quarter of it without
  // traffic, as rgpud does to them; TCP keepalive is tuned to the same bound for all.
  std::chrono::milliseconds peer_timeout{30000};
  std::chrono::milliseconds heartbeat_interval() const { return peer_timeout / 4; }
  // After each request, a session's reader polls its socket (busy) for this long before it
  // sleeps in recv(): waking a sleeping thread costs far more than a round trip at the tail
  // on idle or virtual CPUs. At most max_pollers sessions poll at once, of which at most
  // half best-effort ones, so best-effort sessions never take the slots latency-critical ones
  // need. Defaults (main.cpp): with 8 CPUs or more 10 s for every tenant (requests may come
  // seconds apart); below, 30 us, where a polling thread would take a core the device's own
  // threads need.
  std::chrono::microseconds poll{0};
  std::chrono::microseconds lc_poll{0};
  // At least this long for sessions over a Unix socket (their frames go through control
  // rings, whose poll takes no system call). Below 8 CPUs 150 us, else 0 (no floor). On 2
  // vCPUs with PoCL, launch+finish went from 3.00x to 2.12x native and a 4-byte read from
  // 2.44x to 2.11x against 30 us (medians of 8 runs); over TCP, 150 us slowed a read (2.48x
  // to 3.09x), so TCP keeps --poll-us. docs/performance.md, "Small machines".
  std::chrono::microseconds local_poll{0};
  // A session's blocking waits (clFinish, clWaitForEvents, small blocking reads) are waited
  // for by its reader thread in the driver, which answers soonest; a wait that lasts hands
  // the session's other frames to its aside thread (serve_aside, Session::Park). Off, every
  // wait goes to the completion watcher and the reader serves the next frames, at the cost
  // of a hand-off per wait (2 vCPUs, PoCL: unix launch+finish 64 -> 104 us at p50).
  bool inline_waits = true;
  // This long into an inline wait, the session's aside thread serves its other frames until
  // the wait ends (Session::Park; 0: never, and a kernel that ends only when another thread
  // of the client writes a flag runs until it gives up: 19 s against 0.5 s natively, H200,
  // session 48). A frame sent during a long wait waits at most about this long (20 ms more
  // after a quiet spell of the server's, whose park watcher then ticks slower).
  std::chrono::microseconds serve_aside{1000};
  int max_pollers = 0;
  // A session that receives a burst of launches hands their driver enqueues to a thread of
  // its own (server/scheduler/launch_pipe.h), which spins 200 us after its last one. Default
  // (main.cpp): on with 8 CPUs or more.
  bool launch_thread = false;
  // Launches through that thread whose event only the application reads go on a twin of its
  // in-order queue without profiling, where NVIDIA's enqueue with an event costs two thirds
  // (server/scheduler/launch_pipe.h, "Twins"). Only for queues the application made without
  // properties.
  bool twin_queues = true;

  // From the config file (server/config.h). No tenants: one anonymous tenant, no token.
  std::vector<std::shared_ptr<const Tenant>> tenants;
  std::string tls_cert, tls_key;  // PEM files; both set = TCP connections speak TLS
  std::string tls_client_ca;      // set = clients must present a certificate signed by it
  std::string metrics;            // HOST:PORT of the Prometheus endpoint; empty = none
  PoolOptions pool;               // registration in an etcd pool (server/pool.h); url empty = none
};



class Server {
 public:
  Server(ServerOptions options, std::unique_ptr<Backend> backend);
  ~Server();

  // Binds the listening socket. Returns the bound address (port 0 picks a free port).
  Status Bind();
  // Accepts and serves clients until Stop(). Then refuses new clients, lets running
  // commands finish (at most options().stop_grace), says Goodbye to every client and
  // returns once every session has ended, or LingeringSessions() says how many did not.
  void Run();
  size_t LingeringSessions();
  // Safe from a signal-watching thread.
  void Stop();

  const ServerOptions& options() const { return options_; }
  Backend& backend() { return *backend_; }
  const std::string& name() const { return options_.name; }
  std::string bound_address() const { return bound_; }

  // Finds the tenant whose token this is and admits one more session of it (max_sessions)
  // for connection `session`. Every successful call is paired with one Leave(). A wrong
  // token is answered only after the gate's delay for its address (server/gate.h).
  Result<const Tenant*> Authenticate(uint64_t session, const std::string& token);
  void Leave(const Tenant* t);
  TenantUsage& Usage(const Tenant* t) { return metrics_.Usage(t); }
  Metrics& metrics() { return metrics_; }
  const std::vector<std::shared_ptr<const Tenant>>& tenants() const { return tenants_; }
  // Every kernel launch of every session goes through the scheduler of its queue's device:
  // one per device, so that tenants share each device separately and each device's busy
  // time is measured on its own (the pool's load, server/pool.h).
  Scheduler& scheduler(int device);
  const SchedulerOptions& sched_options() const { return schedulers_.front()->options(); }
  // The session is ending: every device's scheduler drops what it holds for it.
  void CancelScheduled(uint64_t session_id);
  // A session releases a kernel: the schedulers forget what they measured of its handles.
  void ForgetKernel(BkKernel* kernel, BkKernel* sched_kernel);
  // A latency-critical tenant's request starts or ends: every device's scheduler keeps
  // best-effort work off its device meanwhile (Scheduler::LatencyCriticalRequest).
  void LatencyCriticalRequest(bool begin);
  // Before a session waits in the driver for `events` or for `queue` (null: none) to finish:
  // returns once no scheduler holds any of them back for its tenant's turn, at most `limit`
  // (Scheduler::AwaitDispatch; the driver's wait spins while it lasts).
  void AwaitDispatch(std::span<BkEvent* const> events, const BkQueue* queue,
                     std::chrono::milliseconds limit);
  // What each device has done: kernel time charged on it since start, queues open on it now.
  uint64_t DeviceBusyNs(int device) const;
  uint32_t DeviceQueues(int device) const;
  void CountQueue(int device, int delta);
  BufferPool& buffers() { return *buffers_; }
  // A session may hold pinned staging (ServerOptions::pinned_staging_bytes) if fewer than
  // kPinnedSessions do; each true is paired with one EndPinned.
  bool BeginPinned();
  void EndPinned() { pinned_sessions_.fetch_sub(1); }
  // The device context that every session of tenants in `group` (Tenant::context_group)
  // shares for these devices, created on first use; each call returns one more reference,
  // dropped with Backend::Release like any context. The server keeps its own until it ends.
  Result<BkContext*> SharedContext(const std::string& group, std::span<const int> devices);

  void CountCommand() { commands_.fetch_add(1, std::memory_order_relaxed); }
  void CountObjects(int64_t d) { objects_.fetch_add(d, std::memory_order_relaxed); }
  uint64_t TotalObjects() const { return static_cast<uint64_t>(objects_.load()); }
  uint64_t ActiveSessions();
  bool stopping() const { return stopping_.load(); }
  // A session's reader parked in a device wait at `ns` (steady clock): the park watcher
  // ticks fast for a while.
  void NoteParked(int64_t ns) { last_park_ns_.store(ns, std::memory_order_relaxed); }
  // A session may busy-poll its socket (ServerOptions::poll) if fewer than max_pollers do
  // (best-effort ones: fewer than half of them); each true is paired with one EndPoll.
  bool BeginPoll(bool latency_critical);
  void EndPoll();
  // One line per authenticated session (for Stats / rgpu status).
  struct SessionSummary {
    uint64_t id;
    const Tenant* tenant;
    std::string peer;
    uint64_t objects, commands, in_flight;
  };
  std::vector<SessionSummary> SessionSummaries();

 private:
  void AcceptOne();
  void Handshake(uint64_t id, int fd, std::string peer);
  void SessionThread(uint64_t id, std::unique_ptr<proto::Stream> stream, std::string peer);
  // The watchdog thread: Hello deadlines (Gate::Expire), heartbeats to idle clients and
  // ending sessions whose client went silent. Never waits for the device or a socket.
  void Watch();
  void WatchSessions(std::chrono::steady_clock::time_point now);
  // The park watcher: hands the frames of sessions parked in a long wait to their aside
  // threads (Session::ServeAsideIfParked), every ServerOptions::serve_aside while any
  // session parked in the last 100 ms, else every 20 ms.
  void WatchParked();

  ServerOptions options_;
  std::unique_ptr<Backend> backend_;
  struct DeviceCounters {
    std::atomic<uint64_t> busy_ns{0};
    std::atomic<int64_t> queues{0};
  };
  // One of each per backend device (at least one), fixed after construction.
  std::vector<std::unique_ptr<Scheduler>> schedulers_;
  std::vector<std::unique_ptr<DeviceCounters>> device_counters_;
  std::shared_ptr<BufferPool> buffers_ = std::make_shared<BufferPool>(size_t{1} << 30);
  // Pooled transfer buffers unused this long are freed (BufferPool::ReleaseIdle).
  static constexpr auto kPoolIdle = std::chrono::seconds(3);
  HeapTrimmer heap_trimmer_{[pool = buffers_] { return pool->ReleaseIdle(kPoolIdle); }};
  std::vector<std::shared_ptr<const Tenant>> tenants_;  // fixed after construction
  Metrics metrics_;
  int listen_fd_ = -1;
  std::string bound_;
  // Set by Bind() when options_ name a certificate: TCP clients handshake before their
  // session starts. Connections still handshaking are counted so Run() can wait for them.
  std::shared_ptr<proto::TlsServer> tls_;
  std::atomic<int> handshaking_{0};
  std::atomic<int> pinned_sessions_{0};
  Gate gate_;
  std::thread watchdog_, park_watcher_;
  std::atomic<bool> watch_stop_{false};
  std::atomic<int64_t> last_park_ns_{0};                    // steady clock (NoteParked)
  std::unordered_map<uint64_t, proto::PeerWatch> watches_;  // the watchdog's only
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> commands_{0};
  std::atomic<int64_t> objects_{0};
  std::atomic<uint64_t> next_session_{1};

  std::mutex shared_mu_;
  std::map<std::pair<std::string, std::vector<int>>, BkContext*> shared_contexts_;  // GUARDED_BY(shared_mu_)

  std::mutex mu_;
  std::condition_variable sessions_cv_;
  std::unordered_map<uint64_t, Session*> sessions_;  // GUARDED_BY(mu_)
  // Session threads that registered and have not finished with this object (SessionThread):
  // Run returns only once it is 0, as they touch members after leaving sessions_.
  int session_threads_ = 0;  // GUARDED_BY(mu_)
};

}  // namespace rgpu::server
