// Tests of the kernel slicer (server/scheduler/slicer.h).
//
// Part one checks the rewriter and the planner without a device. Part two runs real kernels on
// the first OpenCL device found through the ICD loader (PoCL's CPU device in CI): each launch
// of the original program, unsliced, must produce exactly the bytes that the slices of the
// rewritten program produce. One test shows that naive slicing does not, so that a broken
// rewrite could not pass unnoticed.

#include "server/scheduler/slicer.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <random>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace rgpu::slicer {
namespace {

// ---------------------------------------------------------------------------------------------
// The program the device tests run. Where each work-item writes is computed from get_global_id
// and the launch passed as plain arguments, never from the built-ins under test.

constexpr const char* kProgram = R"CLC(
// Built-ins reached through a visible macro, a prototype, and helpers calling helpers.
#define GROUP(d) get_group_id(d)
#define PROBE_SLOTS 20
#define ITEM_SLOTS 8

size_t group_of(uint d);

size_t group_of(uint d) { return GROUP(d); }
size_t groups_in(uint d) { return get_num_groups(d); }
size_t flat_group(void) {
  return (group_of(2) * groups_in(1) + group_of(1)) * groups_in(0) + group_of(0);
}

// Uses only get_global_id: needs no rewrite.
size_t slot(ulong4 origin, ulong4 size) {
  return ((get_global_id(2) - origin.z) * size.y + (get_global_id(1) - origin.y)) * size.x +
         (get_global_id(0) - origin.x);
}

kernel void probe(global ulong* out, ulong4 origin, ulong4 size) {
  global ulong* o = out + slot(origin, size) * PROBE_SLOTS;
  for (uint d = 0; d < 3; ++d) {  // a dimension known only at run time
    o[d] = get_group_id(d);
    o[3 + d] = get_num_groups(d);
    o[6 + d] = get_global_size(d);
    o[9 + d] = get_global_offset(d);
    o[12 + d] = group_of(d);
  }
  o[15] = get_global_linear_id();
  o[16] = flat_group();
  // Dimensions past work_dim and past 3 have fixed answers.
  o[17] = get_group_id(3) + 10 * get_num_groups(7) + 100 * get_global_size(4) +
          1000 * get_global_offset(5) + 10000 * get_group_id(2) + 100000 * get_num_groups(2);
  o[18] = get_local_id(0) + 1000 * get_local_id(1) + 1000000 * get_local_id(2);
  o[19] = get_work_dim() + 10 * get_local_size(0) + 10000 * get_local_size(1);
}

// No work-group built-ins: sliceable with an implicit local size.
kernel void probe_items(global ulong* out, ulong4 origin, ulong4 size) {
  global ulong* o = out + slot(origin, size) * ITEM_SLOTS;
  for (uint d = 0; d < 3; ++d) {
    o[d] = get_global_size(d);
    o[3 + d] = get_global_offset(d);
  }
  o[6] = get_global_linear_id();
  o[7] = get_global_id(0) + 1000 * get_global_id(1) + 1000000 * get_global_id(2);
}

// The classic victim of naive slicing: per-group partial sums indexed by get_group_id.
kernel void group_sums(global const float* in, global float* partial, local float* scratch) {
  const size_t lid = get_local_id(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t step = get_local_size(0) / 2; step > 0; step /= 2) {
    if (lid < step) scratch[lid] += scratch[lid + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = scratch[0] + (float)get_num_groups(0);
}

// The seeds/001 workload: a tiled matrix multiply placed by group ids.
#define TS 4
__attribute__((reqd_work_group_size(TS, TS, 1)))
__kernel void matmul_tiled(const int n, __global const float* A, __global const float* B,
                           __global float* C) {
  const int row = get_local_id(1), col = get_local_id(0);
  const int grow = TS * get_group_id(1) + row, gcol = TS * get_group_id(0) + col;
  __local float As[TS][TS], Bs[TS][TS];
  float acc = 0.0f;
  for (int t = 0; t < n / TS; ++t) {
    As[row][col] = A[grow * n + t * TS + col];
    Bs[row][col] = B[(t * TS + row) * n + gcol];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; ++k) acc += As[row][k] * Bs[k][col];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[grow * n + gcol] = acc;
}

// A grid-stride loop over n elements.
kernel void grid_stride(global uint* out, uint n) {
  for (size_t i = get_global_id(0) - get_global_offset(0); i < n; i += get_global_size(0)) {
    out[i] = (uint)(i * 3 + get_global_size(0));
  }
}
)CLC";

// get_global_linear_id is OpenCL C 2.0.
constexpr const char* kBuildOptions = "-cl-std=CL3.0";

constexpr size_t kProbeSlots = 20;
constexpr size_t kItemSlots = 8;

// ---------------------------------------------------------------------------------------------
// Rewriter.

std::string Rewritten(const std::string& source, const std::string& options = "") {
  Result<RewrittenProgram> r = RewriteForSlicing(source, options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value().source : std::string();
}

TEST(SlicerRewrite, FindsKernelsArgumentsAndHelpers) {
  Result<RewrittenProgram> r = RewriteForSlicing(kProgram, kBuildOptions);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const RewrittenProgram& p = r.value();
  ASSERT_EQ(p.kernels.size(), 5u);
  EXPECT_EQ(p.kernels[0].name, "probe");
  EXPECT_EQ(p.kernels[0].user_arg_count, 3u);
  EXPECT_TRUE(p.kernels[0].observes_work_groups);
  EXPECT_EQ(p.kernels[1].name, "probe_items");
  EXPECT_FALSE(p.kernels[1].observes_work_groups);
  EXPECT_EQ(p.FindKernel("group_sums")->user_arg_count, 3u);
  EXPECT_TRUE(p.FindKernel("group_sums")->observes_work_groups);
  EXPECT_EQ(p.FindKernel("grid_stride")->user_arg_count, 2u);
  EXPECT_FALSE(p.FindKernel("grid_stride")->observes_work_groups);
  EXPECT_EQ(p.FindKernel("matmul_tiled")->user_arg_count, 4u);
  EXPECT_TRUE(p.FindKernel("matmul_tiled")->observes_work_groups);
  EXPECT_EQ(p.FindKernel("missing"), nullptr);
  // slot() uses only get_global_id, which a preemptible run rewrites too.
  EXPECT_EQ(p.helpers_given_launch, (std::vector<std::string>{"flat_group", "group_of",
                                                               "groups_in", "slot"}));
}

TEST(SlicerRewrite, AppendsTheHiddenParameterAndPassesItOn) {
  const std::string out = Rewritten(R"(
size_t g(uint d);
size_t g(uint d) { return get_group_id(d); }
size_t none(void) { return get_num_groups(0); }
kernel void k(global ulong* o) { o[0] = g(0) + none(); }
kernel void empty() { }
)");
  EXPECT_NE(out.find("size_t g(uint d, ulong16 __rgpu_launch);"), std::string::npos) << out;
  EXPECT_NE(out.find("size_t g(uint d, ulong16 __rgpu_launch) {"), std::string::npos) << out;
  EXPECT_NE(out.find("size_t none(ulong16 __rgpu_launch)"), std::string::npos) << out;
  EXPECT_NE(out.find("kernel void k(global ulong* o, ulong16 __rgpu_launch, volatile __global uint* "
                     "__rgpu_ctl)"), std::string::npos) << out;
  EXPECT_NE(out.find("o[0] = g(0, __rgpu_launch) + none(__rgpu_launch);"), std::string::npos);
  EXPECT_NE(out.find("kernel void empty(ulong16 __rgpu_launch, volatile __global uint* __rgpu_ctl)"),
            std::string::npos);
  // Every kernel body starts with the claim of a preemptible run's work-group.
  EXPECT_NE(out.find("{ __local uint __rgpu_group[1]; __rgpu_launch = __rgpu_claim("), std::string::npos);
}

TEST(SlicerRewrite, RefusesKernelsCalledAsFunctions) {
  Result<RewrittenProgram> r = RewriteForSlicing(
      "kernel void inner(global int* x) { x[0] = 1; }\n"
      "kernel void outer(global int* x) { inner(x); }",
      "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("calls kernel"), std::string::npos) << r.status().message();
}

TEST(SlicerPlan, RunsCountWorkGroupsAndPickALocalSize) {
  KernelInfo items{"k", 1, false}, groups{"g", 1, true};
  LaunchShape explicit_local;
  explicit_local.dims = 2;
  explicit_local.global[0] = 64;
  explicit_local.global[1] = 6;
  explicit_local.local[0] = 16;
  explicit_local.local[1] = 2;
  explicit_local.local_given = true;
  Result<RunPlan> a = PlanRun(groups, explicit_local, 0);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a.value().total_groups, 12u);
  const RunPlan::Physical p = a.value().Range(5);
  EXPECT_EQ(p.global[0], 80u);
  EXPECT_EQ(p.global[1], 2u);
  EXPECT_EQ(p.local[1], 2u);
  EXPECT_EQ(a.value().HiddenArg().s[3], 2u);
  // No local size: rgpu picks the widest divisor up to the kernel's limit.
  LaunchShape implicit_local;
  implicit_local.global[0] = 1000;
  Result<RunPlan> b = PlanRun(items, implicit_local, 128);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b.value().launch.local[0], 125u);
  EXPECT_EQ(b.value().total_groups, 8u);
  EXPECT_FALSE(PlanRun(groups, implicit_local, 128).ok());  // observes work-groups
  implicit_local.global[0] = 1009;                           // prime: no usable divisor
  EXPECT_NE(PlanRun(items, implicit_local, 128).status().message().find("divides"),
            std::string::npos);
  explicit_local.global[0] = 60;                             // non-uniform
  EXPECT_FALSE(PlanRun(groups, explicit_local, 0).ok());
}

TEST(SlicerRewrite, KeepsLineNumbersForBuildLogs) {
  const std::string src = "kernel void k(global int* a)\n{\n  a[get_group_id(0)] = 1;\n}\n";
  const std::string out = Rewritten(src);
  const size_t user = out.find("#line 1\n");
  ASSERT_NE(user, std::string::npos);
  const std::string tail = out.substr(user + 8);
  EXPECT_EQ(std::count(tail.begin(), tail.end(), '\n'), std::count(src.begin(), src.end(), '\n'));
}

TEST(SlicerRewrite, RewritesCallsInsideMacros) {
  const std::string out = Rewritten(R"(
size_t g(void) { return get_group_id(0); }
#define G_PLUS(x) (g() + (x))
kernel void k(global ulong* o) { o[0] = G_PLUS(1); }
)");
  EXPECT_NE(out.find("#define G_PLUS(x) (g(__rgpu_launch) + (x))"), std::string::npos) << out;
}

TEST(SlicerRewrite, ReadsMacrosFromBuildOptions) {
  // A -D macro that names a built-in marks the function using it.
  Result<RewrittenProgram> r = RewriteForSlicing(
      "size_t h(void) { return GID; }\nkernel void k(global ulong* o) { o[0] = h(); }\n",
      "-cl-std=CL1.2 -D GID=get_group_id(0) -DUNUSED");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().helpers_given_launch, std::vector<std::string>{"h"});
}

TEST(SlicerRewrite, IgnoresNamesInCommentsAndStrings) {
  Result<RewrittenProgram> r = RewriteForSlicing(
      "/* (get_group_id) { */ // kernel {\n"
      "kernel void k(global int* a) { printf(\"get_group_id { \\\"\"); a[0] = '{'; }\n",
      "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().kernels.size(), 1u);
}

TEST(SlicerRewrite, AllowsVariablesNamedLikeHelpers) {
  const std::string out = Rewritten(
      "\xEF\xBB\xBF"  // a byte order mark
      "float scale(void) { return (float)get_num_groups(0); }\n"
      "kernel void k(global float* o, float scale) { o[0] = scale; }\n"
      "kernel void m(global float* o) { o[0] = scale(); }\n");
  EXPECT_NE(out.find("o[0] = scale;"), std::string::npos) << out;
  EXPECT_NE(out.find("o[0] = scale(__rgpu_launch);"), std::string::npos) << out;
}

struct RefusalCase {
  const char* name;
  const char* source;
  const char* options;
  const char* reason;  // a part of the expected reason
};

class SlicerRefuses : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(SlicerRefuses, WithAReason) {
  const RefusalCase& c = GetParam();
  Result<RewrittenProgram> r = RewriteForSlicing(c.source, c.options);
  ASSERT_FALSE(r.ok()) << "accepted:\n" << r.value().source;
  EXPECT_NE(r.status().message().find(c.reason), std::string::npos)
      << "reason: " << r.status().message();
}

const RefusalCase kRefusals[] = {
    {"Include", "#include \"common.h\"\nkernel void k(global int* a) {}", "", "#include"},
    {"UnbalancedBraces", "kernel void k(global int* a) { if (1) { }", "", "unbalanced"},
    {"UnbalancedAcrossBranches",
     "kernel void k(global int* a) {\n#ifdef X\n if (1) {\n#else\n if (0) {\n#endif\n}\n}",
     "", "unbalanced"},
    {"MacroHidesKernel", "#define KERNEL __kernel\nKERNEL void k(global int* a) {}", "",
     "hides a kernel signature"},
    {"OptionHidesKernel", "KERNEL void k(global int* a) {}", "-DKERNEL=__kernel",
     "hides a kernel signature"},
    {"MacroIsKernelQualifier", "#define kernel\nkernel void k(global int* a) {}", "",
     "redefines the kernel qualifier"},
    {"ParenthesisedBuiltin", "kernel void k(global int* a) { a[0] = (get_group_id)(0); }", "",
     "plain call"},
    {"BuiltinAsMacroValue", "#define G get_num_groups\nkernel void k(global int* a) { a[0]=G(0); }",
     "", "without calling it"},
    {"TokenPasting", "#define CAT(a, b) a##b\nkernel void k(global int* a) {}", "",
     "pastes tokens"},
    {"RedefinesBuiltin", "#define get_group_id(d) 0\nkernel void k(global int* a) {}", "",
     "redefines a built-in"},
    {"UndefinesBuiltin", "#undef get_global_size\nkernel void k(global int* a) {}", "",
     "#undef names the built-in"},
    {"TestsBuiltin", "#ifdef get_global_offset\n#endif\nkernel void k(global int* a) {}", "",
     "#ifdef names the built-in"},
    {"DeviceEnqueue",
     "kernel void k(global int* a) { enqueue_kernel(get_default_queue(), 0, ndrange_1D(1), "
     "^{ a[get_group_id(0)] = 1; }); }",
     "", "device-side enqueue"},
    {"ReservedName", "kernel void k(global int* __rgpu_x) {}", "", "reserved"},
    {"DirectiveInSignature", "kernel void k(global int* a\n#ifdef B\n, global int* b\n#endif\n) {}",
     "", "inside the signature"},
    {"MacroExpandsToSeveralArgs",
     "#define ARGS global int* a, global int* b\nkernel void k(ARGS) { a[0] = b[0]; }", "",
     "may change its argument count"},
    {"KernelTwiceDifferentArgs",
     "#ifdef A\nkernel void k(global int* a) {}\n#else\nkernel void k(global int* a, int b) {}\n"
     "#endif\n",
     "", "different argument counts"},
    {"UnterminatedComment", "kernel void k(global int* a) {} /* ...", "", "unterminated"},
    {"Digraphs", "kernel void k(global int* a) <% %>", "", "digraphs"},
    {"Trigraphs", "kernel void k(global int* a) ?\?< ?\?>", "", "trigraphs"},
    {"SpliceInsideName", "kernel void k(global int* a) { a[0] = get_gro\\\nup_id(0); }", "",
     "line splice"},
    {"FunctionNamedLikeBuiltin", "size_t get_global_linear_id(void) { return 0; }", "",
     "named like the built-in"},
    {"OptionMacroCallsHelper",
     "size_t h(void) { return get_group_id(0); }\nkernel void k(global ulong* a) { a[0] = H; }",
     "-DH=h()", "options cannot be rewritten"},
    {"HelperNamedNotCalled",
     "size_t h(void) { return get_group_id(0); }\n#define H h\nkernel void k(global ulong* a) {}", "",
     "without calling it"},
    {"ParenthesisedHelper",
     "size_t h(void) { return get_group_id(0); }\nkernel void k(global ulong* a) { a[0] = (h)(); }",
     "", "without calling it"},
    {"MissingSemicolon", "struct S { int a; }", "", "missing ';'"},
};

INSTANTIATE_TEST_SUITE_P(Cases, SlicerRefuses, ::testing::ValuesIn(kRefusals),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SlicerCheckBuiltKernels, AcceptsMatchingAndRefusesSurprises) {
  Result<RewrittenProgram> r =
      RewriteForSlicing("kernel void a(global int* x, int n) {}\nkernel void b() {}", "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<BuiltKernel> good = {{"a", 4}, {"b", 2}};
  EXPECT_TRUE(CheckBuiltKernels(r.value(), good).ok());
  const std::vector<BuiltKernel> unknown = {{"a", 4}, {"c", 2}};
  EXPECT_NE(CheckBuiltKernels(r.value(), unknown).message().find("did not see"), std::string::npos);
  const std::vector<BuiltKernel> wrong_count = {{"a", 3}};
  EXPECT_NE(CheckBuiltKernels(r.value(), wrong_count).message().find("expected 4"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Planner.

LaunchShape Shape(cl_uint dims, std::vector<size_t> offset, std::vector<size_t> global,
                  std::vector<size_t> local) {
  LaunchShape s;
  s.dims = dims;
  for (cl_uint d = 0; d < dims; ++d) {
    s.offset[d] = offset.empty() ? 0 : offset[d];
    s.global[d] = global[d];
    if (!local.empty()) s.local[d] = local[d];
  }
  s.local_given = !local.empty();
  return s;
}

const KernelInfo kGroupKernel{"uses_groups", 1, true};
const KernelInfo kItemKernel{"uses_items", 1, false};

// Every work-item of the launch is in exactly one slice, slices tile the cut dimension in
// order, and each hidden argument describes the launch and where its slice starts.
void ExpectTiles(const SlicePlan& plan) {
  const LaunchShape& l = plan.launch;
  const cl_uint cut = plan.sliced_dim;
  size_t next = l.offset[cut];
  for (const Slice& s : plan.slices) {
    for (cl_uint d = 0; d < l.dims; ++d) {
      if (d == cut) continue;
      EXPECT_EQ(s.offset[d], l.offset[d]);
      EXPECT_EQ(s.global[d], l.global[d]);
    }
    EXPECT_EQ(s.offset[cut], next);
    EXPECT_GT(s.global[cut], 0u);
    if (l.local_given) {
      EXPECT_EQ(s.global[cut] % l.local[cut], 0u);
      EXPECT_EQ(s.group_base[cut], (s.offset[cut] - l.offset[cut]) / l.local[cut]);
    }
    next += s.global[cut];
    EXPECT_EQ(s.hidden_arg.s[3], 1u);
    for (cl_uint d = 0; d < 3; ++d) {
      EXPECT_EQ(s.hidden_arg.s[0 + d], d < l.dims ? l.offset[d] : 0);
      EXPECT_EQ(s.hidden_arg.s[4 + d], d < l.dims ? l.global[d] : 1);
      EXPECT_EQ(s.hidden_arg.s[12 + d], s.group_base[d]);
    }
  }
  EXPECT_EQ(next, l.offset[cut] + l.global[cut]);
}

TEST(SlicerPlan, TilesTheLaunchForManyShapesAndCounts) {
  const std::vector<LaunchShape> shapes = {
      Shape(1, {5}, {96}, {8}),           Shape(1, {}, {1000}, {}),
      Shape(2, {3, 7}, {24, 20}, {4, 5}), Shape(2, {}, {130, 7}, {}),
      Shape(3, {1, 2, 3}, {8, 6, 10}, {2, 3, 2}), Shape(3, {}, {70, 3, 5}, {}),
      Shape(1, {}, {64}, {64})};
  for (const LaunchShape& shape : shapes) {
    for (size_t n : {1, 2, 3, 5, 7, 12, 100, 1000}) {
      SCOPED_TRACE(testing::Message() << "dims " << shape.dims << " slices " << n);
      Result<SlicePlan> plan = PlanSlices(kItemKernel, shape, n);
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      EXPECT_LE(plan.value().slices.size(), n);
      ExpectTiles(plan.value());
    }
    for (size_t groups : {1, 2, 5, 16, 1000}) {
      Result<SlicePlan> plan = PlanSlicesOfSize(kItemKernel, shape, groups);
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      ExpectTiles(plan.value());
    }
  }
}

TEST(SlicerPlan, EqualSlicesWithTheRemainderLast) {
  Result<SlicePlan> plan = PlanSlices(kGroupKernel, Shape(1, {}, {40}, {4}), 3);
  ASSERT_TRUE(plan.ok());
  std::vector<size_t> sizes;
  for (const Slice& s : plan.value().slices) sizes.push_back(s.global[0] / 4);
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 4}));
  EXPECT_EQ(plan.value().slices[2].group_base[0], 6u);
  EXPECT_EQ(plan.value().slices[2].hidden_arg.s[8], 10u);  // groups in the whole launch
}

TEST(SlicerPlan, NeverMoreSlicesThanUnits) {
  Result<SlicePlan> plan = PlanSlices(kGroupKernel, Shape(1, {}, {40}, {4}), 1000);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan.value().slices.size(), 10u);
}

TEST(SlicerPlan, CutsTheOutermostDimensionThatFits) {
  // Groups: 8 x 4 x 2.
  const LaunchShape shape = Shape(3, {}, {16, 8, 4}, {2, 2, 2});
  EXPECT_EQ(PlanSlices(kGroupKernel, shape, 2).value().sliced_dim, 2u);
  EXPECT_EQ(PlanSlices(kGroupKernel, shape, 3).value().sliced_dim, 1u);
  EXPECT_EQ(PlanSlices(kGroupKernel, shape, 5).value().sliced_dim, 0u);
  EXPECT_EQ(PlanSlices(kGroupKernel, shape, 50).value().sliced_dim, 0u);
  // By size: a step along dim 2 holds 32 groups, along dim 1 8, along dim 0 (the last resort) 8.
  EXPECT_EQ(PlanSlicesOfSize(kGroupKernel, shape, 32).value().sliced_dim, 2u);
  Result<SlicePlan> by_size = PlanSlicesOfSize(kGroupKernel, shape, 16);
  EXPECT_EQ(by_size.value().sliced_dim, 1u);
  EXPECT_EQ(by_size.value().slices.size(), 4u);
}

TEST(SlicerPlan, ImplicitLocalSizeCutsAtGranules) {
  Result<SlicePlan> plan = PlanSlices(kItemKernel, Shape(1, {3}, {1000}, {}), 3);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan.value().slices.size(), 3u);
  EXPECT_EQ(plan.value().slices[0].global[0], 5 * kImplicitGranule);
  EXPECT_EQ(plan.value().slices[1].global[0], 5 * kImplicitGranule);
  EXPECT_EQ(plan.value().slices[2].global[0], 1000 - 10 * kImplicitGranule);
}

TEST(SlicerPlan, RefusesWhatItCannotSliceExactly) {
  auto reason = [](const KernelInfo& k, const LaunchShape& s, size_t n) {
    Result<SlicePlan> plan = PlanSlices(k, s, n);
    return plan.ok() ? std::string("(accepted)") : plan.status().message();
  };
  EXPECT_NE(reason(kGroupKernel, Shape(1, {}, {64}, {}), 2).find("observes work-groups"),
            std::string::npos);
  EXPECT_NE(reason(kItemKernel, Shape(1, {}, {60}, {8}), 2).find("non-uniform"), std::string::npos);
  EXPECT_NE(reason(kItemKernel, Shape(1, {}, {0}, {}), 2).find("global size of 0"),
            std::string::npos);
  LaunchShape bad_dims = Shape(1, {}, {8}, {});
  bad_dims.dims = 4;
  EXPECT_NE(reason(kItemKernel, bad_dims, 2).find("work_dim"), std::string::npos);
  EXPECT_NE(reason(kItemKernel, Shape(1, {}, {8}, {0}), 2).find("local size of 0"),
            std::string::npos);
  EXPECT_NE(reason(kItemKernel, Shape(1, {SIZE_MAX}, {8}, {}), 2).find("overflows"),
            std::string::npos);
  EXPECT_NE(reason(kItemKernel, Shape(1, {}, {8}, {}), 0).find("zero slices"), std::string::npos);
  EXPECT_FALSE(PlanSlicesOfSize(kItemKernel, Shape(1, {}, {8}, {}), 0).ok());
}

TEST(SlicerPlan, WholeLaunchArgumentIsZero) {
  const cl_ulong16 whole = HiddenArgForWholeLaunch();
  for (cl_ulong v : whole.s) EXPECT_EQ(v, 0u);
}

// ---------------------------------------------------------------------------------------------
// On a device.

#define CL_ASSERT(call)                                      \
  do {                                                       \
    cl_int cl_assert_err = (call);                           \
    ASSERT_EQ(cl_assert_err, CL_SUCCESS) << #call;           \
  } while (0)

// One context, queue and the two program builds, shared by every device test.
struct Device {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program original = nullptr;
  cl_program rewritten = nullptr;
  RewrittenProgram info;
  std::string skip_reason;
};

Device* g_device = nullptr;

cl_program Build(cl_context context, cl_device_id device, const std::string& source,
                 std::string* error) {
  const char* text = source.c_str();
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &err);
  if (err != CL_SUCCESS) {
    *error = "clCreateProgramWithSource: " + std::to_string(err);
    return nullptr;
  }
  if (clBuildProgram(program, 1, &device, kBuildOptions, nullptr, nullptr) != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    *error = "build failed:\n" + log;
    clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

class SlicerDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_device = new Device;
    Device& d = *g_device;
    cl_platform_id platforms[8];
    cl_uint num_platforms = 0;
    if (clGetPlatformIDs(8, platforms, &num_platforms) != CL_SUCCESS || num_platforms == 0) {
      d.skip_reason = "no OpenCL platform";
      return;
    }
    for (cl_uint p = 0; p < num_platforms && d.device == nullptr; ++p) {
      cl_uint n = 0;
      if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &d.device, &n) != CL_SUCCESS) {
        d.device = nullptr;
      }
    }
    if (d.device == nullptr) {
      d.skip_reason = "no OpenCL device";
      return;
    }
    cl_int err = CL_SUCCESS;
    d.context = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
    d.queue = clCreateCommandQueue(d.context, d.device, 0, &err);
    Result<RewrittenProgram> rewritten = RewriteForSlicing(kProgram, kBuildOptions);
    if (!rewritten.ok()) {
      d.skip_reason = "rewrite refused: " + rewritten.status().message();
      return;
    }
    d.info = std::move(rewritten).value();
    std::string error;
    d.original = Build(d.context, d.device, kProgram, &error);
    if (d.original != nullptr) d.rewritten = Build(d.context, d.device, d.info.source, &error);
    if (d.rewritten == nullptr) d.skip_reason = error;
  }

  static void TearDownTestSuite() {
    if (g_device->rewritten) clReleaseProgram(g_device->rewritten);
    if (g_device->original) clReleaseProgram(g_device->original);
    if (g_device->queue) clReleaseCommandQueue(g_device->queue);
    if (g_device->context) clReleaseContext(g_device->context);
    delete g_device;
    g_device = nullptr;
  }

  void SetUp() override {
    // A missing device skips; a program that does not build is a failure.
    if (g_device->device == nullptr) GTEST_SKIP() << g_device->skip_reason;
    ASSERT_NE(g_device->rewritten, nullptr) << g_device->skip_reason;
  }
};

