#include "server/shared_region.h"

#include <CL/cl.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "proto/shared_region.h"

namespace rgpu::server {

namespace {
Status Refuse(const std::string& why) { return Status::Error(CL_INVALID_VALUE, why); }
}  // namespace

Result<std::shared_ptr<SharedRegion>> SharedRegion::Map(int fd, uint64_t size, uint64_t cap) {
  struct CloseFd {
    int fd;
    ~CloseFd() { ::close(fd); }
  } closer{fd};
  if (size <= proto::kSharedHeader || size > cap || size > proto::kSharedMaxBytes)
    return Refuse("shared region of " + std::to_string(size) + " bytes (the server takes up to " +
                  std::to_string(std::min(cap, proto::kSharedMaxBytes)) + ")");
  auto p = MapSealedMemfd(fd, size, "shared region");
  if (!p.ok()) return p.status();
  return std::shared_ptr<SharedRegion>(new SharedRegion(*p, size));
}

Result<uint8_t*> MapSealedMemfd(int fd, uint64_t size, const std::string& what, bool populate) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Refuse(what + " is not a memory file");
  // Only memfds (and other shmem files created to be sealed) answer F_GET_SEALS with a set
  // that lacks F_SEAL_SEAL; the shrink seal is what keeps the mapping valid.
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0) return Refuse(what + " is not a memfd (no seals)");
  if (!(seals & F_SEAL_SHRINK)) return Refuse(what + " is not sealed against shrinking");
  if (static_cast<uint64_t>(st.st_size) < size)
    return Refuse(what + " file is " + std::to_string(st.st_size) + " bytes, not " +
                  std::to_string(size));
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0),
                 fd, 0);
  if (p == MAP_FAILED) return Refuse("cannot map the " + what + ": " + std::strerror(errno));
  return static_cast<uint8_t*>(p);
}

SharedRegion::~SharedRegion() {
  Unregister();
  munmap(base_, size_);
}

void SharedRegion::Unregister() {
  if (registered_ && registered_->mem) backend_->Release(proto::ObjType::Mem, registered_->mem);
  if (registered_) registered_->mem = nullptr;
}

bool SharedRegion::Register(Backend& bk, BkContext* ctx) {
  if (registered_) return registered_->ctx == ctx && registered_->mem != nullptr;
  backend_ = &bk;
  auto m = bk.RegisterHostMemory(ctx, base_ + proto::kSharedHeader, size_ - proto::kSharedHeader);
  registered_ = Registration{ctx, m.ok() ? *m : nullptr};
  return m.ok();
}

Result<uint8_t*> SharedRegion::Range(uint64_t off, uint64_t len) {
  if (len == 0 || off < proto::kSharedHeader || off > size_ || len > size_ - off)
    return Status::Protocol("shared range [" + std::to_string(off) + ", +" + std::to_string(len) +
                            ") outside the region's data (" + std::to_string(proto::kSharedHeader) +
                            ".." + std::to_string(size_) + ")");
  return base_ + off;
}

void SharedRegion::Release(uint64_t off, uint64_t len) {
  // [off, off + len) was checked by Range when the request was decoded.
  for (uint64_t g = off; g < off + len; g += proto::kSharedGranule)
    proto::SharedBusyWord(base_, g)->store(0, std::memory_order_release);
  proto::SharedBusyWord(base_, off + len - 1)->store(0, std::memory_order_release);
  auto* gen = proto::SharedGeneration(base_);
  gen->fetch_add(1, std::memory_order_release);
  proto::SharedWake(gen);
}

}  // namespace rgpu::server
