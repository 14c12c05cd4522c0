// Images and samplers (issue 11, outcome 3): the same cases run natively on PoCL
// (RGPU_TEST_PLATFORM=Portable) and through rgpud (=rgpu, over a Unix socket and TCP). Each
// case also checks its own expectations; in the rgpu runs the native platform is visible too
// (RGPU_TEST_NATIVE_ICD), and every result, pixels and error codes alike, must equal the
// device's own bit for bit.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "native_icd.h"

namespace {

cl_platform_id FindPlatform(const std::string& like) {
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS) return nullptr;
  std::vector<cl_platform_id> ps(n);
  clGetPlatformIDs(n, ps.data(), nullptr);
  for (auto p : ps) {
    char name[256] = {0};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(name) - 1, name, nullptr);
    if (std::string(name).find(like) != std::string::npos) return p;
  }
  return nullptr;
}

struct Dev {
  cl_device_id device = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  bool Open(const std::string& like) {
    cl_platform_id p = FindPlatform(like);
    if (!p || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) return false;
    cl_int err;
    ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return false;
    q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
    return err == CL_SUCCESS;
  }
  ~Dev() {
    if (q) clReleaseCommandQueue(q);
    if (ctx) clReleaseContext(ctx);
  }
  cl_kernel Kernel(const char* src, const char* name) {
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    EXPECT_EQ(clBuildProgram(p, 1, &device, "", nullptr, nullptr), CL_SUCCESS);
    cl_kernel k = clCreateKernel(p, name, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    clReleaseProgram(p);
    return k;
  }
};

// What a case produced: bytes and codes, compared whole between the platforms.
struct Outcome {
  std::vector<uint8_t> bytes;
  std::vector<cl_int> codes;
  void Add(const void* p, size_t n) {
    bytes.insert(bytes.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  }
  template <typename T>
  void Add(const std::vector<T>& v) { Add(v.data(), v.size() * sizeof(T)); }
};

using Case = std::function<Outcome(Dev&)>;

class Images : public ::testing::Test {
 protected:
  void SetUp() override {
    rgpu::test::AddNativeIcd("img");
    const char* want = std::getenv("RGPU_TEST_PLATFORM");
    tested_ = want ? want : "rgpu";
    ASSERT_TRUE(dev_.Open(tested_)) << "no usable platform named like " << tested_;
  }
  // Runs `c` on the platform under test and, where it is another one, on the device itself.
  Outcome Run(const Case& c) {
    Outcome got = c(dev_);
    // The device rgpud serves: PoCL in CI, RGPU_TEST_NATIVE_PLATFORM on a GPU host.
    const char* np = std::getenv("RGPU_TEST_NATIVE_PLATFORM");
    const std::string native_name = np && *np ? np : "Portable";
    if (tested_ != native_name && std::getenv("RGPU_TEST_NATIVE_ICD")) {
      Dev native;
      if (native.Open(native_name)) {
        Outcome want = c(native);
        EXPECT_EQ(got.codes, want.codes) << "error codes differ from the device's";
        EXPECT_TRUE(got.bytes == want.bytes) << "results differ from the device's ("
                                             << got.bytes.size() << " vs " << want.bytes.size() << " bytes)";
      } else {
        ADD_FAILURE() << "native platform not visible";
      }
    }
    return got;
  }
  std::string tested_;
  Dev dev_;
};

cl_mem Image(Dev& d, cl_mem_flags flags, cl_channel_order order, cl_channel_type type,
             cl_mem_object_type kind, size_t w, size_t h, size_t depth, size_t array,
             void* host = nullptr, size_t row_pitch = 0, size_t slice_pitch = 0,
             cl_mem buffer = nullptr, cl_int* err_out = nullptr) {
  cl_image_format f{order, type};
  cl_image_desc desc{};
  desc.image_type = kind;
  desc.image_width = w;
  desc.image_height = h;
  desc.image_depth = depth;
  desc.image_array_size = array;
  desc.image_row_pitch = row_pitch;
  desc.image_slice_pitch = slice_pitch;
  desc.mem_object = buffer;
  cl_int err;
  cl_mem m = clCreateImage(d.ctx, flags, &f, &desc, host, &err);
  if (err_out) *err_out = err;
  else EXPECT_EQ(err, CL_SUCCESS);
  return m;
}

std::vector<uint8_t> Pattern(size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return v;
}

TEST_F(Images, DeviceReportsImageSupportAndFormats) {
  Outcome o = Run([](Dev& d) {
    Outcome o;
    cl_bool support = CL_FALSE;
    clGetDeviceInfo(d.device, CL_DEVICE_IMAGE_SUPPORT, sizeof(support), &support, nullptr);
    o.codes.push_back(support);
    for (cl_device_info p : {CL_DEVICE_MAX_READ_IMAGE_ARGS, CL_DEVICE_MAX_WRITE_IMAGE_ARGS,
                             CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, CL_DEVICE_MAX_SAMPLERS,
                             CL_DEVICE_IMAGE_PITCH_ALIGNMENT, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT}) {
      cl_uint v = 0;
      o.codes.push_back(clGetDeviceInfo(d.device, p, sizeof(v), &v, nullptr));
      o.codes.push_back(static_cast<cl_int>(v));
    }
    for (cl_device_info p : {CL_DEVICE_IMAGE2D_MAX_WIDTH, CL_DEVICE_IMAGE3D_MAX_DEPTH,
                             CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE}) {
      size_t v = 0;
      clGetDeviceInfo(d.device, p, sizeof(v), &v, nullptr);
      o.Add(&v, sizeof(v));
    }
    for (cl_mem_object_type t : {CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D,
                                 CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_MEM_OBJECT_IMAGE2D_ARRAY}) {
      for (cl_mem_flags f : {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, CL_MEM_KERNEL_READ_AND_WRITE}) {
        cl_uint n = 0;
        o.codes.push_back(clGetSupportedImageFormats(d.ctx, f, t, 0, nullptr, &n));
        std::vector<cl_image_format> fs(n);
        if (n) clGetSupportedImageFormats(d.ctx, f, t, n, fs.data(), nullptr);
        o.Add(fs);
      }
    }
    // CL_INVALID_VALUE for an unknown image type
    cl_uint n = 0;
    o.codes.push_back(clGetSupportedImageFormats(d.ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_BUFFER, 0, nullptr, &n));
    return o;
  });
  EXPECT_EQ(o.codes[0], CL_TRUE);
  EXPECT_GT(o.bytes.size(), 64u);
}

// A 2D RGBA8 image written with a padded host row pitch and read back with another.
TEST_F(Images, RoundTrip2DWithPitches) {
  Outcome o = Run([](Dev& d) {
    Outcome o;
    const size_t w = 17, h = 13, in_pitch = w * 4 + 12, out_pitch = w * 4 + 4;
    auto src = Pattern(in_pitch * h, 1);
    cl_mem im = Image(d, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
    size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
    o.codes.push_back(clEnqueueWriteImage(d.q, im, CL_TRUE, origin, region, in_pitch, 0, src.data(), 0, nullptr, nullptr));
    std::vector<uint8_t> out(out_pitch * h, 0xee);
    o.codes.push_back(clEnqueueReadImage(d.q, im, CL_TRUE, origin, region, out_pitch, 0, out.data(), 0, nullptr, nullptr));
    for (size_t y = 0; y < h; ++y)
      EXPECT_EQ(0, std::memcmp(out.data() + y * out_pitch, src.data() + y * in_pitch, w * 4)) << "row " << y;
    // A sub-region at an origin.
    size_t o2[3] = {3, 5, 0}, r2[3] = {4, 2, 1};
    std::vector<uint8_t> part(4 * 4 * 2);
    o.codes.push_back(clEnqueueReadImage(d.q, im, CL_TRUE, o2, r2, 0, 0, part.data(), 0, nullptr, nullptr));
    EXPECT_EQ(0, std::memcmp(part.data(), src.data() + 5 * in_pitch + 12, 16));
    o.Add(out);
    o.Add(part);
    size_t v[4];
    clGetImageInfo(im, CL_IMAGE_ELEMENT_SIZE, sizeof(size_t), &v[0], nullptr);
    clGetImageInfo(im, CL_IMAGE_ROW_PITCH, sizeof(size_t), &v[1], nullptr);
    clGetImageInfo(im, CL_IMAGE_HEIGHT, sizeof(size_t), &v[2], nullptr);
    clGetMemObjectInfo(im, CL_MEM_SIZE, sizeof(size_t), &v[3], nullptr);
    o.Add(v, sizeof(v));
    cl_mem_object_type t;
    clGetMemObjectInfo(im, CL_MEM_TYPE, sizeof(t), &t, nullptr);
    o.codes.push_back(static_cast<cl_int>(t));
    clReleaseMemObject(im);
    return o;
  });
  EXPECT_EQ(o.codes.back(), static_cast<cl_int>(CL_MEM_OBJECT_IMAGE2D));
}

// A 3D float image created from host data with row and slice pitches (COPY_HOST_PTR).
TEST_F(Images, RoundTrip3DFloatFromHost) {
  Run([](Dev& d) {
    Outcome o;
    const size_t w = 5, h = 4, depth = 3, row = w * 16 + 16, slice = row * (h + 1);
    std::vector<float> host(slice * depth / 4);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.25f - 7.0f;
    cl_mem im = Image(d, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CL_RGBA, CL_FLOAT,
                      CL_MEM_OBJECT_IMAGE3D, w, h, depth, 0, host.data(), row, slice);
    size_t origin[3] = {0, 0, 0}, region[3] = {w, h, depth};
    std::vector<float> out(w * h * depth * 4);
    o.codes.push_back(clEnqueueReadImage(d.q, im, CL_TRUE, origin, region, 0, 0, out.data(), 0, nullptr, nullptr));
    for (size_t z = 0; z < depth; ++z)
      for (size_t y = 0; y < h; ++y)
        EXPECT_EQ(0, std::memcmp(&out[((z * h) + y) * w * 4],
                                 reinterpret_cast<const uint8_t*>(host.data()) + z * slice + y * row, w * 16));
    o.Add(out);
    clReleaseMemObject(im);
    return o;
  });
}

const char* kSampling = R"CLC(
const sampler_t declared = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR;
__kernel void with_host_sampler(read_only image2d_t im, sampler_t s, __global float4* out) {
  int i = get_global_id(0), j = get_global_id(1);
  float2 c = (float2)((i + 0.3f) / 6.0f, (j * 1.7f - 0.4f) / 5.0f);
  out[j * get_global_size(0) + i] = read_imagef(im, s, c);
}
__kernel void with_declared_sampler(read_only image2d_t im, __global float4* out) {
  int i = get_global_id(0), j = get_global_id(1);
  float2 c = (float2)((i - 0.6f) / 6.0f, (j + 0.45f) / 5.0f);
  out[j * get_global_size(0) + i] = read_imagef(im, declared, c);
}
__kernel void invert(read_only image2d_t in, write_only image2d_t out) {
  int2 p = (int2)(get_global_id(0), get_global_id(1));
  write_imagef(out, p, (float4)(1.0f) - read_imagef(in, p));
}
)CLC";

// Linear filtering with a sampler from the host and one declared in the source, and a kernel
// writing an image: bit for bit what the device computes.
TEST_F(Images, KernelsSampleAndWriteImages) {
  Run([](Dev& d) {
    Outcome o;
    const size_t w = 6, h = 5, gw = 9, gh = 7;
    auto px = Pattern(w * h * 4, 3);
    cl_mem im = Image(d, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, CL_RGBA, CL_UNORM_INT8,
                      CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0, px.data());
    cl_mem out_img = Image(d, CL_MEM_WRITE_ONLY, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
    cl_int err;
    cl_mem out = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE, gw * gh * 16, nullptr, &err);
    cl_sampler s = clCreateSampler(d.ctx, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR, &err);
    o.codes.push_back(err);
    cl_kernel k1 = d.Kernel(kSampling, "with_host_sampler");
    cl_kernel k2 = d.Kernel(kSampling, "with_declared_sampler");
    cl_kernel k3 = d.Kernel(kSampling, "invert");
    size_t g[2] = {gw, gh}, gi[2] = {w, h};
    o.codes.push_back(clSetKernelArg(k1, 0, sizeof(cl_mem), &im));
    o.codes.push_back(clSetKernelArg(k1, 1, sizeof(cl_sampler), &s));
    o.codes.push_back(clSetKernelArg(k1, 2, sizeof(cl_mem), &out));
    o.codes.push_back(clEnqueueNDRangeKernel(d.q, k1, 2, nullptr, g, nullptr, 0, nullptr, nullptr));
    std::vector<float> r1(gw * gh * 4), r2(gw * gh * 4);
    o.codes.push_back(clEnqueueReadBuffer(d.q, out, CL_TRUE, 0, r1.size() * 4, r1.data(), 0, nullptr, nullptr));
    o.codes.push_back(clSetKernelArg(k2, 0, sizeof(cl_mem), &im));
    o.codes.push_back(clSetKernelArg(k2, 1, sizeof(cl_mem), &out));
    o.codes.push_back(clEnqueueNDRangeKernel(d.q, k2, 2, nullptr, g, nullptr, 0, nullptr, nullptr));
    o.codes.push_back(clEnqueueReadBuffer(d.q, out, CL_TRUE, 0, r2.size() * 4, r2.data(), 0, nullptr, nullptr));
    o.codes.push_back(clSetKernelArg(k3, 0, sizeof(cl_mem), &im));
    o.codes.push_back(clSetKernelArg(k3, 1, sizeof(cl_mem), &out_img));
    o.codes.push_back(clEnqueueNDRangeKernel(d.q, k3, 2, nullptr, gi, nullptr, 0, nullptr, nullptr));
    std::vector<uint8_t> inv(w * h * 4);
    size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
    o.codes.push_back(clEnqueueReadImage(d.q, out_img, CL_TRUE, origin, region, 0, 0, inv.data(), 0, nullptr, nullptr));
    for (size_t i = 0; i < inv.size(); ++i) EXPECT_EQ(inv[i], 255 - px[i]) << i;
    // Linear filtering mixes neighbours: values stay within [0, 1] and are not all equal.
    for (float v : r1) EXPECT_TRUE(v >= 0.0f && v <= 1.0f);
    EXPECT_NE(r1, r2);
    o.Add(r1);
    o.Add(r2);
    o.Add(inv);
    cl_uint v[3];
    clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof(cl_bool), &v[0], nullptr);
    clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof(cl_uint), &v[1], nullptr);
    clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof(cl_uint), &v[2], nullptr);
    o.Add(v, sizeof(v));
    o.codes.push_back(clRetainSampler(s));
    o.codes.push_back(clReleaseSampler(s));
    o.codes.push_back(clReleaseSampler(s));
    for (cl_kernel k : {k1, k2, k3}) clReleaseKernel(k);
    for (cl_mem m : {im, out_img, out}) clReleaseMemObject(m);
    return o;
  });
}

