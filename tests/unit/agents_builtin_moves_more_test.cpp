// The mechanical forms of the catalog's strategies (agents/builtin/moves.h), part 2: vector
// loops, memory traffic, threads; every form's proposals on every task apply and lower; and
// pipeline_facts, which the planner's rules read.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "moves_test_util.h"

namespace kf::agents::builtin {
namespace {

using namespace moves_test;

TEST_F(Tasks, VectorizeInnerVectorizesPureInnermostLoops) {
  EXPECT_EQ(propose("vectorize_inner", default_pipeline(*rmsnorm_)),
            (Lines{"ms: vectorize ms.n 16", "y: vectorize y.d 16"}))
      << "ms_r's innermost loop is its reduction";
  EXPECT_EQ(propose("vectorize_inner", default_pipeline(*gemm_)), Lines{});
  EXPECT_EQ(propose("vectorize_inner", default_pipeline(*softmax_), 1, {{"lanes", 8}}),
            (Lines{"z: vectorize z.o 8", "g: vectorize g.o 8", "e: vectorize e.o 8",
                   "y: vectorize y.o 8"}));
  const sched::Pipeline p = scheduled(*rmsnorm_, "vectorize y.d 16\n");
  EXPECT_EQ(propose("vectorize_inner", p), Lines{"ms: vectorize ms.n 16"}) << "y has one already";
  // A weight panel packed transposed (W_pk[i][o] from W[o, i]) keeps its plain loops: lowering
  // copies it in register-transposed blocks, where a vectorized i would scatter every vector.
  // The plain panel of 08 (stored as it is read) is vectorized.
  const sched::Pipeline packed = scheduled(*gemm_relu_, register_block_text(*gemm_relu_));
  for (const std::string& line : propose("vectorize_inner", packed))
    EXPECT_FALSE(line.starts_with("W_pk:")) << line;
  const sched::Pipeline plain = scheduled(
      *gemm_, register_block_text(*gemm_) + "cache_read B C_acc B_pk\ncompute_at B_pk C.j.o\n");
  const Lines on_plain = propose("vectorize_inner", plain);
  EXPECT_NE(std::find(on_plain.begin(), on_plain.end(), "B_pk: vectorize B_pk.j 16"),
            on_plain.end())
      << ::testing::PrintToString(on_plain);
}

TEST_F(Tasks, ReorderUnitStrideMakesTheGemmIkj) {
  EXPECT_EQ(propose("reorder_unit_stride", default_pipeline(*gemm_)), Lines{"C: reorder C i k j"});
  // x[b, i] * W[o, i]: both operands are unit-stride in i already.
  EXPECT_EQ(propose("reorder_unit_stride", default_pipeline(*gemm_relu_)), Lines{});
  EXPECT_EQ(propose("reorder_unit_stride", default_pipeline(*rmsnorm_)), Lines{});
}

// A stencil reads x[i + a, j + b]: its last index moves with j at unit stride, as B[k, j] does,
// so j goes innermost (then vectorize_inner applies). An index that moves with j at another
// stride (x[i, 2 * j]) or not at all (j - j) is no reason to.
TEST_F(Tasks, ReorderUnitStrideSeesAStencilsShiftedIndex) {
  const Task blur = testing::task_at("bench/outside/blur3x3");
  const sched::Pipeline p = default_pipeline(blur);
  EXPECT_EQ(propose("reorder_unit_stride", p), Lines{"y: reorder y i a b j"});
  Task strided = blur;
  strided.te_spec = "y[i, j] = sum(a in 0..3: x[i + a, 2 * j] * w[a, 0])\n";
  EXPECT_EQ(propose("reorder_unit_stride", default_pipeline(strided)), Lines{});
  Task fixed = blur;
  fixed.te_spec = "y[i, j] = sum(a in 0..3: x[i + a, a + j - j] * w[a, 0])\n";
  EXPECT_EQ(propose("reorder_unit_stride", default_pipeline(fixed)), Lines{});
}

TEST_F(Tasks, AccumulateLocallyGivesTheGemmARowBuffer) {
  EXPECT_EQ(propose("accumulate_locally", default_pipeline(*gemm_)),
            Lines{"C: cache_write C C_row | compute_at C_row C.i"});
  EXPECT_EQ(propose("accumulate_locally", default_pipeline(*rmsnorm_)), Lines{});
}

TEST_F(Tasks, Tile2dTilesTheOuterElementwiseNest) {
  EXPECT_EQ(propose("tile_2d", default_pipeline(*rmsnorm_)), Lines{"y: tile y n d 32 64"});
  EXPECT_EQ(propose("tile_2d", default_pipeline(*rmsnorm_), 1, {{"ti", 16}, {"tj", 128}}),
            Lines{"y: tile y n d 16 128"});
  EXPECT_EQ(propose("tile_2d", default_pipeline(*gemm_)), Lines{}) << "a reduction";
}

TEST_F(Tasks, UnrollInnerNeedsAVectorLoop) {
  EXPECT_EQ(propose("unroll_inner", default_pipeline(*rmsnorm_)), Lines{});
  const sched::Pipeline p = scheduled(*rmsnorm_, "vectorize y.d 16\nvectorize ms.n 16\n");
  EXPECT_EQ(propose("unroll_inner", p), Lines{"y: split y.n n.uo n.ui 4 | unroll y.n.ui"})
      << "ms has a single loop";
}

// ---- Memory traffic -----------------------------------------------------------------------

TEST_F(Tasks, StreamingStoresStreamF32OutputsInWholeVectors) {
  EXPECT_EQ(propose("streaming_stores", default_pipeline(*rmsnorm_)),
            Lines{"y: vectorize y.d 16 | nontemporal y"})
      << "scalar stores cannot bypass the caches: the output's inner loop is vectorized first";
  const sched::Pipeline p = scheduled(*rmsnorm_, "vectorize y.d 16\nvectorize ms.n 16\n");
  EXPECT_EQ(propose("streaming_stores", p), Lines{"y: nontemporal y"}) << "ms is an intermediate";
  const sched::Pipeline done = scheduled(*rmsnorm_, "vectorize y.d 16\nnontemporal y\n");
  EXPECT_EQ(propose("streaming_stores", done), Lines{});
}

TEST_F(Tasks, PrefetchTargetsVectorLoopsThatStreamAnInput) {
  EXPECT_EQ(propose("prefetch_distance", default_pipeline(*rmsnorm_)), Lines{});
  const sched::Pipeline p = scheduled(*rmsnorm_, "vectorize y.d 16\n");
  EXPECT_EQ(propose("prefetch_distance", p), Lines{"y: prefetch y.d 4096"});
  EXPECT_EQ(propose("prefetch_distance", p, 1, {{"distance", 1024}}),
            Lines{"y: prefetch y.d 1024"});
  const sched::Pipeline done = scheduled(*rmsnorm_, "vectorize y.d 16\nprefetch y.d 64\n");
  EXPECT_EQ(propose("prefetch_distance", done), Lines{});
}

TEST_F(Tasks, FastApproximationsMarkEveryStageWithTranscendentals) {
  // 27 (GEMM + Mish + Mish): m and y each have exp, log and tanh; z (the bias add) has none.
  // The judge checks the fast forms (and Mish rewritten as one exp) at every test shape against
  // the task's tolerance.
  const Task mish = testing::task_at("bench/jaxbench/27_matmul_mish_mish");
  EXPECT_EQ(propose("fast_approximations", default_pipeline(mish)),
            (Lines{"m: approximate m", "y: approximate y"}));
  const PipelineFacts f = pipeline_facts(default_pipeline(mish));
  EXPECT_EQ(f.approximable, 2);
  EXPECT_EQ(f.tanh_softplus, 2);
  const sched::Pipeline done = scheduled(mish, "approximate m\napproximate y\n");
  EXPECT_EQ(propose("fast_approximations", done), Lines{});
  EXPECT_EQ(pipeline_facts(done).tanh_softplus, 0);
  EXPECT_EQ(testing::lower_and_judge(mish,
                                     "compute_inline z\napproximate m\ncompute_inline m\n"
                                     "approximate y\nvectorize y.o 16\n"),
            "ok");
  // 50: GELU's erf and softmax's exp, vectorized and scalar (the row max's exp stays scalar).
  EXPECT_EQ(testing::lower_and_judge(*softmax_, "approximate g\napproximate e\nvectorize y.o 16\n"),
            "ok");
  // Nothing to approximate in a GEMM; nothing allowed where the tolerance is tighter than the
  // fast exponential's error leaves room for, or in f64.
  EXPECT_EQ(propose("fast_approximations", default_pipeline(*gemm_)), Lines{});
  Task tight = mish;
  tight.tolerance[DType::f32].rel_l2 = 1e-6;
  EXPECT_EQ(propose("fast_approximations", default_pipeline(tight)), Lines{});
  EXPECT_FALSE(approximation_allowed(tight));
  EXPECT_TRUE(approximation_allowed(mish));
}

TEST_F(Tasks, AlignedLoadsPadsIntermediateRowsThatSplitLines) {
  // 22: the convolution z has 62 output columns at the bench shape (64 - 3 + 1): its rows after
  // the first start mid-line. Once a vector loop reads it, its rows are padded to 64; the
  // 64-wide output and the per-channel statistics (one dim) are left alone.
  const Task conv_norm = testing::task_at("bench/jaxbench/22_conv2d_instancenorm_divide");
  EXPECT_EQ(propose("aligned_loads", default_pipeline(conv_norm)), Lines{})
      << "no vector loop reads z yet";
  const sched::Pipeline p = scheduled(conv_norm, "vectorize y.q 16\n");
  EXPECT_EQ(propose("aligned_loads", p), Lines{"z: align_storage z"});
  EXPECT_EQ(pipeline_facts(p).misaligned_rows, 1);
  EXPECT_EQ(propose("aligned_loads", scheduled(conv_norm, "vectorize y.q 16\nalign_storage z\n")),
            Lines{});
  EXPECT_EQ(testing::lower_and_judge(conv_norm, "vectorize y.q 16\nalign_storage z\n"), "ok");
  // The channel statistics vectorized across channels gather z across its rows: padded rows
  // would only make those strides a power of two (measured 0.96x): not proposed.
  EXPECT_EQ(
      propose("aligned_loads", scheduled(conv_norm, "vectorize y.q 16\nvectorize mu_r.k 16\n")),
      Lines{});
  // 50's rows are 1024 wide: whole lines already.
  EXPECT_EQ(propose("aligned_loads", scheduled(*softmax_, "vectorize y.o 16\n")), Lines{});
}

TEST_F(Tasks, SplitKGivesEachThreadASliceOfALongReduction) {
  // One dot product of a million at the bench shape: parallel_outer would give one thread all
  // of it, so each of the two threads sums half of i into its own partial (accumulated
  // locally, stored once), and the partials are added.
  const Task dot = testing::task_at("tests/golden/tasks/dot");
  EXPECT_EQ(propose("split_k_parallel", default_pipeline(dot), 1), Lines{}) << "one thread";
  EXPECT_EQ(propose("split_k_parallel", default_pipeline(dot), 2),
            Lines{"s: split s.i i.t i.c 524288 | rfactor s.i.t s_sk | reorder s_sk i.t b i.c | "
                  "cache_write s_sk s_sk_acc | compute_at s_sk_acc s_sk.i.t | parallel s_sk.i.t"});
  EXPECT_EQ(testing::lower_and_judge(dot,
                                     "split s.i i.t i.c 2000\nrfactor s.i.t s_sk\n"
                                     "reorder s_sk i.t b i.c\ncache_write s_sk s_sk_acc\n"
                                     "compute_at s_sk_acc s_sk.i.t\nparallel s_sk.i.t\n"),
            "ok");
  // A GEMM has a million outputs to share; a norm's row sums, 16384.
  EXPECT_EQ(propose("split_k_parallel", default_pipeline(*gemm_), 2), Lines{});
  EXPECT_EQ(propose("split_k_parallel", default_pipeline(*rmsnorm_), 2), Lines{});
}

TEST_F(Tasks, AvoidFalseSharingHandsOutWholeLines) {
  // rmsnorm's row statistic ms[n] parallel over n: one float per iteration, so the threads'
  // chunks meet inside a line. In blocks of 16 they meet at line boundaries.
  const sched::Pipeline p = scheduled(*rmsnorm_, "parallel ms.n\n");
  EXPECT_EQ(propose("avoid_false_sharing", p, 1), Lines{}) << "one thread shares nothing";
  EXPECT_EQ(propose("avoid_false_sharing", p, 2),
            Lines{"ms: split ms.n n.ln n.li 16 | parallel ms.n.ln"});
  // y[n, d] parallel over its rows writes whole rows: nothing to do.
  EXPECT_EQ(propose("avoid_false_sharing", scheduled(*rmsnorm_, "parallel y.n\n"), 2), Lines{});
  EXPECT_EQ(testing::lower_and_judge(*rmsnorm_,
                                     "parallel ms.n\nsplit ms.n n.ln n.li 16\n"
                                     "parallel ms.n.ln\n"),
            "ok");
}

TEST_F(Tasks, NumaFirstTouchWritesInParallelWhatParallelLoopsRead) {
  // rmsnorm with y parallel over rows: the row statistic ms (serial) is written by one thread.
  // On two memory nodes its pages would all land on that thread's node; written in parallel,
  // each part lands where its readers run. One node: nothing to do.
  const sched::Pipeline p = scheduled(*rmsnorm_, "parallel y.n\n");
  const Strategy* s = find_strategy("numa_first_touch");
  ASSERT_TRUE(s && s->moves);
  MachineInfo one, two;
  one.numa_nodes = 1;
  two.numa_nodes = 2;
  auto groups = [&](const MachineInfo* m, int threads, const sched::Pipeline& on) {
    auto g = s->moves(on, s->default_knobs(), {.machine = m, .threads = threads});
    KF_CHECK(g.has_value());
    Lines out;
    for (const MoveGroup& x : *g) out.push_back(x.target + ": " + x.moves[0].to_string());
    return out;
  };
  EXPECT_EQ(groups(&two, 2, p), Lines{"ms: parallel ms.n"});
  EXPECT_EQ(groups(&one, 2, p), Lines{});
  EXPECT_EQ(groups(&two, 1, p), Lines{});
  EXPECT_EQ(groups(nullptr, 2, p), Lines{});
  // ms_r is read by ms, serial: its turn comes once ms is parallel. Read by no parallel loop
  // (the default schedule): nothing.
  const std::string both = "parallel y.n\nparallel ms.n\n";
  EXPECT_EQ(groups(&two, 2, scheduled(*rmsnorm_, both)), Lines{"ms_r: parallel ms_r.n"});
  EXPECT_EQ(propose("numa_first_touch", default_pipeline(*rmsnorm_), 2), Lines{});
  EXPECT_EQ(testing::lower_and_judge(*rmsnorm_, both), "ok");
}

TEST_F(Tasks, PhaseDecompositionSplitsAStridedTransposedConvolutionThenTheTileTakesIt) {
  // 28's stride-2 transposed convolution keeps one tap in 2 x 2 x 2. phase_split makes one
  // guard-free convolution per phase, which register_block then tiles as channels x quotient
  // columns (the vectors read the padded input unit-stride). Nothing else has the guard.
  const Task convt = testing::task_at("bench/jaxbench/28_convtranspose3d_layernorm_gelu_scaling");
  const sched::Pipeline p = default_pipeline(convt);
  EXPECT_EQ(propose("phase_decomposition", p), (Lines{"z_r: phase_split z_r z_r_ph"}));
  EXPECT_EQ(propose("register_block", p), Lines{}) << "the gather form is not tileable";
  const PipelineFacts f = pipeline_facts(p);
  EXPECT_EQ(f.phase_splittable, 1);
  EXPECT_EQ(f.phases, 8);
  const sched::Pipeline split = scheduled(convt, "phase_split z_r z_r_ph\n");
  EXPECT_EQ(propose("phase_decomposition", split), Lines{}) << "applied once";
  EXPECT_EQ(pipeline_facts(split).phase_splittable, 0);
  const Lines tile = propose("register_block", split);
  ASSERT_EQ(tile.size(), 1u);
  EXPECT_EQ(tile[0].substr(0, tile[0].find(':')), "z_r_ph");
  EXPECT_NE(tile[0].find("split z_r_ph.k k.o k.i 6"), std::string::npos) << tile[0];
  EXPECT_NE(tile[0].find("vectorize z_r_ph.ow_q.i 16"), std::string::npos) << tile[0];
  EXPECT_EQ(testing::lower_and_judge(convt, "phase_split z_r z_r_ph\n" + schedule_text(tile)),
            "ok");
  // The padded copies are never inlined (their reads would be guarded again).
  for (const std::string& g : propose("inline_elementwise", split))
    EXPECT_EQ(g.find("z_r_ph_"), std::string::npos) << g;
  EXPECT_EQ(propose("phase_decomposition", default_pipeline(*conv_)), Lines{});
  EXPECT_EQ(propose("phase_decomposition", default_pipeline(*gemm_)), Lines{});
}

TEST_F(Tasks, HoistInvariantsLiftsTheDecaysOutOfTheStateLoops) {
  // 16 (chunked SSD): y's within-chunk weight (C.B product, decay, dt) does not read p; st's
  // decay to the chunk's end reads neither n nor p. Each is freed from every variable it does
  // not read, in one hoist. hs, the state passed from chunk to chunk, is a recurrence: its
  // terms stay (hoist refuses a recurrence).
  const Task ssd = testing::task_at("bench/jaxbench/16_mamba2_ssd");
  const sched::Pipeline p = default_pipeline(ssd);
  EXPECT_EQ(propose("hoist_invariants", p), (Lines{"st: hoist st st_h n p", "y: hoist y y_h p"}));
  const PipelineFacts f = pipeline_facts(p);
  EXPECT_EQ(f.hoistable, 2);
  EXPECT_GT(f.hoist_saved, 0.8) << "the decay is most of y's work per point";
  // Applied, nothing costly is left to hoist; a GEMM, a conv and a softmax have nothing to hoist
  // (50's exp reads every variable of its stage).
  const sched::Pipeline done = scheduled(ssd, "hoist st st_h n p\nhoist y y_h p\n");
  EXPECT_EQ(propose("hoist_invariants", done), Lines{});
  EXPECT_EQ(pipeline_facts(done).hoistable, 0);
  EXPECT_EQ(propose("hoist_invariants", default_pipeline(*gemm_)), Lines{});
  EXPECT_EQ(propose("hoist_invariants", default_pipeline(*conv_)), Lines{});
  EXPECT_EQ(propose("hoist_invariants", default_pipeline(*softmax_)), Lines{});
  EXPECT_EQ(testing::lower_and_judge(ssd,
                                     "hoist st st_h n p\nhoist y y_h p\n"
                                     "vectorize y.p 16\nvectorize st.p 16\nvectorize hs.p 16\n"),
            "ok");
}

TEST_F(Tasks, StrengthReduceInvertsDivisorsThatAreTheSameAlongTheInnerLoop) {
  // 50: g divides by the constant sqrt(2), y by its row's sum; the row sum itself divides
  // nothing. 18 (conv + relu + bias) and 08 (GEMM) divide nothing at all.
  EXPECT_EQ(propose("strength_reduce", default_pipeline(*softmax_)),
            (Lines{"g: reciprocal g", "y: reciprocal y"}));
  EXPECT_EQ(propose("strength_reduce", default_pipeline(*gemm_)), Lines{});
  EXPECT_EQ(propose("strength_reduce", default_pipeline(*conv_)), Lines{});
  // Applied once, nothing is left to invert.
  const sched::Pipeline done = scheduled(*softmax_, "reciprocal g\nreciprocal y\n");
  EXPECT_EQ(propose("strength_reduce", done), Lines{});
  EXPECT_EQ(pipeline_facts(default_pipeline(*softmax_)).invertible_divisions, 2);
  EXPECT_EQ(pipeline_facts(done).invertible_divisions, 0);
}

TEST_F(Tasks, RecomputeVsStoreComputesAnInlinedExpOncePerRow) {
  // Nothing is inlined by default: nothing is recomputed.
  EXPECT_EQ(propose("recompute_vs_store", default_pipeline(*softmax_)), Lines{});
  // 50 with e = exp(g - m) inlined: the row sum y_r and the output y both evaluate the exp. It
  // is computed once per row of y, with y_r moved into the same row loop.
  const sched::Pipeline e_inlined = scheduled(*softmax_, "compute_inline e\n");
  EXPECT_EQ(propose("recompute_vs_store", e_inlined),
            Lines{"e: compute_at y_r y.b | compute_at e y.b | vectorize e.o 16"});
  EXPECT_EQ(pipeline_facts(e_inlined).recomputed_transcendentals, 1);
  // g = gelu(z) inlined as well: its erf is read by m, and through e by y_r and y.
  const sched::Pipeline both = scheduled(*softmax_, "compute_inline g\ncompute_inline e\n");
  EXPECT_EQ(propose("recompute_vs_store", both, 1, {{"lanes", 8}}),
            (Lines{"g: compute_at y_r y.b | compute_at m y.b | compute_at g y.b | vectorize g.o 8",
                   "e: compute_at y_r y.b | compute_at e y.b | vectorize e.o 8"}));
  // An inlined stage without a transcendental (z = z_r + bias) is cheap to recompute.
  EXPECT_EQ(
      propose("recompute_vs_store", scheduled(*softmax_, "compute_inline z\ncompute_inline e\n")),
      Lines{"e: compute_at y_r y.b | compute_at e y.b | vectorize e.o 16"});
}

// ---- Threads ----------------------------------------------------------------------------

TEST_F(Tasks, ParallelOuterProposesNothingWithOneThread) {
  for (const Task* t : {rmsnorm_, gemm_, gemm_relu_, softmax_})
    EXPECT_EQ(propose("parallel_outer", default_pipeline(*t), 1), Lines{}) << t->name;
}

TEST_F(Tasks, ParallelOuterParallelizesEveryRootStage) {
  EXPECT_EQ(propose("parallel_outer", default_pipeline(*rmsnorm_), 2),
            (Lines{"ms_r: parallel ms_r.n", "ms: parallel ms.n", "y: parallel y.n"}));
  EXPECT_EQ(propose("parallel_outer", default_pipeline(*gemm_), 4), Lines{"C: parallel C.i"});
  // Stages computed inside another are not parallelized on their own.
  const sched::Pipeline fused = scheduled(*rmsnorm_, "compute_at ms y.n\ncompute_at ms_r y.n\n");
  EXPECT_EQ(propose("parallel_outer", fused, 2), Lines{"y: parallel y.n"});
  const sched::Pipeline done = scheduled(*rmsnorm_, "parallel y.n\n");
  EXPECT_EQ(propose("parallel_outer", done, 2),
            (Lines{"ms_r: parallel ms_r.n", "ms: parallel ms.n"}));
}

TEST_F(Tasks, FuseParallelLoopsNeedsThreadsAndThreeLoops) {
  EXPECT_EQ(propose("fuse_parallel_loops", default_pipeline(*gemm_), 1), Lines{});
  EXPECT_EQ(propose("fuse_parallel_loops", default_pipeline(*gemm_), 2),
            Lines{"C: fuse C i j i_j | parallel C.i_j"});
  EXPECT_EQ(propose("fuse_parallel_loops", default_pipeline(*rmsnorm_), 2), Lines{});
}

// ---- Every form, every task: the proposals apply and lower --------------------------------

TEST_F(Tasks, EveryProposalAppliesAndLowers) {
  for (const Task* t : {rmsnorm_, gemm_, gemm_relu_, softmax_, conv_}) {
    const sched::Pipeline base = default_pipeline(*t);
    const std::string before = base.to_string();
    for (const Strategy& s : strategy_catalog()) {
      if (!s.moves) continue;
      for (int threads : {1, 2}) {
        Recipe r;
        r.steps.push_back({s.id, {}});
        auto real = realize_recipe(base, r, {.machine = nullptr, .threads = threads});
        ASSERT_TRUE(real) << t->name << " " << s.id << ": " << real.error().message();
        EXPECT_TRUE(real->skipped.empty())
            << t->name << " " << s.id << ": " << (real->skipped.empty() ? "" : real->skipped[0]);
        auto src = generate_kernel(*t, real->schedule, {});
        EXPECT_TRUE(src) << t->name << " " << s.id << ": " << src.error().message() << "\n"
                         << real->schedule.to_string();
      }
    }
    EXPECT_EQ(base.to_string(), before) << "a form must not change the pipeline it reads";
  }
}

// ---- pipeline_facts -----------------------------------------------------------------------

TEST_F(Tasks, PipelineFactsOfTheDefaultPipelines) {
  PipelineFacts f = pipeline_facts(default_pipeline(*rmsnorm_));
  EXPECT_EQ(f.stages, 3);
  EXPECT_EQ(f.pure_intermediates_at_root, 1);  // ms
  EXPECT_EQ(f.intermediates_at_root, 2);       // ms_r, ms
  EXPECT_EQ(f.gemm_like, 0);
  EXPECT_EQ(f.row_reductions, 1);  // ms_r
  EXPECT_EQ(f.vectorized, 0);
  EXPECT_EQ(f.unvectorized, 3);
  EXPECT_EQ(f.parallel, 0);
  EXPECT_EQ(f.register_blocked, 0);
  EXPECT_EQ(f.packed, 0);
  EXPECT_EQ(f.recurrences, 0);

  f = pipeline_facts(default_pipeline(*gemm_));
  EXPECT_EQ(f.stages, 1);
  EXPECT_EQ(f.intermediates_at_root, 0);
  EXPECT_EQ(f.gemm_like, 1);
  EXPECT_EQ(f.row_reductions, 0) << "k is innermost, but the dot products are the tile's";
  EXPECT_EQ(f.unvectorized, 1);

  f = pipeline_facts(default_pipeline(*gemm_relu_));
  EXPECT_EQ(f.stages, 2);
  EXPECT_EQ(f.pure_intermediates_at_root, 0);
  EXPECT_EQ(f.intermediates_at_root, 1);  // y_r
  EXPECT_EQ(f.gemm_like, 1);
  EXPECT_EQ(f.unvectorized, 2);

  f = pipeline_facts(default_pipeline(*softmax_));
  EXPECT_EQ(f.stages, 7);
  EXPECT_EQ(f.pure_intermediates_at_root, 3);  // z, g, e
  EXPECT_EQ(f.intermediates_at_root, 6);       // all but y
  EXPECT_EQ(f.gemm_like, 1);                   // z_r
  EXPECT_EQ(f.row_reductions, 2);              // m, y_r (z_r is the tile's)
  EXPECT_EQ(f.unvectorized, 7);
}

TEST_F(Tasks, PipelineFactsFollowTheSchedule) {
  const sched::Pipeline blocked =
      scheduled(*gemm_, register_block_text(*gemm_) +
                            "cache_read B C_acc B_pk\ncompute_at B_pk C.j.o\n"
                            "vectorize B_pk.j 16\nparallel C.j.o\n");
  PipelineFacts f = pipeline_facts(blocked);
  EXPECT_EQ(f.stages, 3);  // C_acc, B_pk, C
  EXPECT_EQ(f.register_blocked, 1);
  EXPECT_EQ(f.packed, 1);
  EXPECT_EQ(f.vectorized, 3);
  EXPECT_EQ(f.unvectorized, 0);
  EXPECT_EQ(f.parallel, 1);
  EXPECT_EQ(f.intermediates_at_root, 0) << "cache stages are not intermediates to fuse";

  const sched::Pipeline fused =
      scheduled(*softmax_,
                "compute_inline z\ncompute_inline g\ncompute_at y_r y.b\ncompute_at e y.b\n"
                "compute_at m y.b\nvectorize y.o 16\n");
  f = pipeline_facts(fused);
  EXPECT_EQ(f.stages, 7);
  EXPECT_EQ(f.pure_intermediates_at_root, 0);
  EXPECT_EQ(f.intermediates_at_root, 1);  // z_r
  EXPECT_EQ(f.vectorized, 1);
  EXPECT_EQ(f.unvectorized, 4) << "z_r, m, e, y_r (inlined stages are not computed)";
}

TEST(PipelineFacts, CountsRecurrences) {
  Task scan = testing::task_at("tests/golden/tasks/scan");
  PipelineFacts f = pipeline_facts(testing::pipeline_of(scan));
  EXPECT_EQ(f.recurrences, 1);
  EXPECT_EQ(f.row_reductions, 0);
  EXPECT_EQ(f.gemm_like, 0);
}

}  // namespace
}  // namespace kf::agents::builtin
