// The built-in planner in isolation (agents/builtin/planner.cpp): fixed evidence and a fixed
// pipeline in, the decision out. Nothing is measured: the evidence is written by hand the way
// the profiler would report it.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "agents/builtin/brain.h"
#include "planner_test_util.h"

namespace kf::agents::builtin {
namespace {

using namespace planner_test;

TEST(BuiltinPlanner, ComputeBoundGemmIsRegisterBlocked) {
  Scenario s("bench/jaxbench/08_gemm", {});
  Plan p = s.plan(evidence("compute", 0.05));
  EXPECT_EQ(p.strategy, "register_block");
  EXPECT_EQ(p.knobs, find_strategy("register_block")->default_knobs());
  EXPECT_DOUBLE_EQ(p.expected_speedup, 8.0) << "min(headroom 20x, 8x)";
  EXPECT_TRUE(p.why.starts_with("Register-block the reduction: ")) << p.why;
  EXPECT_NE(p.bottleneck.find("compute-bound at 5%"), std::string::npos) << p.bottleneck;
  EXPECT_NE(p.analysis.find("1 stages: 1 GEMM-like, 0 register-blocked"), std::string::npos)
      << p.analysis;
  // The next-ranked applicable strategies, best first (vectorize_inner has nothing to vectorize:
  // C's innermost loop is its reduction; rfactor leaves a GEMM's dot products to the tile).
  ASSERT_GE(p.alternatives.size(), 2u);
  EXPECT_EQ(p.alternatives[0], "reorder_unit_stride (~4.0x)");
  EXPECT_EQ(p.alternatives[1], "accumulate_locally (~1.3x)");
  for (const auto& a : p.alternatives)
    EXPECT_EQ(a.find("rfactor_reduction"), std::string::npos) << a;
  for (const auto& a : p.alternatives) EXPECT_EQ(a.find("vectorize_inner"), std::string::npos) << a;
}

TEST(BuiltinPlanner, ConvolutionWithAnEpilogueGetsTheFusedTile) {
  // 18: z_r = conv(x, w); z = z_r + conv_bias; y = relu(z) + bias. The reduction's only reader
  // is an elementwise chain to the output, so the tile of the output with the chain applied in
  // registers ranks first, the plain register tile (z_r written out, read back) next.
  Scenario s("bench/jaxbench/18_conv2d_relu_biasadd", {});
  Plan p = s.plan(evidence("compute", 0.05));
  EXPECT_EQ(p.strategy, "register_block_epilogue");
  EXPECT_DOUBLE_EQ(p.expected_speedup, 8.4);
  ASSERT_FALSE(p.alternatives.empty());
  EXPECT_EQ(p.alternatives[0], "register_block (~8.0x)");
  // Once tried from this best, the plain tile is next.
  EXPECT_EQ(s.plan(evidence("compute", 0.05), {"register_block_epilogue"}).strategy,
            "register_block");
}

TEST(BuiltinPlanner, ExpectationIsCappedByTheHeadroom) {
  Scenario s("bench/jaxbench/08_gemm", {});
  Plan p = s.plan(evidence("compute", 0.5));
  EXPECT_EQ(p.strategy, "register_block");
  EXPECT_DOUBLE_EQ(p.expected_speedup, 2.0) << "at 50% of the roofline, 2x is all there is";
}

TEST(BuiltinPlanner, AfterRegisterBlockThePanelIsPacked) {
  Scenario s("bench/jaxbench/08_gemm", recipe_of({"register_block"}));
  Plan p = s.plan(evidence("compute", 0.3));
  EXPECT_EQ(p.strategy, "pack_operand");
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.5);
  EXPECT_FALSE(p.why.empty());
}

TEST(BuiltinPlanner, AfterRegisterBlockAndPackItUnrollsTheReduction) {
  Scenario s("bench/jaxbench/08_gemm", recipe_of({"register_block", "pack_operand"}));
  Plan p = s.plan(evidence("compute", 0.3));
  // unroll_inner (~1.5x) ranks higher but has nothing to do: the loop outside C's vector loop
  // is unrolled already, and the tile and the panel are cache stages.
  EXPECT_EQ(p.strategy, "unroll_reduction") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.1);
}