// How a launch is run.
enum class Mode {
  kWhole,            // the original program, one launch
  kWholeRewritten,   // the rewritten program, one launch, hidden argument "whole"
  kSliced,           // the rewritten program in slices
  kNaive,            // the original program in the same slices, without the rewrite
  kRuns,             // the rewritten program as preemptible runs, stopped at random points
};

struct Launch {
  const char* kernel;
  LaunchShape shape;
  Mode mode = Mode::kWhole;
  size_t slices = 1;               // for kSliced / kNaive with PlanSlices
  size_t groups_per_slice = 0;     // when set, PlanSlicesOfSize instead
  unsigned seed = 1;               // kRuns: where the runs stop
};

using ArgSetter = std::function<void(cl_kernel)>;

// Runs `launch` as preemptible runs, each stopped after a random number of work-groups (the
// limit) and every fourth stopped before it starts (the stop flag already set), as rgpud does
// when a latency-critical launch arrives; checks that the counter says exactly what ran.
void RunInRuns(const Launch& launch, cl_kernel kernel, const KernelInfo& info) {
  Device& d = *g_device;
  Result<RunPlan> plan = PlanRun(info, launch.shape, 256);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const RunPlan& run = plan.value();
  cl_int err = CL_SUCCESS;
  cl_mem ctl = clCreateBuffer(d.context, CL_MEM_READ_WRITE, kControlBytes, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const cl_ulong16 hidden = run.HiddenArg();
  CL_ASSERT(clSetKernelArg(kernel, info.user_arg_count, sizeof hidden, &hidden));
  CL_ASSERT(clSetKernelArg(kernel, info.user_arg_count + 1, sizeof ctl, &ctl));
  std::mt19937 rng(launch.seed);
  uint64_t done = 0;
  for (int i = 0; done < run.total_groups; ++i) {
    ASSERT_LT(i, 1000) << "runs make no progress";
    const bool stopped = i % 4 == 3;
    const uint64_t left = run.total_groups - done;
    const uint64_t limit = i % 3 == 2 ? run.total_groups : done + 1 + rng() % left;
    cl_uint words[4] = {stopped ? 1u : 0u, static_cast<cl_uint>(done), static_cast<cl_uint>(limit), 0};
    CL_ASSERT(clEnqueueWriteBuffer(d.queue, ctl, CL_TRUE, 0, sizeof words, words, 0, nullptr, nullptr));
    const RunPlan::Physical p = run.Range(left);
    CL_ASSERT(clEnqueueNDRangeKernel(d.queue, kernel, run.launch.dims, nullptr, p.global, p.local, 0,
                                     nullptr, nullptr));
    CL_ASSERT(clEnqueueReadBuffer(d.queue, ctl, CL_TRUE, 0, sizeof words, words, 0, nullptr, nullptr));
    const uint64_t now = std::min<uint64_t>(words[1], limit);
    EXPECT_EQ(now, stopped ? done : limit) << "run " << i;
    done = now;
  }
  clReleaseMemObject(ctl);
}

// Runs the launch; anything other than the result going wrong is a test failure.
void RunLaunch(const Launch& launch, const ArgSetter& set_args) {
  Device& d = *g_device;
  const bool rewritten = launch.mode == Mode::kWholeRewritten || launch.mode == Mode::kSliced ||
                         launch.mode == Mode::kRuns;
  cl_int err = CL_SUCCESS;
  cl_kernel kernel =
      clCreateKernel(rewritten ? d.rewritten : d.original, launch.kernel, &err);
  ASSERT_EQ(err, CL_SUCCESS) << launch.kernel;
  set_args(kernel);
  const KernelInfo* info = d.info.FindKernel(launch.kernel);
  ASSERT_NE(info, nullptr);
  const LaunchShape& shape = launch.shape;
  const size_t* local = shape.local_given ? shape.local : nullptr;
  if (rewritten) {
    const cl_mem no_control = nullptr;  // read only by preemptible runs
    CL_ASSERT(clSetKernelArg(kernel, info->user_arg_count + 1, sizeof no_control, &no_control));
  }

  if (launch.mode == Mode::kRuns) {
    RunInRuns(launch, kernel, *info);
  } else if (launch.mode == Mode::kWhole || launch.mode == Mode::kWholeRewritten) {
    if (rewritten) {
      const cl_ulong16 whole = HiddenArgForWholeLaunch();
      CL_ASSERT(clSetKernelArg(kernel, info->user_arg_count, sizeof whole, &whole));
    }
    CL_ASSERT(clEnqueueNDRangeKernel(d.queue, kernel, shape.dims, shape.offset, shape.global,
                                     local, 0, nullptr, nullptr));
  } else {
    Result<SlicePlan> plan = launch.groups_per_slice > 0
                                 ? PlanSlicesOfSize(*info, shape, launch.groups_per_slice)
                                 : PlanSlices(*info, shape, launch.slices);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    for (const Slice& s : plan.value().slices) {
      if (launch.mode == Mode::kSliced) {
        CL_ASSERT(clSetKernelArg(kernel, info->user_arg_count, sizeof s.hidden_arg,
                                 &s.hidden_arg));
      }
      CL_ASSERT(clEnqueueNDRangeKernel(d.queue, kernel, shape.dims, s.offset, s.global, local, 0,
                                       nullptr, nullptr));
    }
  }
  CL_ASSERT(clFinish(d.queue));
  clReleaseKernel(kernel);
}

constexpr cl_ulong kUnwritten = 0xdeadbeefcafef00dull;

// Runs a probe kernel (out, origin, size) and returns its output.
std::vector<cl_ulong> RunProbe(const Launch& launch, size_t slots) {
  Device& d = *g_device;
  size_t items = 1;
  for (cl_uint i = 0; i < launch.shape.dims; ++i) items *= launch.shape.global[i];
  std::vector<cl_ulong> host(items * slots, kUnwritten);
  cl_int err = CL_SUCCESS;
  cl_mem out = clCreateBuffer(d.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              host.size() * sizeof(cl_ulong), host.data(), &err);
  EXPECT_EQ(err, CL_SUCCESS);
  cl_ulong4 origin{}, size{};
  for (cl_uint i = 0; i < 3; ++i) {
    origin.s[i] = i < launch.shape.dims ? launch.shape.offset[i] : 0;
    size.s[i] = i < launch.shape.dims ? launch.shape.global[i] : 1;
  }
  RunLaunch(launch, [&](cl_kernel k) {
    clSetKernelArg(k, 0, sizeof out, &out);
    clSetKernelArg(k, 1, sizeof origin, &origin);
    clSetKernelArg(k, 2, sizeof size, &size);
  });
  EXPECT_EQ(clEnqueueReadBuffer(d.queue, out, CL_TRUE, 0, host.size() * sizeof(cl_ulong),
                                host.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  clReleaseMemObject(out);
  return host;
}

// The first differing slot, for a readable failure.
std::string FirstDifference(const std::vector<cl_ulong>& want, const std::vector<cl_ulong>& got,
                            size_t slots) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      return "work-item " + std::to_string(i / slots) + " slot " + std::to_string(i % slots) +
             ": unsliced " + std::to_string(want[i]) + ", sliced " + std::to_string(got[i]);
    }
  }
  return "none";
}

