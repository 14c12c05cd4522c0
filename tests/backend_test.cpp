// The OpenCL backend (server/backend/opencl_backend.cpp) on a real device (PoCL in CI): a
// kernel's argument memo, which spares Launch the clSetKernelArg calls for arguments the
// kernel already holds. It must keep them across references that come and go (the
// scheduler's hold on a held launch's kernel and buffers) and must never take a new object
// at a destroyed one's address for the old one. Also ArgBytes, the argument values those
// memos and every launch's snapshot hold.
#include <gtest/gtest.h>

#include <CL/cl.h>

#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "server/backend/backend.h"

namespace rgpu::server {
namespace {

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

bool Holds(const ArgBytes& b, const std::vector<uint8_t>& want) {
  return b.size() == want.size() && std::memcmp(b.data(), want.data(), want.size()) == 0;
}

// Values up to ArgBytes::kInline are kept inline and larger ones on the heap; copies, moves
// and resizes across that line keep every byte.
TEST(ArgBytesTest, CopiesMovesAndResizesKeepTheBytes) {
  for (size_t n : {size_t{0}, size_t{4}, ArgBytes::kInline, ArgBytes::kInline + 1, size_t{1000}}) {
    SCOPED_TRACE(n);
    const auto want = Pattern(n, 3);
    ArgBytes a;
    a.assign(want.data(), n);
    EXPECT_TRUE(Holds(a, want));
    ArgBytes copy = a;
    EXPECT_TRUE(Holds(copy, want));
    EXPECT_TRUE(copy == a);
    if (n > 0) {
      copy.data()[n - 1] ^= 1;  // a copy owns its bytes
      EXPECT_FALSE(copy == a);
      EXPECT_TRUE(Holds(a, want));
    }
    ArgBytes moved = std::move(a);
    EXPECT_TRUE(Holds(moved, want));
    ArgBytes assigned;
    assigned.assign("xy", 2);
    assigned = moved;
    EXPECT_TRUE(Holds(assigned, want));
  }
  // Growing across the inline size keeps the prefix and zero-fills; shrinking keeps it.
  const auto big = Pattern(300, 9);
  ArgBytes b;
  b.assign(big.data(), 16);
  b.resize(300);
  EXPECT_EQ(std::memcmp(b.data(), big.data(), 16), 0);
  for (size_t i = 16; i < 300; ++i) ASSERT_EQ(b.data()[i], 0) << i;
  b.assign(big.data(), 300);
  b.resize(8);
  EXPECT_TRUE(Holds(b, std::vector<uint8_t>(big.begin(), big.begin() + 8)));
  EXPECT_FALSE(ArgBytes() == b);
}

constexpr size_t kN = 64;

const char* kSource = R"CLC(
kernel void add(global int* out, global const int* in, int x) {
  size_t i = get_global_id(0);
  out[i] = in[i] + x;
}
)CLC";

class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto b = OpenOpenCLBackend("Portable");
    ASSERT_TRUE(b.ok()) << b.status().message();
    backend_ = std::move(*b);
    int dev = 0;
    auto c = backend_->CreateContext(std::span<const int>(&dev, 1));
    ASSERT_TRUE(c.ok());
    ctx_ = *c;
    auto q = backend_->CreateQueue(ctx_, 0, 0);
    ASSERT_TRUE(q.ok());
    queue_ = *q;
    auto p = backend_->CreateProgramWithSource(ctx_, kSource);
    ASSERT_TRUE(p.ok());
    program_ = *p;
    ASSERT_TRUE(backend_->BuildProgram(program_, std::span<const int>(&dev, 1), "").ok());
  }
  void TearDown() override {
    if (!backend_) return;
    if (program_) backend_->Release(proto::ObjType::Program, program_);
    if (queue_) backend_->Release(proto::ObjType::Queue, queue_);
    if (ctx_) backend_->Release(proto::ObjType::Context, ctx_);
  }

  BkKernel* Kernel() {
    auto k = backend_->CreateKernel(program_, "add");
    EXPECT_TRUE(k.ok());
    return k.ok() ? *k : nullptr;
  }
  // A buffer of kN ints, each `value`.
  BkMem* Buffer(int value) {
    std::vector<int> v(kN, value);
    auto m = backend_->CreateBuffer(ctx_, CL_MEM_READ_WRITE, kN * sizeof(int),
                                    {reinterpret_cast<const uint8_t*>(v.data()), kN * sizeof(int)});
    EXPECT_TRUE(m.ok());
    return m.ok() ? *m : nullptr;
  }
  // Launches add(out, in, x) and waits for it.
  void Add(BkKernel* k, BkMem* out, BkMem* in, int x) {
    std::vector<KernelArgValue> args(3);
    args[0].kind = args[1].kind = KernelArgValue::Kind::Mem;
    args[0].mem = out;
    args[1].mem = in;
    args[2].bytes.resize(sizeof(int));
    std::memcpy(args[2].bytes.data(), &x, sizeof(int));
    NDRange r;
    r.global[0] = kN;
    auto ev = backend_->Launch(queue_, k, args, r, {}, true);
    ASSERT_TRUE(ev.ok()) << ev.status().message();
    BkEvent* e = *ev;
    ASSERT_TRUE(backend_->Wait(std::span<BkEvent* const>(&e, 1)).ok());
    backend_->Release(proto::ObjType::Event, e);
  }
  std::vector<int> Contents(BkMem* m) {
    auto dst = std::make_shared<ByteVec>(kN * sizeof(int));
    auto ev = backend_->Read(queue_, m, 0, kN * sizeof(int), dst, {}, true, false);
    EXPECT_TRUE(ev.ok());
    std::vector<int> v(kN);
    std::memcpy(v.data(), dst->data(), kN * sizeof(int));
    return v;
  }

  std::unique_ptr<Backend> backend_;
  BkContext* ctx_ = nullptr;
  BkQueue* queue_ = nullptr;
  BkProgram* program_ = nullptr;
};