TEST(BuiltinPlanner, APanelPackedPerTileIsDoubleBufferedOnceTheKernelIsComputeBound) {
  Scenario s("bench/jaxbench/08_gemm", recipe_of({"register_block", "pack_operand"}));
  Plan p = s.plan(evidence("compute", 0.8), {"unroll_reduction"});
  EXPECT_EQ(p.strategy, "double_buffer_pack") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.08);
  EXPECT_NE(p.why.find("1 operand panels are packed at the top of each column tile"),
            std::string::npos)
      << p.why;
  // Memory-bound: the panel's reads are not hidden behind FMAs that are not the bottleneck.
  p = s.plan(evidence("memory", 0.5), {"unroll_reduction"});
  EXPECT_NE(p.strategy, "double_buffer_pack");
  // Without the pack there is nothing to double buffer.
  Scenario bare("bench/jaxbench/08_gemm", recipe_of({"register_block"}));
  p = bare.plan(evidence("compute", 0.8), {"unroll_reduction", "pack_operand"});
  EXPECT_NE(p.strategy, "double_buffer_pack") << p.why;
}

TEST(BuiltinPlanner, InvariantDivisorsAreInvertedOnceTheLoopsAreDone) {
  // 50 after the fused tile, the vector partial sums and the vector loops: what is left is
  // small; the divisions by sqrt(2) (GELU) and by each row's sum are inverted once, with a
  // modest expectation, ranked after the loop strategies that expect more.
  Scenario s("bench/jaxbench/50_matmul_gelu_softmax",
             recipe_of({"register_block_epilogue", "rfactor_reduction", "vectorize_inner"}));
  std::set<std::string> tried = {"unroll_reduction", "unroll_inner", "inline_elementwise",
                                 "fuse_into_consumer", "double_buffer_pack"};
  Plan p = s.plan(evidence("compute", 0.7), tried);
  EXPECT_EQ(p.strategy, "strength_reduce") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.04);
  EXPECT_NE(p.why.find("2 stages divide by a value that does not change along their innermost "
                       "loop"),
            std::string::npos)
      << p.why;
  // Memory-bound, a divide hides behind the loads: a smaller expectation.
  tried.insert({"streaming_stores", "prefetch_distance", "tile_2d"});
  p = s.plan(evidence("memory", 0.7), tried);
  EXPECT_EQ(p.strategy, "strength_reduce") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.02);
  // A GEMM divides nothing: never proposed.
  Scenario gemm("bench/jaxbench/08_gemm", recipe_of({"register_block", "pack_operand"}));
  Plan g = gemm.plan(evidence("compute", 0.7), {"unroll_reduction", "double_buffer_pack"});
  EXPECT_NE(g.strategy, "strength_reduce");
  for (const auto& a : g.alternatives) EXPECT_EQ(a.find("strength_reduce"), std::string::npos) << a;
}

TEST(BuiltinPlanner, AnExpInlinedIntoTwoReadersIsStoredOncePerRow) {
  // 50 after inline_elementwise: e = exp(g - m) is evaluated by the row sum and by the output.
  Scenario s("bench/jaxbench/50_matmul_gelu_softmax",
             recipe_of({"register_block_epilogue", "rfactor_reduction", "vectorize_inner",
                        "inline_elementwise"}));
  Plan p = s.plan(evidence("compute", 0.7),
                  {"unroll_reduction", "unroll_inner", "fuse_into_consumer", "double_buffer_pack"});
  EXPECT_EQ(p.strategy, "recompute_vs_store") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.06);
  EXPECT_NE(p.why.find("1 inlined stages with exp/erf/tanh are evaluated again by each of their "
                       "readers"),
            std::string::npos)
      << p.why;
  // Before anything is inlined there is nothing recomputed.
  Scenario bare("bench/jaxbench/50_matmul_gelu_softmax", recipe_of({"register_block_epilogue"}));
  for (const auto& a : bare.plan(evidence("compute", 0.7)).alternatives)
    EXPECT_EQ(a.find("recompute_vs_store"), std::string::npos) << a;
}

