// The search's cost model (search/cost_model.h) on GEMM candidates: it orders a naive, a
// register-tiled and a parallel schedule as their loop nests say, prices written source by the
// roofline, survives garbage, and never predicts a slowdown from more threads.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "search/cost_model.h"

namespace kf::search {
namespace {

// The built-in brain's register_block move on 08_gemm (a 6x32 accumulator tile in registers,
// 16 lanes), as agents_builtin_moves_test pins it.
constexpr const char* kTiled =
    "cache_write C C_acc\n"
    "split C.i i.o i.i 6\n"
    "split C.j j.o j.i 32\n"
    "reorder C j.o i.o i.i j.i\n"
    "unroll C.i.i\n"
    "vectorize C.j.i 16\n"
    "compute_at C_acc C.i.o\n"
    "reorder C_acc k i j\n"
    "unroll C_acc.i\n"
    "vectorize C_acc.j 16\n";

// Vectors along j without a register tile: C is loaded and stored at every k.
constexpr const char* kVectorOnly =
    "split C.j j.o j.i 16\n"
    "reorder C i j.o k j.i\n"
    "vectorize C.j.i\n";

class CostModel : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = compile_task(std::filesystem::path(KFORGE_TEST_SOURCE_DIR) / "bench/jaxbench/08_gemm");
    ASSERT_TRUE(t) << t.error().message();
    gemm_ = std::move(*t);
    // A probed 4-core machine with round figures: 100 GFLOP/s and 20 GB/s DRAM per core.
    machine_.cores = 4;
    machine_.peak_gflops_1t = 100, machine_.peak_gflops_all = 400;
    machine_.dram_gbps_1t = 20, machine_.dram_gbps_all = 40;
    machine_.cache_gbps_1t = 100;
    machine_.l1d_bytes = 48 << 10, machine_.l2_bytes = 1 << 20, machine_.l3_bytes = 32 << 20;
  }

  static agents::CandidateMsg generated(const std::string& schedule) {
    agents::CandidateMsg c;
    c.kind = agents::SourceKind::generated;
    c.generated = agents::Generation{};
    c.generated->schedule = schedule;
    return c;
  }
  CostEstimate estimate(const std::string& schedule, int threads = 1) const {
    return estimate_cost(gemm_, generated(schedule), machine_, target_, threads);
  }

  CompiledTask gemm_;
  MachineInfo machine_;
  Target target_;  // avx512, 16 f32 lanes
};

TEST_F(CostModel, OrdersNaiveVectorTiledAndParallelGemm) {
  const CostEstimate naive = estimate("");
  const CostEstimate vector = estimate(kVectorOnly);
  const CostEstimate tiled = estimate(kTiled);
  const CostEstimate parallel = estimate(std::string(kTiled) + "parallel C.j.o\n", 4);
  for (const CostEstimate* e : {&naive, &vector, &tiled, &parallel})
    ASSERT_TRUE(e->features.known) << e->why;

  EXPECT_GT(naive.seconds, vector.seconds) << naive.why << "\n" << vector.why;
  EXPECT_GT(vector.seconds, tiled.seconds) << vector.why << "\n" << tiled.why;
  EXPECT_GT(tiled.seconds, parallel.seconds) << tiled.why << "\n" << parallel.why;

  // Why: the naive nest is scalar and serial, and its tile (the k loop, reading a column of B)
  // is fetched again for every (i, j).
  EXPECT_EQ(naive.features.vector_share, 0);
  EXPECT_EQ(naive.features.parallel_share, 0);
  EXPECT_EQ(naive.features.vector_lanes, 1);
  EXPECT_EQ(naive.features.tile, "C.k");
  EXPECT_GT(naive.features.refetch_bytes, 50 * tiled.features.refetch_bytes);
  // The vector-only nest has the lanes but loads and stores C at every k: bound by its memory
  // instructions, of which the register tile saves most.
  EXPECT_EQ(vector.features.vector_lanes, 16);
  EXPECT_GT(vector.features.vector_share, 0.99);
  EXPECT_GT(vector.features.memory_ops, 3 * tiled.features.memory_ops);
  // The tile: vectorized at 16 lanes, the k loop over a 6-row strip of A and a 32-wide panel of B
  // fits L2.
  EXPECT_EQ(tiled.features.vector_lanes, 16);
  EXPECT_GT(tiled.features.vector_share, 0.99);
  EXPECT_EQ(tiled.features.parallel_share, 0);
  EXPECT_EQ(tiled.features.tile, "C_acc.k");
  EXPECT_GT(tiled.features.working_set_bytes, 0);
  EXPECT_LE(tiled.features.working_set_bytes, machine_.l2_bytes);
  EXPECT_GT(parallel.features.parallel_share, 0.99);
  EXPECT_EQ(parallel.features.parallel_trips, 32);  // 1024 / 32 column panels
  EXPECT_NE(parallel.why.find("on 4 threads"), std::string::npos) << parallel.why;
}

