// Names the calling thread (at most 15 characters; longer names are cut), so that top -H,
// perf and gdb tell rgpu's threads apart: every thread of client and rgpud names itself
// first thing.
#pragma once

#include <pthread.h>

#include <cstring>

namespace rgpu::proto {

inline void NameThread(const char* name) {
  char buf[16];
  std::strncpy(buf, name, sizeof(buf) - 1);
  buf[sizeof(buf) - 1] = '\0';
  pthread_setname_np(pthread_self(), buf);
}

}  // namespace rgpu::proto