TEST(BuiltinPlanner, ASoftmaxsMaxAndSumBecomeOnePass) {
  // 01 after its scores were fused per row and vectorized: the row max, the sum of exps and
  // P @ V read each row three times; online_softmax is judged on the default pipeline (where it
  // goes, ahead of the loop scheduling), unweighted by stage times. P @ V uses the
  // probabilities, so each exp runs twice: a small gain unless memory-bound.
  Scenario s(
      "bench/jaxbench/01_flash_attention",
      recipe_of({"fuse_into_consumer", "vectorize_inner", "change_layout", "rfactor_reduction"}));
  s.base = testing::pipeline_of(s.task);
  Plan p = s.plan_until("online_softmax", evidence("compute", 0.17));
  EXPECT_EQ(p.strategy, "online_softmax") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.02);
  EXPECT_NE(p.why.find("1 softmax rows are read three times"), std::string::npos) << p.why;
  EXPECT_DOUBLE_EQ(s.plan_until("online_softmax", evidence("memory", 0.3)).expected_speedup, 1.15);
  // Cross entropy's log-sum-exp reads its rows once instead of twice, with no exp added.
  Scenario ce("bench/jaxbench/13_cross_entropy",
              recipe_of({"register_block", "rfactor_reduction"}));
  ce.base = testing::pipeline_of(ce.task);
  Plan c = ce.plan_until("online_softmax", evidence("memory", 0.3));
  EXPECT_EQ(c.strategy, "online_softmax") << c.why;
  EXPECT_DOUBLE_EQ(c.expected_speedup, 1.3);
  EXPECT_NE(c.why.find("1 log-sum-exp rows are read twice"), std::string::npos) << c.why;
  EXPECT_DOUBLE_EQ(ce.plan_until("online_softmax", evidence("compute", 0.5)).expected_speedup, 1.1);
  // Without the default pipeline it is judged on the best's, where rfactor split the row max.
  ce.base.reset();
  EXPECT_NE(ce.plan_until("online_softmax", evidence("memory", 0.3)).strategy, "online_softmax");
  // Once in the recipe it is not proposed again; 04's max of two block maxima is no row max.
  Scenario done("bench/jaxbench/01_flash_attention",
                recipe_of({"online_softmax", "vectorize_inner"}));
  done.base = testing::pipeline_of(done.task);
  EXPECT_NE(done.plan_until("online_softmax", evidence("compute", 0.17)).strategy,
            "online_softmax");
  Scenario splash("bench/jaxbench/04_splash_attention", recipe_of({"vectorize_inner"}));
  splash.base = testing::pipeline_of(splash.task);
  EXPECT_NE(splash.plan_until("online_softmax", evidence("compute", 0.1)).strategy,
            "online_softmax");
}

TEST(BuiltinPlanner, FirstTouchPlacementOnlyWithSeveralMemoryNodes) {
  // rmsnorm at 2 threads, y parallel, its row statistic written serially: on a machine with two
  // memory nodes, memory-bound, placing the statistic's pages by the threads that read them
  // is worth a try (~1.3x); on one node it is never proposed.
  Scenario s("bench/jaxbench/12_rmsnorm", recipe_of({}), 2);
  s.pipeline = testing::pipeline_of(s.task);
  s.pipeline.task = &s.task;
  KF_CHECK(sched::apply_schedule(s.pipeline, testing::schedule_of("parallel y.n\n")).ok());
  MachineInfo one, two;
  two.numa_nodes = 2;
  EXPECT_NE(s.plan_until("numa_first_touch", evidence("memory", 0.3, 2)).strategy,
            "numa_first_touch");
  s.machine = &two;
  const Plan p = s.plan_until("numa_first_touch", evidence("memory", 0.3, 2));
  EXPECT_EQ(p.strategy, "numa_first_touch");
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.3);
  EXPECT_NE(p.why.find("2 memory nodes"), std::string::npos) << p.why;
  s.machine = &one;
  EXPECT_NE(s.plan_until("numa_first_touch", evidence("memory", 0.3, 2)).strategy,
            "numa_first_touch");
}

TEST(BuiltinPlanner, APageTableReadPerTokenIsHoistedToOncePerPage) {
  // 06 fused and vectorized: the keys and values are still read through page_table[n, t / PS]
  // per token. gather_hoisting runs those loops by pages, a small gain (1.09x measured), so it
  // comes after the strategies that change the work; it is proposed until applied.
  Scenario s("bench/jaxbench/06_paged_attention",
             recipe_of({"fuse_into_consumer", "rfactor_reduction", "vectorize_inner"}));
  const Plan p = s.plan_until("gather_hoisting", evidence("memory", 0.1));
  ASSERT_EQ(p.strategy, "gather_hoisting") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.1);
  EXPECT_NE(p.why.find("2 stages read through a page table"), std::string::npos) << p.why;
  Scenario done("bench/jaxbench/06_paged_attention",
                recipe_of({"fuse_into_consumer", "rfactor_reduction", "gather_hoisting"}));
  for (const auto& a : done.plan(evidence("memory", 0.1)).alternatives)
    EXPECT_EQ(a.find("gather_hoisting"), std::string::npos) << a;
}

