// What every clEnqueue* shares (client/enqueue.cpp), for the image commands too
// (client/enqueue_image.cpp).
#pragma once

#include "client/icd.h"
#include "proto/messages.h"

namespace rgpu::client {

// Common preamble of every enqueue: the queue, the wait list, and the new event's id.
struct Command {
  cl_command_queue q;
  uint64_t event_id = 0;
  std::vector<uint8_t> body;
  proto::Writer w{&body};
};

cl_int Begin(Command& c, cl_command_queue q, cl_uint n, const cl_event* list, cl_event* event);
// Hands the application its event (if it asked for one).
void Finish(Command& c, cl_command_type type, cl_event* event, cl_event made = nullptr);
cl_int CheckMem(cl_command_queue q, cl_mem m);
// The event that stands for a read: the application's (if it asked) or a private one.
cl_event ReadEvent(Command& c, cl_command_type type, cl_event* event, HostRange into);
cl_int StartRead(Command& c, proto::Op op, std::shared_ptr<ReadSink> sink, cl_event e,
                 cl_bool blocking, cl_command_type type, cl_event* event);
// An origin, region or range as the typed messages carry it (proto/messages.h).
proto::Triple ToTriple(const size_t* v);
// clEnqueueUnmapMemObject of an image mapped for writing: writes the mapped region back.
cl_int WriteMappedImage(cl_command_queue q, cl_mem m, const Mapping& map, cl_uint n,
                        const cl_event* list, cl_event* event);
cl_int EnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event* list,
                                 cl_event* event);

// A rectangular read arrives packed; scattered into the host layout as it lands, in the order
// of the queue's reads.
struct RectSink : ReadSink {
  std::vector<uint8_t> packed;
  uint8_t* host;
  size_t host_origin[3], region[3], row_pitch, slice_pitch;
  cl_event ev;
  cl_command_queue q;
  void Data(size_t off, const uint8_t* p, size_t len) override {
    std::memcpy(packed.data() + off, p, len);
  }
  uint8_t* Direct(size_t off, size_t) override { return packed.data() + off; }
  void Land(int32_t status) override {
    if (status >= 0) {
      const uint8_t* src = packed.data();
      for (size_t z = 0; z < region[2]; ++z)
        for (size_t y = 0; y < region[1]; ++y) {
          size_t at = (host_origin[2] + z) * slice_pitch + (host_origin[1] + y) * row_pitch +
                      host_origin[0];
          std::memcpy(host + at, src, region[0]);
          src += region[0];
        }
    }
  }
  void Done(const Status& s) override {
    ReadLanded(ev, q, s.ok() ? CL_COMPLETE : s.code());
    Drop(ev);
    Drop(q);
  }
};

}  // namespace rgpu::client
