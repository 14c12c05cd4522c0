#include "client/shared_region.h"

#include <CL/cl.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "proto/shared_region.h"

namespace rgpu::client {

Result<SealedMemfd> MakeSealedMemfd(const char* name, uint64_t size, bool populate) {
  const int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Status::Error(CL_OUT_OF_RESOURCES, std::string("memfd_create: ") + std::strerror(errno));
  auto fail = [fd](const char* what) {
    const std::string why = std::string(what) + ": " + std::strerror(errno);
    ::close(fd);
    return Status::Error(CL_OUT_OF_RESOURCES, why);
  };
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) return fail("ftruncate");
  // rgpud refuses memory that could shrink under it (its copies would fault).
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) return fail("F_ADD_SEALS");
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0),
                 fd, 0);
  if (p == MAP_FAILED) return fail("mmap");
  return SealedMemfd{fd, static_cast<uint8_t*>(p)};
}

Result<std::unique_ptr<SharedRegion>> SharedRegion::Create() {
  static_assert(kSlotBytes % proto::kSharedGranule == 0 && kSlotBytes % kReadUnit == 0);
  const uint64_t size = proto::kSharedHeader + 2 * kSlotsPerDirection * kSlotBytes;
  auto m = MakeSealedMemfd("rgpu-shared", size, /*populate=*/false);
  if (!m.ok()) return m.status();
  return std::unique_ptr<SharedRegion>(new SharedRegion(m->fd, m->base, size));
}

SharedRegion::~SharedRegion() {
  CloseFd();
  munmap(base_, size_);
}

void SharedRegion::CloseFd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

SharedRegion::Slot SharedRegion::SlotAt(size_t index) const {
  const uint64_t off = proto::kSharedHeader + index * kSlotBytes;
  return Slot{off, base_ + off};
}

SharedRegion::ReadRange SharedRegion::AcquireRead(size_t bytes) {
  const size_t units = std::clamp<size_t>((bytes + kReadUnit - 1) / kReadUnit, 1, kReadUnits);
  std::unique_lock lk(read_mu_);
  const uint64_t ticket = read_tickets_++;
  size_t first = 0;
  auto free_run = [&] {
    for (first = 0; first + units <= kReadUnits; ++first) {
      size_t n = 0;
      while (n < units && !read_busy_[first + n]) ++n;
      if (n == units) return true;
      first += n;  // the unit after the free stretch is busy
    }
    return false;
  };
  read_cv_.wait(lk, [&] { return ticket == read_serving_ && free_run(); });
  for (size_t u = first; u < first + units; ++u) read_busy_.set(u);
  read_serving_++;
  lk.unlock();
  read_cv_.notify_all();  // the next ticket may fit beside this one
  const Slot half = SlotAt(kSlotsPerDirection);
  const uint64_t at = first * kReadUnit;
  return ReadRange{half.off + at, half.p + at, first, units};
}

void SharedRegion::ReleaseRead(const ReadRange& r) {
  {
    std::lock_guard lk(read_mu_);
    for (size_t u = r.first; u < r.first + r.units; ++u) read_busy_.reset(u);
  }
  read_cv_.notify_all();
}

bool SharedRegion::LendForWrite(size_t len, const std::function<bool()>& alive, Slot* slot) {
  const size_t granules = (len + proto::kSharedGranule - 1) / proto::kSharedGranule;
  if (next_granule_ + granules > kWriteGranules) next_granule_ = 0;  // pieces never wrap
  const uint64_t off = proto::kSharedHeader + next_granule_ * proto::kSharedGranule;
  auto* gen = proto::SharedGeneration(base_);
  for (size_t g = 0; g < granules; ++g) {
    auto* busy = proto::SharedBusyWord(base_, off + g * proto::kSharedGranule);
    for (int spins = 0;; ++spins) {
      const uint32_t seen = gen->load(std::memory_order_acquire);
      if (busy->load(std::memory_order_acquire) == 0) break;
      if (!alive()) return false;
      if (spins < 64) {
        std::this_thread::yield();
        continue;
      }
      // rgpud bumps the generation and wakes us after every release; the timeout only
      // bounds how late we notice a connection that died meanwhile.
      proto::SharedWait(gen, seen, 50);
    }
  }
  for (size_t g = 0; g < granules; ++g)
    proto::SharedBusyWord(base_, off + g * proto::kSharedGranule)->store(1, std::memory_order_relaxed);
  next_granule_ += granules;
  *slot = Slot{off, base_ + off};
  return true;
}

}  // namespace rgpu::client
