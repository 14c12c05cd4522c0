// memcpy of a shared-region slot on several cores (client/enqueue_shared.cpp).
//
// Once rgpud has registered a client's shared region with the device context, the device
// copies to and from it at pinned speed (an H100: 51-54 GB/s), and the client's own memcpy
// between the region and the application's memory is the slow step: 5-10 GB/s on one core of
// that host, 10-12 on two and 17-26 on four (rgpu-probe-reads). Copies of a megabyte or more
// are therefore cut into parts, one per helper thread plus the caller's own. The helpers
// sleep on a condition variable between copies (no spinning), and there are none on a host of
// fewer than four CPUs, where they would compete with the application and the device's
// threads (RGPU_COPY_THREADS sets the number of parts, 1 = the caller alone).
#pragma once

#include <cstddef>

namespace rgpu::client {

void ParallelCopy(void* dst, const void* src, size_t n);

}  // namespace rgpu::client