void ExpectSameAsUnsliced(const char* kernel, const LaunchShape& shape, size_t slots,
                          const std::vector<size_t>& slice_counts,
                          const std::vector<size_t>& group_counts) {
  const std::vector<cl_ulong> want = RunProbe({kernel, shape, Mode::kWhole}, slots);
  ASSERT_EQ(std::count(want.begin(), want.end(), kUnwritten), 0);
  EXPECT_EQ(RunProbe({kernel, shape, Mode::kWholeRewritten}, slots), want);
  for (size_t n : slice_counts) {
    const std::vector<cl_ulong> got = RunProbe({kernel, shape, Mode::kSliced, n}, slots);
    EXPECT_TRUE(got == want) << n << " slices: " << FirstDifference(want, got, slots);
  }
  for (size_t g : group_counts) {
    const std::vector<cl_ulong> got = RunProbe({kernel, shape, Mode::kSliced, 0, g}, slots);
    EXPECT_TRUE(got == want) << g << " groups per slice: " << FirstDifference(want, got, slots);
  }
  for (unsigned seed : {1u, 2u, 3u}) {
    const std::vector<cl_ulong> got = RunProbe({kernel, shape, Mode::kRuns, 1, 0, seed}, slots);
    EXPECT_TRUE(got == want) << "preemptible runs, seed " << seed << ": "
                             << FirstDifference(want, got, slots);
  }
}