// Copies between images and buffers, image to image, and fills.
TEST_F(Images, CopyAndFill) {
  Run([](Dev& d) {
    Outcome o;
    const size_t w = 8, h = 6;
    auto px = Pattern(w * h * 4, 5);
    cl_int err;
    cl_mem buf = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, px.size(), px.data(), &err);
    cl_mem a = Image(d, CL_MEM_READ_WRITE, CL_RGBA, CL_UNSIGNED_INT8, CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
    cl_mem b = Image(d, CL_MEM_READ_WRITE, CL_RGBA, CL_UNSIGNED_INT8, CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
    size_t zero[3] = {0, 0, 0}, all[3] = {w, h, 1};
    o.codes.push_back(clEnqueueCopyBufferToImage(d.q, buf, a, 0, zero, all, 0, nullptr, nullptr));
    size_t so[3] = {1, 1, 0}, dso[3] = {2, 0, 0}, r[3] = {5, 4, 1};
    o.codes.push_back(clEnqueueCopyImage(d.q, a, b, zero, zero, all, 0, nullptr, nullptr));
    o.codes.push_back(clEnqueueCopyImage(d.q, a, b, so, dso, r, 0, nullptr, nullptr));
    cl_uint color[4] = {9, 8, 7, 6};
    size_t fo[3] = {6, 4, 0}, fr[3] = {2, 2, 1};
    o.codes.push_back(clEnqueueFillImage(d.q, b, color, fo, fr, 0, nullptr, nullptr));
    cl_mem out = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE, px.size() + 16, nullptr, &err);
    o.codes.push_back(clEnqueueCopyImageToBuffer(d.q, b, out, zero, all, 16, 0, nullptr, nullptr));
    std::vector<uint8_t> got(px.size());
    o.codes.push_back(clEnqueueReadBuffer(d.q, out, CL_TRUE, 16, got.size(), got.data(), 0, nullptr, nullptr));
    EXPECT_EQ(got[(7 * 4) + 5 * w * 4], 9);  // filled
    EXPECT_EQ(0, std::memcmp(got.data(), px.data(), 8));  // untouched by the second copy
    o.Add(got);
    // Out of range: the destination leaves the buffer.
    o.codes.push_back(clEnqueueCopyImageToBuffer(d.q, a, out, zero, all, 64, 0, nullptr, nullptr));
    for (cl_mem m : {buf, a, b, out}) clReleaseMemObject(m);
    return o;
  });
}

