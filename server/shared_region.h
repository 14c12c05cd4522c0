// A client's shared bulk region as rgpud maps it (proto/shared_region.h has the layout).
//
// The client created the memfd; rgpud trusts nothing about it but what the kernel says:
// it must be a memfd sealed against shrinking (so that the client cannot truncate it under
// a device copy, which would fault rgpud with SIGBUS), at least as large as announced, and
// no larger than the server's cap. Every range a request names is checked against the data
// area here before any byte is touched. The mapping lives as long as its last user: the
// session, and every device command still copying to or from it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "proto/status.h"
#include "server/backend/backend.h"

namespace rgpu::server {

// Maps `size` bytes of `fd` read-write, shared, if the kernel says it is a memfd sealed
// against shrinking and at least that large (a client's memory that cannot fault us);
// otherwise an error naming `what`. With `populate`, every page is mapped at once (no page
// fault on first touch later). Does not close `fd`.
Result<uint8_t*> MapSealedMemfd(int fd, uint64_t size, const std::string& what,
                                bool populate = false);

class SharedRegion {
 public:
  // Maps `fd` (which it always closes) as a region of `size` bytes, at most `cap`.
  static Result<std::shared_ptr<SharedRegion>> Map(int fd, uint64_t size, uint64_t cap);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  // The data at [off, off + len): inside the data area and not empty, or a protocol error.
  Result<uint8_t*> Range(uint64_t off, uint64_t len);
  // The request that lent [off, off + len) is done with it: clears the busy word of every
  // granule it touches and wakes a client waiting for room. Any thread.
  void Release(uint64_t off, uint64_t len);
  uint64_t size() const { return size_; }

  // Makes the data area known to device context `ctx` (Backend::RegisterHostMemory), so that
  // the device copies to and from it at pinned speed: on an H100, a 64 MiB read into the
  // registered region ran at 53.8 GB/s against 8.7 GB/s into ordinary (pageable) memory
  // (rgpu-probe-reads). The registration lasts as long as the mapping, which outlives every
  // command copying to or from it; its buffer keeps its context alive as long. So only the
  // first context a region is copied in is registered: a client that makes and releases
  // contexts one after another (test suites do) must not keep all of them alive in rgpud.
  // False for any other context, or if the backend refused (the copies stay pageable).
  // The session's reader thread only.
  bool Register(Backend& bk, BkContext* ctx);
  // Ends the registration now, once no device command copies to or from the region (the
  // session's queues have drained): the mapping may outlive the session in a completion's
  // last reference, as late as the backend's own teardown, and must not call it then.
  void Unregister();

 private:
  SharedRegion(uint8_t* base, uint64_t size) : base_(base), size_(size) {}
  uint8_t* base_;
  uint64_t size_;
  Backend* backend_ = nullptr;
  struct Registration {
    BkContext* ctx;
    BkMem* mem;  // null: the backend refused; not asked again
  };
  std::optional<Registration> registered_;
};

}  // namespace rgpu::server