const std::vector<size_t> kSliceCounts = {1, 2, 3, 5, 7, 100};

TEST_F(SlicerDevice, Probe1DExplicitLocalWithOffset) {
  ExpectSameAsUnsliced("probe", Shape(1, {5}, {96}, {8}), kProbeSlots, kSliceCounts, {1, 5});
}

TEST_F(SlicerDevice, Probe2DExplicitLocalWithOffset) {
  // Groups 6 x 4: counts above 4 cut dimension 0, the rest dimension 1.
  ExpectSameAsUnsliced("probe", Shape(2, {3, 7}, {24, 20}, {4, 5}), kProbeSlots, kSliceCounts,
                       {1, 6, 7});
}

TEST_F(SlicerDevice, Probe3DExplicitLocal) {
  ExpectSameAsUnsliced("probe", Shape(3, {1, 2, 3}, {8, 6, 10}, {2, 3, 2}), kProbeSlots,
                       kSliceCounts, {1, 8, 9});
  ExpectSameAsUnsliced("probe", Shape(3, {}, {4, 6, 2}, {2, 2, 1}), kProbeSlots, {1, 2, 3, 4},
                       {});
}

TEST_F(SlicerDevice, ProbeItemsImplicitLocal) {
  ExpectSameAsUnsliced("probe_items", Shape(1, {7}, {1000}, {}), kItemSlots, kSliceCounts, {3});
  ExpectSameAsUnsliced("probe_items", Shape(2, {2, 9}, {130, 7}, {}), kItemSlots, kSliceCounts,
                       {4});
  ExpectSameAsUnsliced("probe_items", Shape(3, {1, 1, 1}, {70, 3, 5}, {}), kItemSlots,
                       kSliceCounts, {2});
}