// Map for writing, unmap (written back), map for reading.
TEST_F(Images, MapAndUnmap) {
  Run([](Dev& d) {
    Outcome o;
    const size_t w = 7, h = 5;
    cl_mem im = Image(d, CL_MEM_READ_WRITE, CL_R, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0);
    size_t origin[3] = {1, 2, 0}, region[3] = {4, 3, 1}, zero[3] = {0, 0, 0}, all[3] = {w, h, 1};
    float fill[4] = {-1.0f, 0, 0, 0};
    o.codes.push_back(clEnqueueFillImage(d.q, im, fill, zero, all, 0, nullptr, nullptr));
    size_t rp = 0, sp = 0;
    cl_int err;
    auto* p = static_cast<uint8_t*>(clEnqueueMapImage(d.q, im, CL_TRUE, CL_MAP_WRITE, origin, region,
                                                      &rp, &sp, 0, nullptr, nullptr, &err));
    o.codes.push_back(err);
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 4; ++x) reinterpret_cast<float*>(p + y * rp)[x] = float(y * 10 + x);
    o.codes.push_back(clEnqueueUnmapMemObject(d.q, im, p, 0, nullptr, nullptr));
    std::vector<float> all_px(w * h);
    o.codes.push_back(clEnqueueReadImage(d.q, im, CL_TRUE, zero, all, 0, 0, all_px.data(), 0, nullptr, nullptr));
    EXPECT_EQ(all_px[2 * w + 1], 0.0f);
    EXPECT_EQ(all_px[4 * w + 4], 23.0f);
    EXPECT_EQ(all_px[0], -1.0f);
    o.Add(all_px);
    p = static_cast<uint8_t*>(clEnqueueMapImage(d.q, im, CL_TRUE, CL_MAP_READ, zero, all, &rp, &sp, 0,
                                                nullptr, nullptr, &err));
    o.codes.push_back(err);
    for (size_t y = 0; y < h; ++y) EXPECT_EQ(0, std::memcmp(p + y * rp, &all_px[y * w], w * 4));
    // The spec calls CL_MEM_MAP_COUNT stale as soon as it is returned: natively PoCL gave 2 here
    // in one CI run (the earlier unmap not yet counted down) and 1 in others, so the count is
    // checked for this live map, not compared with the device's.
    cl_uint maps = 0;
    o.codes.push_back(clGetMemObjectInfo(im, CL_MEM_MAP_COUNT, sizeof(maps), &maps, nullptr));
    EXPECT_GE(maps, 1u);
    o.codes.push_back(clEnqueueUnmapMemObject(d.q, im, p, 0, nullptr, nullptr));
    o.codes.push_back(clFinish(d.q));
    clReleaseMemObject(im);
    return o;
  });
}

