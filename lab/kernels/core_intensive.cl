// Core-intensive kernel (seed 000, high_core.cu); same arithmetic as
// core_intensive.cu: dependent chains on a small array, read rotated each round.
__kernel void core_intensive(__global const float* input, __global float* output,
                             int array_len, int rounds, int chain) {
  const int tid = get_global_id(0);
  float acc = input[tid % array_len];
  for (int round = 0; round < rounds; ++round) {
    const float v = input[(tid + round * 7919) % array_len];
    for (int step = 0; step < chain; ++step) {
      acc = (acc * v + 0.25f) / (1.0f + v);
      acc = acc - 0.5f * v;
    }
  }
  output[tid] = acc;
}