TEST_F(SlicerDevice, ProbeItemsExplicitLocal) {
  ExpectSameAsUnsliced("probe_items", Shape(2, {1, 0}, {12, 9}, {4, 3}), kItemSlots, kSliceCounts,
                       {});
}

// The unsliced rewritten program needs no local size either: with the "whole" argument it
// reads the real built-ins, including the driver's choice of work-group size.
TEST_F(SlicerDevice, WholeRewrittenLaunchMatchesWithImplicitLocal) {
  for (const LaunchShape& shape : {Shape(1, {3}, {96}, {}), Shape(3, {}, {8, 6, 10}, {})}) {
    const std::vector<cl_ulong> want = RunProbe({"probe", shape, Mode::kWhole}, kProbeSlots);
    EXPECT_EQ(RunProbe({"probe", shape, Mode::kWholeRewritten}, kProbeSlots), want);
  }
}

// Without the rewrite, slices see themselves: the comparison above would catch it.
TEST_F(SlicerDevice, NaiveSlicingChangesTheResult) {
  const LaunchShape shape = Shape(1, {5}, {96}, {8});
  const std::vector<cl_ulong> want = RunProbe({"probe", shape, Mode::kWhole}, kProbeSlots);
  const std::vector<cl_ulong> naive = RunProbe({"probe", shape, Mode::kNaive, 3}, kProbeSlots);
  const std::vector<cl_ulong> sliced = RunProbe({"probe", shape, Mode::kSliced, 3}, kProbeSlots);
  EXPECT_NE(naive, want);
  EXPECT_EQ(sliced, want);
  // Specifically get_group_id (slot 0) of the last work-item: group 11 of 12 in the launch,
  // group 3 of its 4-group slice.
  const size_t last = (96 - 1) * kProbeSlots;
  EXPECT_EQ(want[last + 0], 11u);
  EXPECT_EQ(naive[last + 0], 3u);
}