TEST_F(CostModel, WrittenSourceGetsTheRoofline) {
  agents::CandidateMsg written;
  written.kind = agents::SourceKind::written;
  written.source = "void gemm() {}";
  auto inst = gemm_.task.instantiate(gemm_.task.bench);
  ASSERT_TRUE(inst);
  // GEMM at 1024^3 is compute-bound: 2 GFLOP at the 1-thread peak.
  CostEstimate e = estimate_cost(gemm_, written, machine_, target_, 1);
  EXPECT_FALSE(e.features.known);
  EXPECT_EQ(e.bound, "compute");
  EXPECT_DOUBLE_EQ(e.seconds, inst->flops / 100e9) << e.why;
  EXPECT_NE(e.why.find("not generated"), std::string::npos) << e.why;
  // With its 12 MiB beyond an 8 MiB L3 and a peak too high to matter, the DRAM bandwidth of 4
  // threads sets the time.
  machine_.l3_bytes = 8 << 20;
  machine_.peak_gflops_1t = 1e6, machine_.peak_gflops_all = 4e6;
  e = estimate_cost(gemm_, written, machine_, target_, 4);
  EXPECT_EQ(e.bound, "memory");
  EXPECT_DOUBLE_EQ(e.seconds, inst->bytes / 40e9) << e.why;
}

TEST_F(CostModel, GarbageGivesAFiniteRooflineEstimateThatSaysWhy) {
  const CostEstimate unparsed = estimate("split C.i\n%%% not a schedule");
  EXPECT_FALSE(unparsed.features.known);
  EXPECT_NE(unparsed.why.find("does not parse"), std::string::npos) << unparsed.why;
  EXPECT_TRUE(std::isfinite(unparsed.seconds));
  EXPECT_GT(unparsed.seconds, 0);

  const CostEstimate illegal = estimate("split X.i i.o i.i 4\n");
  EXPECT_FALSE(illegal.features.known);
  EXPECT_NE(illegal.why.find("does not lower"), std::string::npos) << illegal.why;

  agents::CandidateMsg empty_generation = generated("");
  empty_generation.generated.reset();
  EXPECT_FALSE(estimate_cost(gemm_, empty_generation, machine_, target_, 1).features.known);

  // An unprobed machine: stand-in figures, named, and still the naive nest is the slower.
  const MachineInfo unprobed;
  const CostEstimate a = estimate_cost(gemm_, generated(""), unprobed, target_, 0);
  const CostEstimate b = estimate_cost(gemm_, generated(kTiled), unprobed, target_, 3);
  for (const CostEstimate* e : {&a, &b}) {
    EXPECT_TRUE(std::isfinite(e->seconds) && e->seconds > 0) << e->why;
    EXPECT_NE(e->why.find("unprobed machine, stand-in peak"), std::string::npos) << e->why;
  }
  EXPECT_GT(a.seconds, b.seconds);

  // Features that make no sense are cleaned, not propagated.
  CostFeatures nonsense;
  nonsense.known = true;
  nonsense.flops = NAN, nonsense.bytes = -5, nonsense.memory_ops = INFINITY;
  nonsense.vector_share = 7, nonsense.parallel_share = -1, nonsense.vector_lanes = -3;
  const CostEstimate n = estimate_from_features(nonsense, machine_, target_, -2);
  EXPECT_TRUE(std::isfinite(n.seconds)) << n.why;
  EXPECT_EQ(n.features.vector_share, 1);
  EXPECT_EQ(n.features.parallel_share, 0);
}

TEST_F(CostModel, MoreThreadsNeverPredictSlower) {
  const std::string schedule = std::string(kTiled) + "parallel C.j.o\n";
  double last = INFINITY;
  for (int threads = 1; threads <= 8; ++threads) {
    const CostEstimate e = estimate(schedule, threads);
    ASSERT_TRUE(e.features.known) << e.why;
    EXPECT_LE(e.seconds, last) << threads << " threads: " << e.why;
    if (threads == 2) {
      EXPECT_LT(e.seconds, last) << "the parallel share is all of the work";
    }
    last = e.seconds;
  }
  // Hand-built features, half parallel, on a machine whose all-core peak and bandwidth were
  // measured below one core's (noise): more threads still never cost time.
  machine_.peak_gflops_all = 50, machine_.dram_gbps_all = 10;
  CostFeatures f;
  f.known = true;
  f.flops = 1e9, f.bytes = 1e9, f.memory_ops = 1e9, f.refetch_bytes = 4e9, f.nest_bytes = 1e8;
  f.vector_share = 0.5, f.vector_lanes = 8, f.parallel_share = 0.5, f.parallel_trips = 64;
  last = INFINITY;
  for (int threads = 1; threads <= 8; ++threads) {
    const double s = estimate_from_features(f, machine_, target_, threads).seconds;
    EXPECT_LE(s, last) << threads << " threads";
    last = s;
  }
}

}  // namespace
}  // namespace kf::search
