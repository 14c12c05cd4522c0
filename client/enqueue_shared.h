// Buffer transfers through the shared region (client/enqueue_shared.cpp).
#pragma once

#include "client/enqueue_common.h"

namespace rgpu::client {

// Whether a transfer of `size` bytes on `q` goes through the shared region: the connection
// has one, the transfer is large enough to gain from it, the queue is in order, and (reads)
// no user event of the connection is unset.
bool UseShared(cl_command_queue q, size_t size, bool read);
// The data of a clEnqueueWriteBuffer, copied into slots and sent; returns once all of it is
// copied (the application's memory is free again), as the socket path does.
cl_int WriteShared(cl_command_queue q, cl_mem m, size_t off, size_t size, const void* ptr,
                   cl_uint n, const cl_event* list, uint64_t event_id);
// A blocking read: returns once every byte is in `ptr`, or the first error.
cl_int ReadShared(cl_command_queue q, cl_mem m, size_t off, size_t size, void* ptr, cl_uint n,
                  const cl_event* list, uint64_t event_id);
// A clCreateBuffer's initial contents through the shared region: copied into granules of the
// write half and named by a CreateBuffer marked SHARED. False, having sent nothing, where the
// connection has no region or `req.size` is under the shared minimum or over one slot (the
// socket then carries the data); true once the request is out (`*err` says how it went).
bool CreateShared(Connection& conn, const proto::CreateBufferRequest& req, const void* data,
                  cl_int* err);
// Whether a read of `size` bytes fits in the read slots at once, so that a non-blocking one
// can send every request of it before returning (it keeps its place among the queue's
// commands) and complete later (ReadSharedLater).
bool FitsReadSlots(size_t size);
// A non-blocking read: its requests are sent now; the data is copied into `ptr` when the last
// reply arrives, and then `e` (the read's event, from ReadEvent) lands.
cl_int ReadSharedLater(cl_command_queue q, cl_mem m, size_t off, size_t size, void* ptr, cl_uint n,
                       const cl_event* list, uint64_t event_id, cl_event e);

}  // namespace rgpu::client
