// G-mem: naive matrix product reading global memory only (seed 000, mm_normal.cu).
// One work-item per output element of C = A * B (n x n, row-major). The
// global offset of the launch selects which elements a piece computes (seed
// 001 splits a launch this way); the last piece may run past n * n.
__kernel void gmem_matmul(__global const float* a, __global const float* b,
                          __global float* c, int n) {
  const ulong e = get_global_id(0);
  if (e >= (ulong)n * n) return;
  const ulong row = e / n;
  const ulong col = e % n;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[(ulong)k * n + col];
  c[e] = acc;
}

// splitmix64 of the index: uniform [0, 1) inputs generated on the device.
__kernel void fill_uniform(__global float* data, ulong count, ulong seed) {
  const ulong i = get_global_id(0);
  if (i >= count) return;
  ulong z = seed + (i + 1) * 0x9E3779B97F4A7C15UL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
  z ^= z >> 31;
  data[i] = (float)(z >> 40) * (1.0f / 16777216.0f);
}