TEST(BuiltinPlanner, AStridedTransposedConvolutionIsSplitByPhasesFirst) {
  // 28 naive: one tap in 8 counts and every tap divides, takes a modulo and tests bounds. The
  // phase decomposition expects twice the skipped taps (16x; measured ~50x on the naive kernel),
  // above vectorizing the gathers (8x); once applied, the phases' convolution is tileable.
  Scenario s("bench/jaxbench/28_convtranspose3d_layernorm_gelu_scaling", {});
  const Plan p = s.plan(evidence("compute", 0.004));
  ASSERT_EQ(p.strategy, "phase_decomposition") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 16.0);
  EXPECT_NE(p.why.find("keep one in 8"), std::string::npos) << p.why;
  Scenario done("bench/jaxbench/28_convtranspose3d_layernorm_gelu_scaling",
                recipe_of({"phase_decomposition"}));
  const Plan d = done.plan(evidence("compute", 0.005));
  EXPECT_NE(d.strategy, "phase_decomposition");
  EXPECT_TRUE(d.strategy == "register_block" || d.strategy == "register_block_epilogue") << d.why;
  for (const auto& a : d.alternatives)
    EXPECT_EQ(a.find("phase_decomposition"), std::string::npos) << a;
}

TEST(BuiltinPlanner, AnInvariantDecayIsHoistedOutOfTheLoopsItDoesNotRead) {
  // 16 (chunked SSD) once vectorized, the register tiles tried: the decays exp(lc[..] - lc[..])
  // and the nested C.B sum are most of each point's work and read none of the state loops
  // (n, p). Compute-bound far from the roofline, the hoist expects 1 / (1 - share), at most 16x,
  // above a 4x rfactor and the 8.4x register tile.
  Scenario s("bench/jaxbench/16_mamba2_ssd", recipe_of({"vectorize_inner"}));
  const std::set<std::string> tried = {"vectorize_inner", "register_block_epilogue",
                                       "register_block"};
  Plan p = s.plan(evidence("compute", 0.02), tried);
  EXPECT_EQ(p.strategy, "hoist_invariants") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 16.0) << "the share is over 15/16: the gain's cap";
  EXPECT_NE(p.why.find("2 stages evaluate a costly term"), std::string::npos) << p.why;  // st, y
  // Memory-bound, the saved arithmetic hides partly behind the loads: a quarter of the gain,
  // 1 + 7/4, ranked after the strategies that cut the traffic.
  Plan m = s.plan(evidence("memory", 0.02), tried);
  EXPECT_NE(m.strategy, "hoist_invariants");
  EXPECT_NE(std::find(m.alternatives.begin(), m.alternatives.end(), "hoist_invariants (~2.8x)"),
            m.alternatives.end())
      << m.why;
  // Close to the roofline the expectation is capped by the headroom.
  EXPECT_LE(s.plan(evidence("compute", 0.8), {"vectorize_inner"}).expected_speedup, 1 / 0.8);
  // Hoisted once, nothing costly is left: not proposed again.
  Scenario done("bench/jaxbench/16_mamba2_ssd", recipe_of({"vectorize_inner", "hoist_invariants"}));
  Plan d = done.plan(evidence("compute", 0.05), {"vectorize_inner"});
  EXPECT_NE(d.strategy, "hoist_invariants");
  for (const auto& a : d.alternatives)
    EXPECT_EQ(a.find("hoist_invariants"), std::string::npos) << a;
  // A GEMM has nothing to hoist.
  Scenario gemm("bench/jaxbench/08_gemm", {});
  for (const auto& a : gemm.plan(evidence("compute", 0.05)).alternatives)
    EXPECT_EQ(a.find("hoist_invariants"), std::string::npos) << a;
}

