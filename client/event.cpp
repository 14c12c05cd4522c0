// Events: status, waiting, callbacks, user events and profiling.
//
// An event's state lives on the server; we keep what we learn of it. A read's event also has
// a local half: it is complete only when its data has landed in host memory.
#include <algorithm>
#include <deque>
#include <thread>
#include <utility>

#include "client/icd.h"
#include "proto/messages.h"
#include "proto/stamps.h"
#include "proto/thread_name.h"

namespace rgpu::client {

using proto::Op;
using proto::Writer;

namespace {

// User callbacks run here, never on the receiver thread, so they may call OpenCL
// (including blocking calls that need the receiver).
class CallbackThread {
 public:
  void Post(std::function<void()> fn) {
    std::lock_guard lk(mu_);
    if (!started_) {
      started_ = true;
      std::thread([this] { Loop(); }).detach();
    }
    q_.push_back(std::move(fn));
    cv_.notify_one();
  }

 private:
  void Loop() {
    proto::NameThread("rgpu-callbacks");
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return !q_.empty(); });
        fn = std::move(q_.front());
        q_.pop_front();
      }
      fn();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool started_ = false;
};

CallbackThread& Callbacks() {
  static auto* t = new CallbackThread();  // lives for the process: callbacks may run late
  return *t;
}

std::mutex g_watch_mu;
std::map<std::pair<Connection*, uint64_t>, cl_event> g_watched;  // GUARDED_BY(g_watch_mu)

void RunCallbacks(cl_event e, cl_int status) {
  std::vector<_cl_event::Callback> cbs;
  {
    std::lock_guard lk(e->mu);
    if (e->local_status > 0) e->local_status = status;
    cbs.swap(e->callbacks);
  }
  e->cv.notify_all();
  for (auto& cb : cbs) cb.fn(e, status < 0 ? status : CL_COMPLETE, cb.data);
}

// Whether an earlier read of `e`'s in-order queue has not landed: `e` is not complete here
// before it (_cl_event::reads_before).
bool ReadsFirst(cl_event e) {
  return !e->is_read && e->reads_before && e->queue->ReadsPendingBefore(e->reads_before + 1);
}

void Complete(cl_event e, cl_int status) {
  Hold(e);
  Callbacks().Post([e, status] {
    // On this thread, not the receiver's, which lands the reads waited for.
    if (!e->is_read && e->reads_before) e->queue->WaitReadsBefore(e->reads_before + 1);
    RunCallbacks(e, status);
    Drop(e);
  });
}

cl_int RemoteStatus(cl_event e) {
  const bool reads_first = ReadsFirst(e);
  {
    std::lock_guard lk(e->mu);
    if (e->local_status <= 0)
      return reads_first && e->local_status == CL_COMPLETE ? CL_RUNNING : e->local_status;
  }
  cl_int st = CL_QUEUED;
  size_t got = 0;
  cl_int rc = RemoteInfo(e->conn(), proto::InfoFamily::Event, e->id, CL_EVENT_COMMAND_EXECUTION_STATUS,
                         -1, 0, sizeof(st), &st, &got);
  if (rc != CL_SUCCESS) return rc == CL_OUT_OF_RESOURCES ? CL_OUT_OF_RESOURCES : CL_QUEUED;
  if (st == CL_COMPLETE && reads_first) return CL_RUNNING;  // an earlier read still on its way
  std::lock_guard lk(e->mu);
  if (st <= 0 && e->is_read && !e->landed) return CL_RUNNING;  // data still on its way
  if (st <= 0) e->local_status = st;
  return st;
}

}  // namespace

