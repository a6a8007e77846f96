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
)", "n/task.toml");
  EXPECT_TRUE(t) << t.error().message();
  return *t;
}

TEST(Shim, CandidateCallsTheTypedFunction) {
  std::string s = entry_shim(norm_task(), ShimKind::candidate);
  EXPECT_NE(s.find("extern \"C\""), std::string::npos);
  EXPECT_NE(s.find("rmsnorm(\n      static_cast<const kf::bf16*>(kf_buf[0]),\n"
                   "      static_cast<const int32_t*>(kf_buf[1]),\n"
                   "      static_cast<kf::bf16*>(kf_buf[2]),\n"
                   "      kf_dims[0],\n      kf_dims[1],\n"
                   "      static_cast<float>(kf_scalars[0]),\n"
                   "      static_cast<int64_t>(kf_scalars[1]));"),
            std::string::npos)
      << s;
}

TEST(Shim, OracleWidensFloatingTensorsOnly) {
  std::string s = entry_shim(norm_task(), ShimKind::oracle);
  EXPECT_NE(s.find("rmsnorm<double>("), std::string::npos) << s;
  EXPECT_NE(s.find("static_cast<const double*>(kf_buf[0])"), std::string::npos);
  EXPECT_NE(s.find("static_cast<const int32_t*>(kf_buf[1])"), std::string::npos);
  EXPECT_NE(s.find("static_cast<double>(kf_scalars[0])"), std::string::npos);
  EXPECT_EQ(buffer_dtype(norm_task(), 1, ShimKind::oracle), DType::i32);
}

TEST(Shim, ReferenceUsesTheTaskDtype) {
  std::string s = entry_shim(norm_task(), ShimKind::reference);
  EXPECT_NE(s.find("rmsnorm<kf::bf16>("), std::string::npos) << s;
}

TEST(Shim, CandidateSignature) {
  EXPECT_EQ(candidate_signature(norm_task()),
            "void rmsnorm(const kf::bf16* x, const int32_t* ids, kf::bf16* y, int64_t N, "
            "int64_t D, float eps, int64_t k)");
}

}  // namespace
}  // namespace kf