TEST(BuiltinPlanner, MishIsApproximatedAsOneExponential) {
  // 27 with its GEMM register-blocked and the epilogue in registers: Mish's exp, log and tanh
  // (twice per element) are a visible share of the kernel; the identity that needs one exp
  // expects 1.12x compute-bound (1.11x measured).
  Scenario s("bench/jaxbench/27_matmul_mish_mish", recipe_of({"register_block_epilogue"}));
  const std::set<std::string> tried = {"register_block_epilogue", "pack_operand",
                                       "unroll_reduction", "double_buffer_pack", "unroll_inner"};
  Plan p = s.plan(evidence("compute", 0.25), tried);
  EXPECT_EQ(p.strategy, "fast_approximations") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.12);
  EXPECT_NE(p.why.find("2 tanh(log(1 + exp(x))) compositions"), std::string::npos) << p.why;
  // Memory-bound, the saved arithmetic mostly hides behind the loads: 1.04x, after the
  // strategies that cut the traffic.
  EXPECT_NE(s.plan(evidence("memory", 0.25), tried).strategy, "fast_approximations");
  // Applied, nothing is left to approximate.
  Scenario done("bench/jaxbench/27_matmul_mish_mish",
                recipe_of({"register_block_epilogue", "fast_approximations"}));
  Plan d = done.plan(evidence("compute", 0.25), tried);
  EXPECT_NE(d.strategy, "fast_approximations");
  for (const auto& a : d.alternatives)
    EXPECT_EQ(a.find("fast_approximations"), std::string::npos) << a;
  // A GEMM has no transcendental; a softmax has no Mish: the small expectation (1.02x).
  Scenario gemm("bench/jaxbench/08_gemm", {});
  for (const auto& a : gemm.plan(evidence("compute", 0.05)).alternatives)
    EXPECT_EQ(a.find("fast_approximations"), std::string::npos) << a;
}

TEST(BuiltinPlanner, CausalScoresAreComputedPerRowNotAsAWholeSquare) {
  // 01: the scores s_r (a GEMM-like reduction) are read only over j in 0..i + 1. Register
  // blocking them at root would compute the masked half too: it is not proposed; fusing the
  // chain into o's row loop (~3x measured: the causal half, rows in L1) is, then k's transposed
  // copy for the per-row scores, and only then the row max and sum as vectors (a small share).
  Scenario s("bench/jaxbench/01_flash_attention", {});
  Plan p = s.plan(evidence("compute", 0.05));
  EXPECT_EQ(p.strategy, "vectorize_inner") << p.why;
  EXPECT_NE(p.analysis.find("4 other intermediates at root (4 read only in part)"),
            std::string::npos)
      << p.analysis;
  EXPECT_EQ(p.alternatives,
            (std::vector<std::string>{"fuse_into_consumer (~3.0x)", "rfactor_reduction (~1.3x)",
                                      "accumulate_locally (~1.3x)"}));
  Plan f = s.plan(evidence("compute", 0.05), {"vectorize_inner"});
  EXPECT_EQ(f.strategy, "fuse_into_consumer") << f.why;
  EXPECT_DOUBLE_EQ(f.expected_speedup, 3.0);
  EXPECT_NE(f.why.find("4 intermediates are computed whole but read only over ranges that move "
                       "with their reader's row"),
            std::string::npos)
      << f.why;
  // Fused, nothing is left computed whole; the scores, computed per row, now vectorize along j
  // once k is copied transposed per head.
  Scenario fused("bench/jaxbench/01_flash_attention", recipe_of({"fuse_into_consumer"}));
  Plan d = fused.plan(evidence("compute", 0.05), {"vectorize_inner"});
  EXPECT_EQ(d.strategy, "change_layout") << d.why;
  EXPECT_DOUBLE_EQ(d.expected_speedup, 3.0);
  EXPECT_NE(d.analysis.find("(0 read only in part)"), std::string::npos) << d.analysis;
  Plan r = fused.plan(evidence("compute", 0.05), {"vectorize_inner", "change_layout"});
  EXPECT_EQ(r.strategy, "rfactor_reduction") << r.why;
  EXPECT_NE(r.why.find("2 row statistics over ranges that move with the row"), std::string::npos)
      << r.why;
}

TEST(BuiltinPlanner, ADotProductInsideASelectIsTheWorkToVectorize) {
  // 15 (retention) after the vector loops: r's q.k over d sits inside a select (the causal
  // mask), computed per score as one scalar chain: the stage's main work (4x), unlike
  // attention's row max over a moving range (1.3x). With den's row sum of |r| also scalar (a
  // row reduction: one operand, nothing for a register tile to reuse), the rule for row
  // reductions states it; alone, the rule for reductions inside definitions does.
  Scenario s("bench/jaxbench/15_retnet_retention",
             recipe_of({"register_block_epilogue", "vectorize_inner"}));
  Plan p = s.plan(evidence("compute", 0.02));
  EXPECT_EQ(p.strategy, "rfactor_reduction") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 4.0);
  EXPECT_NE(p.why.find("row reductions run as one scalar dependence chain"), std::string::npos)
      << p.why;
}

