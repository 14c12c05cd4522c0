#include "client/parallel_copy.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "proto/thread_name.h"

namespace rgpu::client {

namespace {

constexpr size_t kMinParallel = size_t{1} << 20;  // below this one core does as well
constexpr size_t kMaxParts = 4;

size_t PartsFromEnvironment() {
  if (const char* e = std::getenv("RGPU_COPY_THREADS"); e && *e)
    return std::clamp<size_t>(std::strtoul(e, nullptr, 10), 1, kMaxParts);
  const unsigned cpus = std::thread::hardware_concurrency();
  return cpus >= 8 ? kMaxParts : cpus >= 4 ? 2 : 1;
}

// Helper threads that each copy one part of the current job. Jobs come one at a time
// (callers hold the shared region's read or write lock, and Run serialises the rest).
class CopyPool {
 public:
  explicit CopyPool(size_t helpers) {
    for (size_t i = 0; i < helpers; ++i) threads_.emplace_back([this, i] { Loop(i); });
  }
  ~CopyPool() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    work_.notify_all();
    for (auto& t : threads_) t.join();
  }
  size_t helpers() const { return threads_.size(); }

  void Run(uint8_t* dst, const uint8_t* src, size_t n) {
    std::lock_guard job_lock(job_mu_);
    const size_t parts = threads_.size() + 1;
    const size_t part = ((n + parts - 1) / parts + 4095) & ~size_t{4095};
    {
      std::lock_guard lk(mu_);
      dst_ = dst;
      src_ = src;
      n_ = n;
      part_ = part;
      pending_ = threads_.size();
      ++generation_;
    }
    work_.notify_all();
    std::memcpy(dst, src, std::min(part, n));  // the caller's own part: the first
    std::unique_lock lk(mu_);
    done_.wait(lk, [this] { return pending_ == 0; });
  }

 private:
  void Loop(size_t index) {
    proto::NameThread("rgpu-copy");
    uint64_t seen = 0;
    std::unique_lock lk(mu_);
    for (;;) {
      work_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      const size_t at = (index + 1) * part_;
      uint8_t* dst = dst_;
      const uint8_t* src = src_;
      const size_t len = at < n_ ? std::min(part_, n_ - at) : 0;
      lk.unlock();
      if (len) std::memcpy(dst + at, src + at, len);
      lk.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex job_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable work_, done_;
  uint8_t* dst_ = nullptr;      // GUARDED_BY(mu_): the current job
  const uint8_t* src_ = nullptr;
  size_t n_ = 0, part_ = 0;
  size_t pending_ = 0;          // GUARDED_BY(mu_): helpers still copying
  uint64_t generation_ = 0;     // GUARDED_BY(mu_): bumped per job
  bool stop_ = false;           // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

CopyPool* Pool() {
  // Made on first use, never destroyed: helper threads must not be joined at exit while an
  // application thread may still be copying.
  static CopyPool* pool = [] {
    const size_t parts = PartsFromEnvironment();
    return parts > 1 ? new CopyPool(parts - 1) : nullptr;
  }();
  return pool;
}

}  // namespace

void ParallelCopy(void* dst, const void* src, size_t n) {
  CopyPool* pool = n >= kMinParallel ? Pool() : nullptr;
  if (!pool) {
    std::memcpy(dst, src, n);
    return;
  }
  pool->Run(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n);
}

}  // namespace rgpu::client
