// Keeps rgpud's resident memory flat under clients that come and go.
//
// Every session has its own reader and writer threads, and glibc gives threads their own
// malloc arenas (up to 8 per core). What a session frees stays in its arena, free but
// resident, and buffers above the mmap threshold move into the arenas once glibc raises
// the threshold after their frees. Under the vanishing-clients stress (20 rounds of 32
// clients, a third killed, PoCL) rgpud grew 190 -> 223 -> 247 MiB (rounds 1, 3, 20); with
// the two settings below and a trim after sessions end, 94 -> 95 -> 99 MiB; with idle pooled
// transfer buffers freed too (BufferPool::ReleaseIdle, run from here), 89 -> 90 -> 92 MiB.
// What still grows is PoCL's (docs/security.md, "Memory under clients that come and go").
// Thread-safe: SessionEnded may be called from any thread.
#pragma once

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace rgpu::server {

// Call first thing in main, before threads start: few arenas (the threads' caches serve
// small allocations without locks), and large blocks always mapped on their own, so that
// freeing one returns it.
inline void ConfigureHeap() {
  mallopt(M_ARENA_MAX, 2);
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
}

// For GPU devices (rgpud --heap-reuse, default auto: on when a served device is not a CPU):
// blocks under 32 MiB come from the arenas and stay there when freed (no automatic trim);
// the trims below still give free pages back. Safe once threads run (mallopt locks).
//
// Why: NVIDIA's driver, inside rgpud, allocates host memory for each buffer it makes and
// copies into. With every large block mapped and unmapped on its own it paid page faults and
// unmaps each time: on an H100 a 1 MiB buffer made from host data took 0.87 ms through rgpud
// over the Unix socket against 0.055 natively, 0.165 with this; releasing two 206 us against
// 4, 17 with this. The native program with ConfigureHeap's settings (GLIBC_TUNABLES) slowed
// the same way (bench/results/2026-11-27-session17/, docs/performance.md "Session 17").
// Why not on CPU devices: there buffers are the host's memory, and under the
// vanishing-clients soak on PoCL (20 rounds) rgpud's resident memory crept 91 -> 101 MiB
// with it, and stepped +14 MiB in another run, against 89.5 -> 92.8 MiB without.
inline void ReuseHeapBlocks() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

// One malloc_trim(0) follows each burst of session ends, at most every `kCoalesce`, from its
// own thread (a trim walks every arena; no session thread waits for it). Every `kIdleCheck`
// it also runs `release_idle` (what the daemon keeps for reuse and no longer uses: the
// transfer buffer pool), and trims when that released anything.
class HeapTrimmer {
 public:
  explicit HeapTrimmer(std::function<size_t()> release_idle = {})
      : release_idle_(std::move(release_idle)), thread_([this] { Run(); }) {}
  ~HeapTrimmer() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  HeapTrimmer(const HeapTrimmer&) = delete;
  HeapTrimmer& operator=(const HeapTrimmer&) = delete;

  void SessionEnded() {
    {
      std::lock_guard lk(mu_);
      pending_ = true;
    }
    cv_.notify_one();
  }

 private:
  static constexpr auto kCoalesce = std::chrono::milliseconds(500);
  static constexpr auto kIdleCheck = std::chrono::seconds(1);

  void Run() {
    std::unique_lock lk(mu_);
    for (;;) {
      cv_.wait_for(lk, kIdleCheck, [&] { return stop_ || pending_; });
      if (stop_) return;
      const bool ended = pending_;
      // Let a burst of ends (and the frees their last commands make) finish first.
      if (ended && cv_.wait_for(lk, kCoalesce, [&] { return stop_; })) return;
      pending_ = false;
      lk.unlock();
      const size_t released = release_idle_ ? release_idle_() : 0;
      if (ended || released > 0) {
        malloc_trim(0);
        LogHeap();
      }
      lk.lock();
    }
  }

  // What the soak reads (scripts/soak_vanishing_clients.sh, at --log-level debug): memory
  // the program holds apart from what the allocator keeps free, so that growth of the
  // resident size can be told apart from growth of what is allocated.
  static void LogHeap() {
    if (!spdlog::should_log(spdlog::level::debug)) return;
    struct mallinfo2 mi = mallinfo2();
    spdlog::debug("heap: {} KiB allocated ({} KiB in mmapped blocks), {} KiB free in the arenas",
                  (mi.uordblks + mi.hblkhd) >> 10, mi.hblkhd >> 10, mi.fordblks >> 10);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;  // GUARDED_BY(mu_)
  bool stop_ = false;     // GUARDED_BY(mu_)
  const std::function<size_t()> release_idle_;
  std::thread thread_;  // last: starts once the rest is set
};

}  // namespace rgpu::server
