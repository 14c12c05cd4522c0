// rgpu-probe-reads: where a same-host read through the shared region loses its time.
//
// A read through rgpu's shared region (docs/protocol.md, "Shared memory") is two copies: the
// driver reads the device into the region (a memfd mapped MAP_SHARED in rgpud), and the
// client copies the region into the application's memory. This measures, natively, each
// step on its own:
//
//   - blocking clEnqueueReadBuffer into malloc'd memory (what a native program does), into a
//     memfd mapping, and into pinned memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer);
//   - the same into the memfd as back-to-back pieces of 1 and 4 MiB (rgpud's slots);
//   - memcpy from the memfd into malloc'd memory, with 1, 2 and 4 threads.
//
//   rgpu-probe-reads [--platform NAME] [--mib N] [--repeats R] > reads.json
//
// Every figure is the median of R timed repeats (default 15) in GB/s, after a warm-up. All
// memory is touched before timing, as an application's reused buffer would be.
#include <CL/cl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/probe_check.h"

namespace {

using Clock = std::chrono::steady_clock;


// GB/s of moving `bytes` with `step`, median of `repeats` after one warm-up.
double Rate(size_t bytes, int repeats, const std::function<void()>& step) {
  step();
  std::vector<double> gbs;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    step();
    gbs.push_back(bytes / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  return gbs[gbs.size() / 2];
}

void ParallelCopy(uint8_t* dst, const uint8_t* src, size_t n, int threads) {
  std::vector<std::thread> ts;
  const size_t part = (n / threads + 4095) & ~size_t{4095};
  for (int t = 1; t < threads; ++t) {
    const size_t at = t * part;
    if (at >= n) break;
    ts.emplace_back([=] { std::memcpy(dst + at, src + at, std::min(part, n - at)); });
  }
  std::memcpy(dst, src, std::min(part, n));
  for (auto& t : ts) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  std::string platform;
  size_t mib = 64;
  int repeats = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--platform") platform = argv[i + 1];
    else if (a == "--mib") mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--repeats") repeats = std::atoi(argv[i + 1]);
  }
  const size_t n = mib << 20;
  const ProbeDevice pd = PickProbeDevice(platform);
  cl_device_id dev = pd.device;
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  CHECK(err);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, nullptr, &err);
  CHECK(err);
  std::vector<uint8_t> pattern(n, 0x5a);
  CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, n, pattern.data(), 0, nullptr, nullptr));

  auto* heap = static_cast<uint8_t*>(std::malloc(n));
  std::memset(heap, 1, n);
  const int fd = memfd_create("rgpu-probe", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(n)) != 0) return 1;
  auto* shm = static_cast<uint8_t*>(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  if (shm == MAP_FAILED) return 1;
  std::memset(shm, 1, n);
  cl_mem pinned_buf = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, n, nullptr, &err);
  CHECK(err);
  auto* pinned = static_cast<uint8_t*>(
      clEnqueueMapBuffer(q, pinned_buf, CL_TRUE, CL_MAP_WRITE, 0, n, 0, nullptr, nullptr, &err));
  CHECK(err);
  std::memset(pinned, 1, n);

  auto read_into = [&](uint8_t* dst, size_t piece) {
    return [=] {
      for (size_t at = 0; at < n; at += piece)
        CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, at, std::min(piece, n - at), dst + at, 0, nullptr, nullptr));
      CHECK(clFinish(q));
    };
  };
  std::printf("{\"device\": \"%s\", \"bytes\": %zu, \"repeats\": %d, \"gb_per_s\": {\n",
              pd.name.c_str(), n, repeats);
  std::printf("  \"read_to_malloc\": %.2f,\n", Rate(n, repeats, read_into(heap, n)));
  std::printf("  \"read_to_memfd\": %.2f,\n", Rate(n, repeats, read_into(shm, n)));
  std::printf("  \"read_to_pinned\": %.2f,\n", Rate(n, repeats, read_into(pinned, n)));
  std::printf("  \"read_to_memfd_4mib_pieces\": %.2f,\n", Rate(n, repeats, read_into(shm, size_t{4} << 20)));
  std::printf("  \"read_to_memfd_1mib_pieces\": %.2f,\n", Rate(n, repeats, read_into(shm, size_t{1} << 20)));
  std::printf("  \"read_to_malloc_4mib_pieces\": %.2f,\n", Rate(n, repeats, read_into(heap, size_t{4} << 20)));
  for (int t : {1, 2, 4})
    std::printf("  \"memcpy_memfd_to_malloc_%dt\": %.2f,\n", t,
                Rate(n, repeats, [&] { ParallelCopy(heap, shm, n, t); }));
  std::printf("  \"memcpy_pinned_to_memfd_1t\": %.2f,\n", Rate(n, repeats, [&] { ParallelCopy(shm, pinned, n, 1); }));
  // The memfd mapping as the host memory of a CL_MEM_USE_HOST_PTR buffer: whether the driver
  // then copies into it at pinned speed (a device copy into that buffer, and a read into the
  // mapping while the buffer exists).
  cl_mem over_shm = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, n, shm, &err);
  if (err == CL_SUCCESS) {
    std::printf("  \"copy_to_usehostptr_memfd\": %.2f,\n", Rate(n, repeats, [&] {
                  CHECK(clEnqueueCopyBuffer(q, buf, over_shm, 0, 0, n, 0, nullptr, nullptr));
                  void* p = clEnqueueMapBuffer(q, over_shm, CL_TRUE, CL_MAP_READ, 0, n, 0, nullptr, nullptr, &err);
                  CHECK(err);
                  CHECK(clEnqueueUnmapMemObject(q, over_shm, p, 0, nullptr, nullptr));
                  CHECK(clFinish(q));
                }));
    std::printf("  \"map_usehostptr_points_into_memfd\": %d,\n", [&] {
      void* p = clEnqueueMapBuffer(q, over_shm, CL_TRUE, CL_MAP_READ, 0, n, 0, nullptr, nullptr, &err);
      const int same = p == shm;
      clEnqueueUnmapMemObject(q, over_shm, p, 0, nullptr, nullptr);
      clFinish(q);
      return same;
    }());
    std::printf("  \"read_to_memfd_registered\": %.2f,\n", Rate(n, repeats, read_into(shm, n)));
    clReleaseMemObject(over_shm);
  }
  std::printf("  \"use_host_ptr_error\": %d\n", err);
  std::printf("}}\n");
  CHECK(clEnqueueUnmapMemObject(q, pinned_buf, pinned, 0, nullptr, nullptr));
  clFinish(q);
  return 0;
}