const char* kArrays = R"CLC(
__kernel void layers(read_only image2d_array_t a, read_only image1d_array_t b,
                     read_only image1d_buffer_t c, __global uint4* out) {
  int i = get_global_id(0);
  out[i] = read_imageui(a, (int4)(i % 3, 1, 2, 0)) + read_imageui(b, (int2)(i % 4, 1)) +
           read_imageui(c, i);
}
)CLC";

// 2D and 1D image arrays and a 1D image made from a buffer, written, read and used by a kernel.
TEST_F(Images, ArraysAndImageBuffers) {
  Run([](Dev& d) {
    Outcome o;
    auto a_px = Pattern(3 * 2 * 3 * 4, 7), b_px = Pattern(4 * 2 * 4, 8), c_px = Pattern(16 * 4, 9);
    cl_mem a = Image(d, CL_MEM_READ_ONLY, CL_RGBA, CL_UNSIGNED_INT8, CL_MEM_OBJECT_IMAGE2D_ARRAY, 3, 2, 0, 3);
    cl_mem b = Image(d, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, CL_RGBA, CL_UNSIGNED_INT8,
                     CL_MEM_OBJECT_IMAGE1D_ARRAY, 4, 0, 0, 2, b_px.data());
    cl_int err;
    cl_mem cbuf = clCreateBuffer(d.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, c_px.size(), c_px.data(), &err);
    cl_mem c = Image(d, CL_MEM_READ_ONLY, CL_RGBA, CL_UNSIGNED_INT8, CL_MEM_OBJECT_IMAGE1D_BUFFER, 16, 0, 0, 0,
                     nullptr, 0, 0, cbuf);
    size_t zero[3] = {0, 0, 0}, ra[3] = {3, 2, 3};
    o.codes.push_back(clEnqueueWriteImage(d.q, a, CL_FALSE, zero, ra, 0, 0, a_px.data(), 0, nullptr, nullptr));
    std::vector<uint8_t> back(a_px.size()), bb(b_px.size());
    o.codes.push_back(clEnqueueReadImage(d.q, a, CL_TRUE, zero, ra, 0, 0, back.data(), 0, nullptr, nullptr));
    EXPECT_EQ(back, a_px);
    size_t rb[3] = {4, 2, 1};
    o.codes.push_back(clEnqueueReadImage(d.q, b, CL_TRUE, zero, rb, 0, 0, bb.data(), 0, nullptr, nullptr));
    EXPECT_EQ(bb, b_px);
    cl_kernel k = d.Kernel(kArrays, "layers");
    cl_mem out = clCreateBuffer(d.ctx, CL_MEM_WRITE_ONLY, 16 * 16, nullptr, &err);
    for (cl_uint i = 0; i < 4; ++i) {
      cl_mem v[4] = {a, b, c, out};
      o.codes.push_back(clSetKernelArg(k, i, sizeof(cl_mem), &v[i]));
    }
    size_t g = 16;
    o.codes.push_back(clEnqueueNDRangeKernel(d.q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
    std::vector<cl_uint> res(16 * 4);
    o.codes.push_back(clEnqueueReadBuffer(d.q, out, CL_TRUE, 0, res.size() * 4, res.data(), 0, nullptr, nullptr));
    EXPECT_EQ(res[0], a_px[(2 * 2 + 1) * 3 * 4] + b_px[4 * 4] + c_px[0]);
    o.Add(res);
    cl_mem assoc = nullptr, ib = nullptr;
    clGetMemObjectInfo(c, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof(assoc), &assoc, nullptr);
    clGetImageInfo(c, CL_IMAGE_BUFFER, sizeof(ib), &ib, nullptr);
    EXPECT_EQ(assoc, cbuf);
    EXPECT_EQ(ib, cbuf);
    size_t info[3];
    clGetImageInfo(b, CL_IMAGE_ARRAY_SIZE, sizeof(size_t), &info[0], nullptr);
    clGetImageInfo(b, CL_IMAGE_HEIGHT, sizeof(size_t), &info[1], nullptr);
    clGetImageInfo(a, CL_IMAGE_DEPTH, sizeof(size_t), &info[2], nullptr);
    o.Add(info, sizeof(info));
    clReleaseKernel(k);
    for (cl_mem m : {c, a, b, cbuf, out}) clReleaseMemObject(m);
    return o;
  });
}

// Wrong handles and bad arguments: the same error codes as the device.
TEST_F(Images, ErrorsAreTheDevices) {
  Outcome o = Run([](Dev& d) {
    Outcome o;
    cl_int err;
    cl_mem buf = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE, 256, nullptr, &err);
    cl_mem im = Image(d, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
    size_t zero[3] = {0, 0, 0}, one[3] = {1, 1, 1}, big[3] = {5, 1, 1}, far[3] = {0, 4, 0};
    uint8_t host[256];
    // A buffer where an image is expected, and the reverse.
    o.codes.push_back(clEnqueueReadImage(d.q, buf, CL_TRUE, zero, one, 0, 0, host, 0, nullptr, nullptr));
    o.codes.push_back(clEnqueueCopyBufferToImage(d.q, im, im, 0, zero, one, 0, nullptr, nullptr));
    // Out of range origins and regions, a NULL host pointer, a zero region.
    o.codes.push_back(clEnqueueReadImage(d.q, im, CL_TRUE, zero, big, 0, 0, host, 0, nullptr, nullptr));
    o.codes.push_back(clEnqueueWriteImage(d.q, im, CL_TRUE, far, one, 0, 0, host, 0, nullptr, nullptr));
    o.codes.push_back(clEnqueueReadImage(d.q, im, CL_TRUE, zero, one, 0, 0, nullptr, 0, nullptr, nullptr));
    size_t none[3] = {0, 1, 1};
    o.codes.push_back(clEnqueueReadImage(d.q, im, CL_TRUE, zero, none, 0, 0, host, 0, nullptr, nullptr));
    // Bad formats and descriptors, a huge image.
    cl_mem m;
    // (an unknown channel type and a buffer type: ImageFormatsRgpuCannotSize, below)
    m = Image(d, 0, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, nullptr, 64, 0, nullptr, &err);
    o.codes.push_back(err);
    m = Image(d, 0, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, size_t{1} << 30, size_t{1} << 30, 0, 0,
              nullptr, 0, 0, nullptr, &err);
    o.codes.push_back(err);
    m = Image(d, CL_MEM_COPY_HOST_PTR, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, nullptr,
              0, 0, nullptr, &err);
    o.codes.push_back(err);
    if (m) clReleaseMemObject(m);
    // Bad samplers.
    cl_sampler s = nullptr;
    cl_sampler_properties twice[] = {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, CL_SAMPLER_FILTER_MODE,
                                     CL_FILTER_NEAREST, 0};
    s = clCreateSamplerWithProperties(d.ctx, twice, &err);
    o.codes.push_back(err);
    o.codes.push_back(clReleaseSampler(nullptr));
    o.codes.push_back(clGetSamplerInfo(nullptr, CL_SAMPLER_FILTER_MODE, 0, nullptr, nullptr));
    // Format mismatch between copied images.
    cl_mem f = Image(d, CL_MEM_READ_WRITE, CL_R, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
    o.codes.push_back(clEnqueueCopyImage(d.q, im, f, zero, zero, one, 0, nullptr, nullptr));
    o.codes.push_back(clFinish(d.q));
    for (cl_mem x : {buf, im, f}) clReleaseMemObject(x);
    (void)s;
    return o;
  });
  EXPECT_EQ(o.codes[0], CL_INVALID_MEM_OBJECT);
}

// Formats and types rgpu does not know are refused by rgpud with the specification's codes
// before they reach the driver: NVIDIA's (580.x) died of SIGFPE on these, natively and
// inside rgpud. PoCL answers CL_INVALID_OPERATION and CL_INVALID_VALUE instead.
TEST_F(Images, ImageFormatsRgpuCannotSize) {
  if (tested_ != "rgpu") GTEST_SKIP() << "rgpu's own checks";
  cl_int err = CL_SUCCESS;
  cl_mem m = Image(dev_, 0, CL_RGBA, 0x1234, CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, nullptr, 0, 0, nullptr, &err);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  m = Image(dev_, 0, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_BUFFER, 4, 4, 0, 0, nullptr, 0, 0, nullptr, &err);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_DESCRIPTOR);
  // The session goes on: a good image still works.
  cl_mem ok = Image(dev_, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
  EXPECT_NE(ok, nullptr);
  if (ok) clReleaseMemObject(ok);
}

// Where PoCL does not check (it takes any 8 bytes as an image or a sampler and would crash
// on them at launch), rgpu refuses with the specification's error instead.
TEST_F(Images, ObjectArgumentsTakeObjectsOfTheirKind) {
  if (tested_ != "rgpu") GTEST_SKIP() << "rgpu's own checks";
  cl_int err;
  cl_kernel k = dev_.Kernel(kSampling, "with_host_sampler");
  cl_mem buf = clCreateBuffer(dev_.ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
  cl_mem im = Image(dev_, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
  cl_sampler s = clCreateSampler(dev_.ctx, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR, &err);
  uint64_t garbage = 0x4141414141414141ull;
  EXPECT_EQ(clSetKernelArg(k, 0, sizeof(cl_mem), &buf), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(clSetKernelArg(k, 0, sizeof(cl_mem), &s), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(clSetKernelArg(k, 0, 8, &garbage), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(clSetKernelArg(k, 1, sizeof(cl_sampler), &buf), CL_INVALID_SAMPLER);
  EXPECT_EQ(clSetKernelArg(k, 2, sizeof(cl_mem), &im), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(clSetKernelArg(k, 0, sizeof(cl_mem), &im), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 1, sizeof(cl_sampler), &s), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 2, sizeof(cl_mem), &buf), CL_SUCCESS);
  // PoCL answers these with CL_SUCCESS (and would read out of bounds, or later misuse the
  // object); the specification's errors keep rgpud's device memory safe.
  size_t v, zero[3] = {0, 0, 0}, so[3] = {1, 1, 0}, bad[3] = {4, 1, 1};
  EXPECT_EQ(clGetImageInfo(buf, CL_IMAGE_WIDTH, sizeof(v), &v, nullptr), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(clEnqueueCopyImage(dev_.q, im, im, so, zero, bad, 0, nullptr, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(clCreateSampler(dev_.ctx, CL_TRUE, 0x9999, CL_FILTER_LINEAR, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  size_t g[2] = {2, 2};
  EXPECT_EQ(clEnqueueNDRangeKernel(dev_.q, k, 2, nullptr, g, nullptr, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(clFinish(dev_.q), CL_SUCCESS);
  clReleaseKernel(k);
  clReleaseSampler(s);
  clReleaseMemObject(im);
  clReleaseMemObject(buf);
}

}  // namespace