// Runs group_sums over `groups` groups of `local` items and returns the partial sums.
std::vector<float> RunGroupSums(Mode mode, size_t slices, size_t groups, size_t local) {
  Device& d = *g_device;
  std::vector<float> in(groups * local);
  std::iota(in.begin(), in.end(), 0.0f);
  std::vector<float> partial(groups, -1.0f);
  cl_int err = CL_SUCCESS;
  cl_mem in_buf = clCreateBuffer(d.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 in.size() * sizeof(float), in.data(), &err);
  cl_mem out_buf = clCreateBuffer(d.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                  partial.size() * sizeof(float), partial.data(), &err);
  RunLaunch({"group_sums", Shape(1, {}, {groups * local}, {local}), mode, slices}, [&](cl_kernel k) {
    clSetKernelArg(k, 0, sizeof in_buf, &in_buf);
    clSetKernelArg(k, 1, sizeof out_buf, &out_buf);
    clSetKernelArg(k, 2, local * sizeof(float), nullptr);  // local memory: size only
  });
  clEnqueueReadBuffer(d.queue, out_buf, CL_TRUE, 0, partial.size() * sizeof(float),
                      partial.data(), 0, nullptr, nullptr);
  clReleaseMemObject(in_buf);
  clReleaseMemObject(out_buf);
  return partial;
}

