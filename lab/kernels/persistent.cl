// Persistent kernel (see persistent.cu for the pattern). OpenCL 1.2 gives no
// mapped host flag that a running kernel is guaranteed to see, so the stop
// flag is a device buffer the host writes through a second command queue.
// Where the implementation runs the two queues one after the other (some
// drivers, and any remoting layer), that write would wait for the kernel
// forever; max_polls bounds every work-group's life so the kernel always ends.
// control[0]: stop flag; control[1]: work-item counter / doorbell;
// control[2]: items done; control[3]: work-groups that saw the stop flag.
__kernel void persistent(__global volatile int* control, __global const float* packets,
                         __global float* results, int slots, int packet_len, int busy,
                         long max_polls) {
  __local int stop;
  __local int item;
  __local float partial[256];
  const int lid = get_local_id(0);
  const int size = get_local_size(0);
  int processed = 0;
  for (long poll = 0; max_polls <= 0 || poll < max_polls; ++poll) {
    if (lid == 0) {
      stop = control[0];
      if (busy)
        item = atomic_inc(&control[1]);
      else
        item = control[1] > (1 << 30) ? control[1] : -1;  // nobody rings it
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (stop) break;
    if (item >= 0) {
      __global const float* packet = packets + (ulong)(item % slots) * packet_len;
      float sum = 0.0f;
      for (int i = lid; i < packet_len; i += size) sum = fma(packet[i], 1.0001f, sum);
      partial[lid] = sum;
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int stride = size / 2; stride > 0; stride /= 2) {
        if (lid < stride) partial[lid] += partial[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (lid == 0) {
        results[item % slots] = partial[0];
        ++processed;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    atomic_add(&control[2], processed);
    if (stop) atomic_inc(&control[3]);
  }
}
