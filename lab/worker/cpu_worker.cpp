// rgpu-lab-cpu-worker: a CPU-bound tenant (seed 001's "CPU VM"): one naive
// single-threaded n x n float matrix product per round, timed on the host.
// Reports wall time and the CPU time it actually got, whose ratio shows how
// much of the wall time it spent waiting for a core.
#include <algorithm>
#include <ctime>
#include <iostream>
#include <random>
#include <vector>

#include <CLI/CLI.hpp>

#include "worker/protocol.h"

namespace rgpu::lab {
namespace {

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

class CpuMatmulWorkload : public Workload {
 public:
  CpuMatmulWorkload(int n, unsigned seed) : n_(n), a_(std::size_t(n) * n), b_(a_.size()), c_(a_.size()) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    for (float& x : a_) x = uniform(rng);
    for (float& x : b_) x = uniform(rng);
  }

  RoundReport RunRound() override {
    RoundReport report{"cpu-matmul", "cpu"};
    const double wall_start = NowMs();
    const double cpu_start = ThreadCpuMs();
    // i-k-j order: the inner loop streams rows of B and C, as any textbook
    // CPU matmul does; the point is a steady CPU-bound job, not peak FLOPs.
    std::fill(c_.begin(), c_.end(), 0.0f);
    for (int i = 0; i < n_; ++i)
      for (int k = 0; k < n_; ++k) {
        const float aik = a_[std::size_t(i) * n_ + k];
        const float* b_row = &b_[std::size_t(k) * n_];
        float* c_row = &c_[std::size_t(i) * n_];
        for (int j = 0; j < n_; ++j) c_row[j] += aik * b_row[j];
      }
    report.wall_ms = NowMs() - wall_start;
    report.time_ms = report.wall_ms;
    const double cpu_ms = ThreadCpuMs() - cpu_start;
    report.metrics = {{"n", n_}, {"cpu_ms", cpu_ms}, {"checksum", c_[c_.size() / 2]}};
    return report;
  }

 private:
  int n_;
  std::vector<float> a_, b_, c_;
};

}  // namespace
}  // namespace rgpu::lab

int main(int argc, char** argv) {
  int n = 1600;
  unsigned seed = 1;
  std::string kernel = "cpu-matmul";
  CLI::App app{"rgpu lab CPU worker (driven by rgpu-lab; see docs/lab.md)"};
  app.add_option("--n", n, "matrix side");
  app.add_option("--seed", seed, "input seed");
  app.add_option("--kernel", kernel, "cpu-matmul (the only one)");
  CLI11_PARSE(app, argc, argv);
  rgpu::lab::CpuMatmulWorkload workload(n, seed);
  return rgpu::lab::ServeWorkload(workload);
}
