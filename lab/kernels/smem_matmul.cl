// S-mem: the G-mem product tiled through local memory (seed 000, mm_shared.cu).
// Work-groups of TILE x TILE work-items, one output tile each.
#define TILE 16

__kernel void smem_matmul(__global const float* a, __global const float* b,
                          __global float* c, int n) {
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE + 1];  // +1: column reads spread over banks
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int col = get_group_id(0) * TILE + tx;
  const int row = get_group_id(1) * TILE + ty;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    a_tile[ty][tx] = (row < n && k0 + tx < n) ? a[(ulong)row * n + k0 + tx] : 0.0f;
    b_tile[ty][tx] = (col < n && k0 + ty < n) ? b[(ulong)(k0 + ty) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc += a_tile[ty][k] * b_tile[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < n && col < n) c[(ulong)row * n + col] = acc;
}