TEST_F(BackendTest, ArgumentsTheKernelHoldsAreNotSetAgain) {
  BkKernel* k = Kernel();
  BkMem* in = Buffer(5);
  BkMem* out = Buffer(0);
  const uint64_t before = backend_->KernelArgsSet();
  Add(k, out, in, 1);
  EXPECT_EQ(backend_->KernelArgsSet() - before, 3u);
  Add(k, out, in, 1);
  EXPECT_EQ(backend_->KernelArgsSet() - before, 3u) << "the same three arguments were set again";
  Add(k, out, in, 2);
  EXPECT_EQ(backend_->KernelArgsSet() - before, 4u) << "only the changed value is set";
  EXPECT_EQ(Contents(out), std::vector<int>(kN, 7));

  // What the scheduler does for a held launch: a reference to the kernel and to every buffer
  // it is given, dropped when the launch is done. The objects outlive it: nothing is set again.
  backend_->Retain(proto::ObjType::Kernel, k);
  backend_->Retain(proto::ObjType::Mem, in);
  backend_->Retain(proto::ObjType::Mem, out);
  Add(k, out, in, 2);
  backend_->Release(proto::ObjType::Mem, out);
  backend_->Release(proto::ObjType::Mem, in);
  backend_->Release(proto::ObjType::Kernel, k);
  Add(k, out, in, 2);
  EXPECT_EQ(backend_->KernelArgsSet() - before, 4u)
      << "references that came and went cost the kernel its arguments";

  // Another buffer is destroyed: the kernel's buffers may not be told apart from a new one at
  // its address, so they (and only they) are set again.
  backend_->Release(proto::ObjType::Mem, Buffer(1));
  Add(k, out, in, 2);
  EXPECT_EQ(backend_->KernelArgsSet() - before, 6u);
  EXPECT_EQ(Contents(out), std::vector<int>(kN, 7));
  backend_->Release(proto::ObjType::Kernel, k);
  backend_->Release(proto::ObjType::Mem, in);
  backend_->Release(proto::ObjType::Mem, out);
}

// Buffers made and destroyed in turn, one kernel: the allocator hands a destroyed buffer's
// address to a later one (checked below); each launch must still use the buffer it is given.
// PoCL looks a buffer up at launch, so it would give the right answer from a stale argument
// too; NVIDIA's driver need not: the count of arguments set says whether it was set again.
TEST_F(BackendTest, ANewBufferAtADestroyedOnesAddressIsSetAgain) {
  BkKernel* k = Kernel();
  BkMem* out = Buffer(0);
  std::set<BkMem*> seen;
  int reused = 0;
  for (int i = 0; i < 50; ++i) {
    BkMem* in = Buffer(100 * i);
    if (!seen.insert(in).second) ++reused;
    const uint64_t before = backend_->KernelArgsSet();
    Add(k, out, in, i);
    // Every argument: a buffer was destroyed since the last launch (from the second on).
    EXPECT_EQ(backend_->KernelArgsSet() - before, 3u) << "launch " << i;
    ASSERT_EQ(Contents(out), std::vector<int>(kN, 101 * i)) << "launch " << i;
    backend_->Release(proto::ObjType::Mem, in);
  }
  EXPECT_GT(reused, 0) << "no address was reused: this test checks nothing on this platform";
  backend_->Release(proto::ObjType::Kernel, k);
  backend_->Release(proto::ObjType::Mem, out);
}

// A kernel's last release forgets what it was given: a new kernel at its address starts
// with no arguments set, whatever the old one held.
TEST_F(BackendTest, ANewKernelAtAReleasedOnesAddressSetsEveryArgument) {
  BkMem* in = Buffer(3);
  BkMem* out = Buffer(0);
  std::set<BkKernel*> seen;
  int reused = 0;
  for (int i = 0; i < 20; ++i) {
    BkKernel* k = Kernel();
    if (!seen.insert(k).second) ++reused;
    const uint64_t before = backend_->KernelArgsSet();
    Add(k, out, in, i);
    EXPECT_EQ(backend_->KernelArgsSet() - before, 3u) << "kernel " << i;
    ASSERT_EQ(Contents(out), std::vector<int>(kN, 3 + i));
    // An extra reference and its release first (as a held launch's): the kernel lives on.
    backend_->Retain(proto::ObjType::Kernel, k);
    backend_->Release(proto::ObjType::Kernel, k);
    Add(k, out, in, i);
    EXPECT_EQ(backend_->KernelArgsSet() - before, 3u) << "kernel " << i;
    backend_->Release(proto::ObjType::Kernel, k);
  }
  EXPECT_GT(reused, 0) << "no address was reused: this test checks nothing on this platform";
  backend_->Release(proto::ObjType::Mem, in);
  backend_->Release(proto::ObjType::Mem, out);
}

}  // namespace
}  // namespace rgpu::server