TEST(BuiltinPlanner, TriedStrategiesAreNotProposedAgain) {
  Scenario s("bench/jaxbench/08_gemm", {});
  Plan p = s.plan(evidence("compute", 0.05), {"register_block"});
  EXPECT_EQ(p.strategy, "reorder_unit_stride");
  p = s.plan(evidence("compute", 0.05), {"register_block", "reorder_unit_stride"});
  EXPECT_EQ(p.strategy, "accumulate_locally");
}

// The time per stage weighs each proposal (Amdahl): 03 with its projections register-blocked
// spends most of its time in the scores' dot products (sc_r, sc_r2: kn is an intermediate, no
// transposed copy applies, so rfactor's vectors do). Unweighted, vectorize_inner's 8x on the
// elementwise stages comes first; weighted, rfactor's 4x on 78% of the time does.
TEST(BuiltinPlanner, TimePerStageWeighsTheProposals) {
  Scenario s("bench/jaxbench/03_mla_attention", recipe_of({"register_block"}));
  Evidence e = evidence("compute", 0.04);
  Plan p = s.plan(e);
  EXPECT_EQ(p.strategy, "vectorize_inner") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 8.0);
  e.stage_shares = {{"sc_r", 0.59}, {"sc_r2", 0.19}, {"y", 0.06},  {"att", 0.03},
                    {"qr", 0.03},   {"pe", 0.01},    {"sc", 0.01}, {"cq", 0.02},
                    {"ck", 0.02},   {"qn", 0.02},    {"vv", 0.02}};
  p = s.plan(e);
  EXPECT_EQ(p.strategy, "rfactor_reduction") << p.why;
  // 4x on sc_r + sc_r2 (78%; untimed stages count 0): 1 / (1 - f + f / 4) = 2.4. (vv, a GEMM
  // read whole, is the register tile's.)
  EXPECT_GT(p.expected_speedup, 2.3);
  EXPECT_LT(p.expected_speedup, 2.6);
  EXPECT_NE(
      p.why.find("of the time is in the stages it changes (ckv_r, den, m, qa_r, sc_r, sc_r2)"),
      std::string::npos)
      << p.why;
  // vectorize_inner's stages (att, pe, qr, sc, ...) hold a few percent: ~1.1x overall.
  ASSERT_FALSE(p.alternatives.empty());
  EXPECT_TRUE(std::any_of(p.alternatives.begin(), p.alternatives.end(), [](const std::string& a) {
    return a.starts_with("vectorize_inner (~1.");
  })) << fmt::format("{}", fmt::join(p.alternatives, "; "));
}

TEST(BuiltinPlanner, MemoryBoundRmsnormGetsVectorPartialSums) {
  Scenario s("bench/jaxbench/12_rmsnorm", {});
  Plan p = s.plan(evidence("memory", 0.2));
  // The row's sum of squares is one scalar chain: rfactor (~4x) outranks vectorizing the
  // elementwise stages (~3x, memory-bound), fusing (~2x) and inlining (~1.5x).
  EXPECT_EQ(p.strategy, "rfactor_reduction");
  EXPECT_DOUBLE_EQ(p.expected_speedup, 4.0);
  EXPECT_GT(p.expected_speedup, 1.0);
  EXPECT_NE(p.why.find("row reductions run as one scalar dependence chain"), std::string::npos)
      << p.why;
  EXPECT_NE(p.bottleneck.find("memory-bound at 20%"), std::string::npos) << p.bottleneck;
  ASSERT_EQ(p.alternatives.size(), 3u);
  EXPECT_EQ(p.alternatives[0], "vectorize_inner (~3.0x)");
  EXPECT_EQ(p.alternatives[1], "fuse_into_consumer (~2.0x)");
  EXPECT_EQ(p.alternatives[2], "inline_elementwise (~1.5x)");
}

TEST(BuiltinPlanner, MemoryBoundRmsnormFusesOnceVectorized) {
  Scenario s("bench/jaxbench/12_rmsnorm", recipe_of({"rfactor_reduction", "vectorize_inner"}));
  Plan p = s.plan(evidence("memory", 0.3));
  EXPECT_EQ(p.strategy, "fuse_into_consumer");
  EXPECT_DOUBLE_EQ(p.expected_speedup, 2.0);
  EXPECT_NE(p.why.find("fusing keeps each row in L1"), std::string::npos) << p.why;
}

