// One step of a busy-wait: tells the CPU the thread spins (on x86, `pause`: less power, and the
// sibling hyper-thread gets the core), used by every spinning loop of client and rgpud.
#pragma once

namespace rgpu::proto {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace rgpu::proto