TEST_F(SlicerDevice, GroupReductionWithLocalMemory) {
  const std::vector<float> want = RunGroupSums(Mode::kWhole, 1, 24, 16);
  EXPECT_EQ(std::count(want.begin(), want.end(), -1.0f), 0);
  for (size_t n : {1, 4, 5, 24, 50}) EXPECT_EQ(RunGroupSums(Mode::kSliced, n, 24, 16), want) << n;
  EXPECT_EQ(RunGroupSums(Mode::kRuns, 1, 24, 16), want);
  EXPECT_NE(RunGroupSums(Mode::kNaive, 4, 24, 16), want);
}

TEST_F(SlicerDevice, TiledMatrixMultiply) {
  Device& d = *g_device;
  const cl_int n = 32;  // 8 x 8 work-groups of 4 x 4
  std::vector<float> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 7) - 3.0f;
    b[i] = static_cast<float>(i % 5) * 0.5f;
  }
  auto run = [&](Mode mode, size_t slices) {
    std::vector<float> c(n * n, 1e30f);  // no product reaches it
    cl_int err = CL_SUCCESS;
    cl_mem bufs[3] = {
        clCreateBuffer(d.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a.size() * 4, a.data(),
                       &err),
        clCreateBuffer(d.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.size() * 4, b.data(),
                       &err),
        clCreateBuffer(d.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, c.size() * 4,
                       c.data(), &err)};
    RunLaunch({"matmul_tiled", Shape(2, {}, {32, 32}, {4, 4}), mode, slices}, [&](cl_kernel k) {
      clSetKernelArg(k, 0, sizeof n, &n);
      for (cl_uint i = 0; i < 3; ++i) clSetKernelArg(k, i + 1, sizeof(cl_mem), &bufs[i]);
    });
    clEnqueueReadBuffer(d.queue, bufs[2], CL_TRUE, 0, c.size() * 4, c.data(), 0, nullptr, nullptr);
    for (cl_mem m : bufs) clReleaseMemObject(m);
    return c;
  };
  const std::vector<float> want = run(Mode::kWhole, 1);
  EXPECT_EQ(std::count(want.begin(), want.end(), 1e30f), 0);
  for (size_t slices : {1, 3, 8, 20}) EXPECT_EQ(run(Mode::kSliced, slices), want) << slices;
  EXPECT_EQ(run(Mode::kRuns, 1), want);
  EXPECT_NE(run(Mode::kNaive, 3), want);
}