TEST(BuiltinPlanner, StopsNearTheRoofline) {
  Scenario s("bench/jaxbench/08_gemm", {});
  Plan p = s.plan(evidence("compute", 0.85));
  EXPECT_EQ(p.strategy, "stop");
  EXPECT_NE(p.why.find("85% of the roofline"), std::string::npos) << p.why;
  p = s.plan(evidence("memory", 0.95));
  EXPECT_EQ(p.strategy, "stop");
  p = s.plan(evidence("compute", 0.6), {}, 0.5);
  EXPECT_EQ(p.strategy, "stop") << "the stop fraction is the caller's";
  p = s.plan(evidence("compute", 0.84));
  EXPECT_EQ(p.strategy, "register_block");
}

TEST(BuiltinPlanner, AReadingAboveTheRooflineIsNoReasonToStop) {
  // Faster than the roof allows: the machine's figures are too low, the distance unknown.
  Scenario s("bench/jaxbench/08_gemm", {});
  Plan p = s.plan(evidence("compute", 1.17));
  EXPECT_EQ(p.strategy, "register_block");
  EXPECT_NE(p.analysis.find("reads 117% of the roofline"), std::string::npos) << p.analysis;
  EXPECT_EQ(s.plan(evidence("compute", 1.0)).strategy, "stop");  // at the roof exactly
}

TEST(BuiltinPlanner, UnmeasuredEvidenceDoesNotStop) {
  Scenario s("bench/jaxbench/08_gemm", {});
  Evidence e;  // no roofline: bound ""
  Plan p = s.plan(e);
  EXPECT_EQ(p.bottleneck, "not measured yet");
  EXPECT_EQ(p.strategy, "register_block");
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.0) << "headroom 1: nothing to promise";
}

TEST(BuiltinPlanner, StopsWhenEverythingWasTried) {
  std::set<std::string> all;
  for (const Strategy& st : strategy_catalog()) all.insert(st.id);
  for (const char* dir : {"bench/jaxbench/08_gemm", "bench/jaxbench/12_rmsnorm",
                          "bench/jaxbench/50_matmul_gelu_softmax"}) {
    Scenario s(dir, {}, 2);
    Plan p = s.plan(evidence("memory", 0.1, 2, 1.0), all);
    EXPECT_EQ(p.strategy, "stop") << dir;
    EXPECT_EQ(p.why, "every strategy the rules suggest was tried from this best or does not apply");
    EXPECT_TRUE(p.knobs.empty());
  }
}

TEST(BuiltinPlanner, FindingsReachTheAnalysis) {
  Scenario s("bench/jaxbench/12_rmsnorm", {});
  Evidence e = evidence("memory", 0.2);
  e.findings = {"hot loop at line 12 not vectorized: complicated access pattern"};
  Plan p = s.plan(e);
  EXPECT_NE(p.analysis.find("complicated access pattern"), std::string::npos) << p.analysis;
}

TEST(BuiltinPlanner, IdleThreadsRankParallelOuterHigh) {
  Scenario s(elementwise_task(), {}, 2);
  // Two threads requested, one CPU busy, nothing parallel.
  Plan p = s.plan(evidence("memory", 0.1, 2, 1.0));
  EXPECT_EQ(p.strategy, "vectorize_inner");
  ASSERT_FALSE(p.alternatives.empty());
  EXPECT_EQ(p.alternatives[0], "parallel_outer (~2.0x)");
  p = s.plan(evidence("memory", 0.1, 2, 1.0), {"vectorize_inner"});
  EXPECT_EQ(p.strategy, "parallel_outer");
  EXPECT_DOUBLE_EQ(p.expected_speedup, 2.0);
  EXPECT_NE(p.why.find("1.0 of 2 CPUs busy"), std::string::npos) << p.why;
}

TEST(BuiltinPlanner, ParallelOuterComesFirstOnceVectorized) {
  Scenario s(elementwise_task(), recipe_of({"vectorize_inner"}), 2);
  Plan p = s.plan(evidence("memory", 0.1, 2, 1.0));
  EXPECT_EQ(p.strategy, "parallel_outer") << p.why;
}

TEST(BuiltinPlanner, OneThreadNeverParallelizes) {
  Scenario s(elementwise_task(), recipe_of({"vectorize_inner"}), 1);
  Plan p = s.plan(evidence("memory", 0.1, 1, 0.2));
  EXPECT_NE(p.strategy, "parallel_outer");
  for (const auto& a : p.alternatives) EXPECT_EQ(a.find("parallel"), std::string::npos) << a;
}

