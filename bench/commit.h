// The commit the benchmarks were built from (`git describe --always --dirty`), taken at every
// build by bench/commit.cmake; every result file records it.
#pragma once

namespace rgpu::bench {
extern const char* const kCommit;
}  // namespace rgpu::bench