TEST_F(SlicerDevice, GridStrideLoop) {
  Device& d = *g_device;
  const cl_uint n = 3000;
  auto run = [&](Mode mode, size_t slices, const LaunchShape& shape) {
    std::vector<cl_uint> out(n, 0);
    cl_int err = CL_SUCCESS;
    cl_mem buf = clCreateBuffer(d.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                n * sizeof(cl_uint), out.data(), &err);
    RunLaunch({"grid_stride", shape, mode, slices}, [&](cl_kernel k) {
      clSetKernelArg(k, 0, sizeof buf, &buf);
      clSetKernelArg(k, 1, sizeof n, &n);
    });
    clEnqueueReadBuffer(d.queue, buf, CL_TRUE, 0, n * sizeof(cl_uint), out.data(), 0, nullptr,
                        nullptr);
    clReleaseMemObject(buf);
    return out;
  };
  for (const LaunchShape& shape : {Shape(1, {11}, {512}, {}), Shape(1, {}, {256}, {32})}) {
    const std::vector<cl_uint> want = run(Mode::kWhole, 1, shape);
    for (size_t s : {1, 3, 8}) EXPECT_EQ(run(Mode::kSliced, s, shape), want) << s;
    EXPECT_EQ(run(Mode::kRuns, 1, shape), want);
  }
}

// What the server does after building the rewritten source.
TEST_F(SlicerDevice, CompilerSeesTheKernelsTheRewriterSaw) {
  Device& d = *g_device;
  size_t size = 0;
  clGetProgramInfo(d.rewritten, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size);
  std::string names(size, '\0');
  clGetProgramInfo(d.rewritten, CL_PROGRAM_KERNEL_NAMES, size, names.data(), nullptr);
  names.resize(std::strlen(names.c_str()));
  std::vector<BuiltKernel> built;
  for (size_t start = 0; start <= names.size();) {
    const size_t end = std::min(names.find(';', start), names.size());
    BuiltKernel b{names.substr(start, end - start), 0};
    cl_kernel k = clCreateKernel(d.rewritten, b.name.c_str(), nullptr);
    ASSERT_NE(k, nullptr) << b.name;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof b.num_args, &b.num_args, nullptr);
    clReleaseKernel(k);
    built.push_back(b);
    start = end + 1;
  }
  EXPECT_EQ(built.size(), d.info.kernels.size());
  const Status s = CheckBuiltKernels(d.info, built);
  EXPECT_TRUE(s.ok()) << s.message();
}

}  // namespace
}  // namespace rgpu::slicer