void RegisterConnectionCallbacks(const std::shared_ptr<Connection>& conn) {
  Connection* raw = conn.get();
  conn->on_event_done = [raw](uint64_t id, int32_t status) {
    cl_event e = nullptr;
    {
      std::lock_guard lk(g_watch_mu);
      auto it = g_watched.find({raw, id});
      if (it == g_watched.end()) return;
      e = it->second;
      g_watched.erase(it);
    }
    // A read's callbacks wait for its data (ReadLanded runs them).
    bool defer;
    {
      std::lock_guard lk(e->mu);
      defer = e->is_read && !e->landed && status >= 0;
    }
    if (!defer) Complete(e, status);
    Drop(e);
  };
  conn->on_async_error = [](uint16_t op, uint64_t id, int32_t code, const std::string& msg) {
    (void)op;
    (void)id;
    (void)code;
    (void)msg;  // printed under RGPU_DEBUG by the connection; the event carries the status
  };
}

cl_event NewEvent(cl_command_queue q, cl_command_type type, uint64_t id) {
  auto* e = new _cl_event();
  e->context = q->context;
  Hold(e->context);
  e->queue = q;
  Hold(q);
  e->id = id;
  e->type = type;
  e->profiling = q->properties & CL_QUEUE_PROFILING_ENABLE;
  if (!(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {
    std::lock_guard lk(q->mu);
    e->reads_before = q->reads_started;
  }
  return e;
}

namespace {

// A read's data is in the application's memory: its event may complete.
void MarkLanded(cl_event e, cl_int status) {
  if (auto land = std::exchange(e->on_landing, nullptr)) land(status);
  bool run = false;
  {
    std::lock_guard lk(e->mu);
    e->landed = true;
    e->landed_hint.store(true, std::memory_order_release);
    if (status < 0)
      e->local_status = status;
    else if (e->local_status > 0)
      e->local_status = CL_COMPLETE;
    run = !e->callbacks.empty();
  }
  e->cv.notify_all();
  if (run) Complete(e, status < 0 ? status : CL_COMPLETE);
}

// The landed reads at the front of an in-order queue's pending reads, marked for release,
// unless another thread is releasing some already (it takes these next, keeping the order).
std::vector<_cl_command_queue::PendingRead> TakeLandedFront(
    std::vector<_cl_command_queue::PendingRead>& pending) {
  std::vector<_cl_command_queue::PendingRead> out;
  if (pending.empty() || pending.front().releasing) return out;
  for (auto& p : pending) {
    if (!p.landed) break;
    p.releasing = true;
    out.push_back(p);
  }
  return out;
}

}  // namespace

void ReadLanded(cl_event e, cl_command_queue q, cl_int status) {
  // On an in-order queue the reads complete in the order they were enqueued, as natively:
  // rgpud may answer a small read (one frame) before a large one enqueued earlier (pieces),
  // so a read that lands early waits, held in the queue's pending reads, for those before it.
  // A read leaves the pending reads only once its event is complete, so that whoever waited
  // for them (clFinish, a blocking read, a later command's wait) sees its event complete.
  const bool in_order = q && !(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  std::vector<_cl_command_queue::PendingRead> batch;
  if (q) {
    std::lock_guard lk(q->mu);
    auto it = std::find_if(q->pending_reads.begin(), q->pending_reads.end(),
                           [&](const auto& p) { return p.seq == e->read_seq; });
    if (it != q->pending_reads.end()) {
      Hold(e);
      it->landed = e;
      it->status = status;
      if (in_order) {
        batch = TakeLandedFront(q->pending_reads);
      } else {
        it->releasing = true;
        batch.push_back(*it);
      }
      if (batch.empty()) return;  // an earlier read is still on its way, or being released
    }
  }
  if (batch.empty()) {  // not among the pending reads: it ran in the call
    MarkLanded(e, status);
    return;
  }
  while (!batch.empty()) {
    for (auto& p : batch) MarkLanded(p.landed, p.status);
    std::vector<_cl_command_queue::PendingRead> released;
    {
      std::lock_guard lk(q->mu);
      auto& pending = q->pending_reads;
      auto in_batch = [&](const auto& p) {
        return std::any_of(batch.begin(), batch.end(),
                           [&](const auto& b) { return b.seq == p.seq; });
      };
      std::erase_if(pending, in_batch);
      released.swap(batch);
      if (in_order) batch = TakeLandedFront(pending);  // those that landed meanwhile
      q->cv.notify_all();
    }
    for (auto& p : released) Drop(p.landed);
  }
}

cl_int CheckWaitList(cl_context ctx, cl_uint n, const cl_event* list) {
  // CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list > 0,
  // or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event objects in
  // event_wait_list are not valid events
  if ((n > 0) != (list != nullptr)) return CL_INVALID_EVENT_WAIT_LIST;
  for (cl_uint i = 0; i < n; ++i) {
    if (!ValidEvent(list[i])) return CL_INVALID_EVENT_WAIT_LIST;
    // CL_INVALID_CONTEXT if the context of the queue and of the events are not the same
    if (ctx && list[i]->context != ctx) return CL_INVALID_CONTEXT;
  }
  return CL_SUCCESS;
}

void PutCommandHeader(Writer& w, cl_command_queue q, uint64_t event_id, cl_uint n,
                      const cl_event* list) {
  proto::CommandHeader h;
  h.queue = q->id;
  h.event = event_id;
  h.waits.reserve(n);
  for (cl_uint i = 0; i < n; ++i) h.waits.push_back(list[i]->id);
  h.EncodeTo(w);
}

void WaitHostReads(cl_command_queue q, cl_uint n, const cl_event* list, HostRange data) {
  // Only reads into the memory this write takes its data from matter: waiting for any other
  // would block the application where the device would not (a read gated on a user event
  // that another thread completes later).
  if (q && !(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) q->WaitReadsInto(data);
  for (cl_uint i = 0; i < n; ++i) {
    cl_event e = list[i];
    if (!e->is_read || !e->read_into.Overlaps(data)) continue;
    std::unique_lock lk(e->mu);
    e->cv.wait(lk, [&] { return e->landed; });
  }
}

cl_int WaitEvents(cl_uint n, const cl_event* list) {
  // Ask the server only about events whose outcome we do not know yet, per connection.
  std::map<Connection*, std::vector<cl_event>> remote;
  for (cl_uint i = 0; i < n; ++i) {
    std::lock_guard lk(list[i]->mu);
    if (list[i]->local_status > 0) remote[&list[i]->conn()].push_back(list[i]);
  }
  bool failed = false;
  for (auto& [conn, evs] : remote) {
    proto::WaitEventsRequest req;
    for (auto* e : evs) req.events.push_back(e->id);
    Reply rep = conn->Call(Op::WaitEvents, proto::EncodeBody(req));
    if (!rep.status.ok()) return CL_OUT_OF_RESOURCES;
    proto::Reader r = rep.reader();
    proto::WaitEventsReply answer;
    proto::WaitEventsReply::Decode(r, &answer);  // a malformed answer tells nothing
    for (size_t i = 0; i < answer.status.size() && i < evs.size(); ++i) {
      const int32_t st = answer.status[i];
      std::lock_guard lk(evs[i]->mu);
      // A read stays "not done" until its data lands, whatever the device says.
      if (evs[i]->local_status > 0 && (!evs[i]->is_read || st < 0)) evs[i]->local_status = st;
    }
  }
  for (cl_uint i = 0; i < n; ++i) {
    cl_event e = list[i];
    // On an in-order queue the reads enqueued before it complete first (ReadLanded).
    if (!e->is_read && e->reads_before) e->queue->WaitReadsBefore(e->reads_before + 1);
    std::unique_lock lk(e->mu);
    if (e->is_read) e->cv.wait(lk, [&] { return e->landed; });
    if (e->local_status < 0) failed = true;
  }
  // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the execution status of any of the
  // events in event_list is a negative integer value
  return failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
}

// ------------------------------------------------------------------ API

cl_int WaitForEvents(cl_uint n, const cl_event* list) {
  // CL_INVALID_VALUE if num_events is zero or event_list is NULL
  if (n == 0 || !list) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < n; ++i) {
    if (!ValidEvent(list[i])) return CL_INVALID_EVENT;
    // CL_INVALID_CONTEXT if events specified in event_list do not belong to the same context
    if (list[i]->context != list[0]->context) return CL_INVALID_CONTEXT;
  }
  stamps::Mark(stamps::Point::kWaitCall);
  const cl_int err = WaitEvents(n, list);
  stamps::Mark(stamps::Point::kWaitReturns);
  return err;
}

cl_int GetEventInfo(cl_event e, cl_event_info param, size_t size, void* value, size_t* size_ret) {
  if (!ValidEvent(e)) return CL_INVALID_EVENT;
  switch (param) {
    case CL_EVENT_COMMAND_QUEUE: return ReturnValue(e->queue, size, value, size_ret);
    case CL_EVENT_CONTEXT: return ReturnValue(e->context, size, value, size_ret);
    case CL_EVENT_COMMAND_TYPE: return ReturnValue(e->type, size, value, size_ret);
    case CL_EVENT_REFERENCE_COUNT: return ReturnValue<cl_uint>(e->app_refs.load(), size, value, size_ret);
    case CL_EVENT_COMMAND_EXECUTION_STATUS: {
      if (value && size < sizeof(cl_int)) return CL_INVALID_VALUE;
      cl_int st = RemoteStatus(e);
      return ReturnValue(st, size, value, size_ret);
    }
    default: return CL_INVALID_VALUE;
  }
}

cl_int RetainEvent(cl_event e) {
  if (!ValidEvent(e)) return CL_INVALID_EVENT;
  e->app_refs++;
  Hold(e);
  return CL_SUCCESS;
}

cl_int ReleaseEvent(cl_event e) {
  if (!ValidEvent(e)) return CL_INVALID_EVENT;
  if (e->app_refs.fetch_sub(1) == 1) {
    // A launch's event released while its request is still gathered, and the last request
    // (so nothing since named the event: pyopencl drops the events it is not asked to keep):
    // the launch goes without one, and rgpud never makes it. On its queues (profiling on,
    // for the accounting) an event added 5.5 us to NVIDIA's 8-9 us enqueue (H200).
    constexpr size_t kEventField = 8;  // CommandHeader: queue id, then event id
    if (e->launch_gathering == 0 ||
        !e->conn().ZeroIfLastGathered({e->launch_gathering, e->launch_end}, e->launch_body,
                                      kEventField, e->id))
      SendRelease(e->conn(), proto::ObjType::Event, e->id);
  }
  Drop(e);
  return CL_SUCCESS;
}

cl_event CreateUserEvent(cl_context ctx, cl_int* err) {
  if (!ValidContext(ctx)) return SetErr(err, CL_INVALID_CONTEXT), nullptr;
  auto* e = new _cl_event();
  e->context = ctx;
  Hold(ctx);
  e->type = CL_COMMAND_USER;
  e->id = ctx->conn->NewId();
  ++ctx->conn->unset_user_events;
  ctx->conn->Send(Op::CreateUserEvent,
                  proto::EncodeBody(proto::CreateUserEventRequest{e->id, ctx->id}));
  SetErr(err, CL_SUCCESS);
  return e;
}

cl_int SetUserEventStatus(cl_event e, cl_int status) {
  // CL_INVALID_EVENT if event is not a valid user event object
  if (!ValidEvent(e) || e->type != CL_COMMAND_USER) return CL_INVALID_EVENT;
  // CL_INVALID_VALUE if execution_status is not CL_COMPLETE or a negative integer value
  if (status > 0) return CL_INVALID_VALUE;
  {
    // CL_INVALID_OPERATION if the execution_status has already been changed
    std::lock_guard lk(e->mu);
    if (e->local_status <= 0) return CL_INVALID_OPERATION;
    e->local_status = status;
  }
  --e->conn().unset_user_events;
  e->cv.notify_all();
  e->conn().Send(Op::SetUserEventStatus,
                 proto::EncodeBody(proto::SetUserEventStatusRequest{e->id, status}));
  // Commands waiting on this event are on the server: let them go now.
  e->conn().Flush();
  bool has_callbacks;
  {
    std::lock_guard lk(e->mu);
    has_callbacks = !e->callbacks.empty();
  }
  if (has_callbacks) Complete(e, status);
  return CL_SUCCESS;
}

cl_int SetEventCallback(cl_event e, cl_int type, void(CL_CALLBACK* fn)(cl_event, cl_int, void*),
                        void* data) {
  if (!ValidEvent(e)) return CL_INVALID_EVENT;
  // CL_INVALID_VALUE if pfn_event_notify is NULL or if command_exec_callback_type is not
  // CL_SUBMITTED, CL_RUNNING or CL_COMPLETE
  if (!fn || (type != CL_SUBMITTED && type != CL_RUNNING && type != CL_COMPLETE))
    return CL_INVALID_VALUE;
  bool done, watch = false;
  {
    std::lock_guard lk(e->mu);
    done = e->local_status <= 0 && (!e->is_read || e->landed);
    if (!done) {
      // Callbacks for SUBMITTED and RUNNING are called no earlier than those states; we
      // call them at completion, which the specification allows.
      e->callbacks.push_back({fn, data});
      if (!e->watching && e->type != CL_COMMAND_USER) {
        e->watching = true;
        watch = true;
      }
    }
  }
  if (done) {
    cl_int st;
    {
      std::lock_guard lk(e->mu);
      st = e->local_status;
    }
    Hold(e);
    Callbacks().Post([e, fn, data, st] {
      fn(e, st < 0 ? st : CL_COMPLETE, data);
      Drop(e);
    });
    return CL_SUCCESS;
  }
  if (watch) {
    Hold(e);
    {
      std::lock_guard lk(g_watch_mu);
      g_watched[{&e->conn(), e->id}] = e;
    }
    e->conn().Send(Op::WatchEvent, proto::EncodeBody(proto::WatchEventRequest{e->id}));
  }
  return CL_SUCCESS;
}

cl_int GetEventProfilingInfo(cl_event e, cl_profiling_info param, size_t size, void* value,
                             size_t* size_ret) {
  if (!ValidEvent(e)) return CL_INVALID_EVENT;
  int slot = param == CL_PROFILING_COMMAND_QUEUED   ? 0
             : param == CL_PROFILING_COMMAND_SUBMIT ? 1
             : param == CL_PROFILING_COMMAND_START  ? 2
             : param == CL_PROFILING_COMMAND_END    ? 3
             : param == CL_PROFILING_COMMAND_COMPLETE ? 3
                                                      : -1;
  if (slot < 0) return CL_INVALID_VALUE;
  // CL_PROFILING_INFO_NOT_AVAILABLE if the queue lacks CL_QUEUE_PROFILING_ENABLE, the event
  // is a user event, or it has not completed
  if (!e->profiling || e->type == CL_COMMAND_USER) return CL_PROFILING_INFO_NOT_AVAILABLE;
  {
    std::lock_guard lk(e->mu);
    if (e->has_times) return ReturnValue(e->times[slot], size, value, size_ret);
  }
  const proto::GetEventProfilingRequest req{e->id};
  Reply rep = e->conn().Call(Op::GetEventProfiling, proto::EncodeBody(req));
  if (!rep.status.ok()) return rep.status.code() == CL_OUT_OF_RESOURCES ? CL_OUT_OF_RESOURCES
                                                                         : CL_PROFILING_INFO_NOT_AVAILABLE;
  proto::Reader r = rep.reader();
  proto::GetEventProfilingReply answer;
  proto::GetEventProfilingReply::Decode(r, &answer);  // fields cut short read as 0
  const cl_ulong t[4] = {answer.queued, answer.submit, answer.start, answer.end};
  std::lock_guard lk(e->mu);
  std::memcpy(e->times, t, sizeof(t));
  e->has_times = true;
  return ReturnValue(e->times[slot], size, value, size_ret);
}

}  // namespace rgpu::client

_cl_event::~_cl_event() {
  rgpu::client::Drop(queue);
  rgpu::client::Drop(context);
}
