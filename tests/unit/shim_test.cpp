#include "harness/shim.h"

#include <gtest/gtest.h>

namespace kf {
namespace {

Task norm_task() {
  auto t = parse_task(R"(name = "n"
category = "norm"
dtype = "bf16"
[signature]
function = "rmsnorm"
dims = ["N", "D"]
inputs = [ { name = "x", dtype = "bf16", shape = ["N", "D"] },
           { name = "ids", dtype = "i32", shape = ["N"], dist = { kind = "randint", hi = "D" } } ]
outputs = [ { name = "y", dtype = "bf16", shape = ["N", "D"] } ]
scalars = [ { name = "eps", dtype = "bf16", default = 1e-6 }, { name = "k", dtype = "i64", default = 2 } ]
[shapes]
bench = { N = 8, D = 8 }
tests = [ { N = 1, D = 3 } ]
[tolerance]
bf16 = { rel_l2 = 1e-2, atol = 1e-2, rtol = 1e-2 }
[cost]
flops = "N * D"
)",
                      "n/task.toml");
  EXPECT_TRUE(t) << t.error().message();
  return *t;
}

TEST(Shim, EntryCallsTheBindAtExactTypes) {
  EntryShim s = entry_shim(norm_task(), ShimKind::candidate);
  EXPECT_NE(s.entry.find("extern \"C\""), std::string::npos);
  EXPECT_NE(s.entry.find("void kforge_bind(const kf::bf16*, const int32_t*, kf::bf16*, int64_t, "
                         "int64_t, float, int64_t);"),
            std::string::npos)
      << s.entry;
  EXPECT_NE(s.entry.find("kforge_bind(\n      static_cast<const kf::bf16*>(kf_buf[0]),\n"
                         "      static_cast<const int32_t*>(kf_buf[1]),\n"
                         "      static_cast<kf::bf16*>(kf_buf[2]),\n"
                         "      kf_dims[0],\n      kf_dims[1],\n"
                         "      static_cast<float>(kf_scalars[0]),\n"
                         "      static_cast<int64_t>(kf_scalars[1]));"),
            std::string::npos)
      << s.entry;
  // The entry never names the candidate's function: only the bind text, in the candidate's unit,
  // does, through a pointer of the exact type.
  EXPECT_EQ(s.entry.find("rmsnorm"), std::string::npos) << s.entry;
  EXPECT_NE(s.bind.find("void (*const kf_fn)(const kf::bf16*, const __INT32_TYPE__*, kf::bf16*, "
                        "__INT64_TYPE__, __INT64_TYPE__, float, __INT64_TYPE__) = &rmsnorm;"),
            std::string::npos)
      << s.bind;
  EXPECT_NE(s.bind.find("#include <kforge/kernel.h>"), std::string::npos) << s.bind;
  EXPECT_EQ(s.signature, candidate_signature(norm_task()));
  EXPECT_EQ(s.function, "rmsnorm");
}

TEST(Shim, OracleWidensFloatingTensorsOnly) {
  EntryShim s = entry_shim(norm_task(), ShimKind::oracle);
  EXPECT_NE(s.bind.find("= &rmsnorm<double>;"), std::string::npos) << s.bind;
  EXPECT_NE(s.entry.find("static_cast<const double*>(kf_buf[0])"), std::string::npos);
  EXPECT_NE(s.entry.find("static_cast<const int32_t*>(kf_buf[1])"), std::string::npos);
  EXPECT_NE(s.entry.find("static_cast<double>(kf_scalars[0])"), std::string::npos);
  EXPECT_EQ(buffer_dtype(norm_task(), 1, ShimKind::oracle), DType::i32);
}

TEST(Shim, ReferenceUsesTheTaskDtype) {
  EntryShim s = entry_shim(norm_task(), ShimKind::reference);
  EXPECT_NE(s.bind.find("= &rmsnorm<kf::bf16>;"), std::string::npos) << s.bind;
  EXPECT_NE(s.signature.find("void rmsnorm<kf::bf16>(const kf::bf16*"), std::string::npos)
      << s.signature;
}

TEST(Shim, CandidateSignature) {
  EXPECT_EQ(candidate_signature(norm_task()),
            "void rmsnorm(const kf::bf16* x, const int32_t* ids, kf::bf16* y, int64_t N, "
            "int64_t D, float eps, int64_t k)");
}

}  // namespace
}  // namespace kf