TEST(BuiltinPlanner, BusyThreadsOnAParallelKernelDoNotAskForMore) {
  Scenario s(elementwise_task(), recipe_of({"vectorize_inner", "parallel_outer"}), 2);
  Plan p = s.plan(evidence("memory", 0.3, 2, 1.9));
  EXPECT_NE(p.strategy, "parallel_outer");
  EXPECT_NE(p.strategy, "fuse_parallel_loops");
}

TEST(BuiltinPlanner, PlanJsonCarriesTheDecision) {
  Scenario s("bench/jaxbench/12_rmsnorm", {});
  Plan p = s.plan(evidence("memory", 0.2));
  nlohmann::json j = p.to_json();
  EXPECT_EQ(j["strategy"], "rfactor_reduction");
  EXPECT_EQ(j["knobs"]["lanes"], 16);
  EXPECT_EQ(j["why"], p.why);
  EXPECT_EQ(j["expected_speedup"], 4.0);
  EXPECT_EQ(j["alternatives"].size(), p.alternatives.size());
  EXPECT_EQ(j["bottleneck"], p.bottleneck);
}

TEST(BuiltinPlanner, IsDeterministic) {
  Scenario s("bench/jaxbench/50_matmul_gelu_softmax", {});
  const Evidence e = evidence("compute", 0.1);
  const nlohmann::json first = s.plan(e).to_json();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.plan(e).to_json(), first);
}

// A fusion that only moves work (16's chunk states fused at y's outermost loop, each batch
// computing its whole slice, as at root; y_r2, read whole, into y's rows) expects locality's
// 1.2x compute-bound on those stages, not the 3x of computing only the part of causal scores
// each row reads. Unweighted, the 3x put it before the vectors that gave 2.5x; it measured 1.0x.
// Only y's within-chunk weights (read over j <= t % 64) get the 3x; the states (st over a
// chunk's 64 steps, hs passed chunk to chunk) move whole.
TEST(BuiltinPlanner, FusionThatOnlyMovesWorkExpectsLocalitysGain) {
  Scenario s("bench/jaxbench/16_mamba2_ssd", recipe_of({"hoist_invariants"}));
  Evidence e = evidence("compute", 0.01);
  e.stage_shares = {{"hs", 0.27}, {"st", 0.31}, {"y", 0.08}, {"y_r2", 0.32}, {"st_h", 0.01}};
  const Plan p = s.plan_until("fuse_into_consumer", e);
  ASSERT_EQ(p.strategy, "fuse_into_consumer") << p.why;
  EXPECT_NE(p.why.find("moved whole, for locality only: ~1.2x"), std::string::npos) << p.why;
  EXPECT_NE(p.why.find("ce, da, hs, lc, st, st_h, y_r2 moved whole"), std::string::npos) << p.why;
  // 3x on every stage it changes would be ~2.9x; the moved-whole 90% of the time gets 1.2x.
  EXPECT_LT(p.expected_speedup, 2.0) << p.why;
  EXPECT_GT(p.expected_speedup, 1.0);
}

// Through the brain-neutral entry: the planner replays the best's recipe from the compiled
// task. A best it did not generate (written by another brain) is planned for as the default
// schedule; a task with no TE spec gets a stop that says why.
TEST(BuiltinPlanner, PlansFromTheCompiledTaskWhateverWroteTheBest) {
  const CompiledTask gemm = testing::compiled_at("bench/jaxbench/08_gemm");
  PlanInput in;
  in.task = &gemm;
  in.evidence = evidence("compute", 0.05);
  CandidateMsg written;
  written.kind = SourceKind::written;
  written.source = "// by hand\n";
  in.best = &written;
  const Plan from_written = BuiltinPlanner().plan(in);
  Scenario fresh("bench/jaxbench/08_gemm", recipe_of({}));
  const Plan from_default = fresh.plan(evidence("compute", 0.05), {}, 0.9);
  EXPECT_EQ(from_written.strategy, from_default.strategy);
  EXPECT_EQ(from_written.strategy, "register_block") << from_written.why;

  CompiledTask bare;
  bare.task = gemm.task;
  bare.task.te_spec.clear();
  in.task = &bare;
  const Plan none = BuiltinPlanner().plan(in);
  EXPECT_EQ(none.strategy, "stop");
  EXPECT_NE(none.why.find("has none"), std::string::npos) << none.why;
  EXPECT_TRUE(BuiltinPlanner().needs_te_spec());
}

}  // namespace
}  // namespace kf::agents::builtin
