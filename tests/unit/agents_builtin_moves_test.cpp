// The mechanical forms of the catalog's strategies (agents/builtin/moves.h) on the default
// pipelines of suite tasks, part 1: register tiles, row reductions, fusion. Each proposes the
// moves an expert would write by hand, nothing where it has nothing to do.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "moves_test_util.h"

namespace kf::agents::builtin {
namespace {

using namespace moves_test;

// ---- register_block / pack_operand / unroll_reduction: the GEMM micro-kernel ----------------

TEST_F(Tasks, RegisterBlockOnGemmIsTheBlisMicroKernel) {
  EXPECT_EQ(propose("register_block", default_pipeline(*gemm_)),
            Lines{"C: cache_write C C_acc | split C.i i.o i.i 6 | split C.j j.o j.i 32 | "
                  "reorder C j.o i.o i.i j.i | unroll C.i.i | vectorize C.j.i 16 | "
                  "compute_at C_acc C.i.o | reorder C_acc k i j | unroll C_acc.i | "
                  "vectorize C_acc.j 16"});
  EXPECT_EQ(
      propose("register_block", default_pipeline(*gemm_), 1, {{"mr", 4}, {"nr", 48}, {"lanes", 8}}),
      Lines{"C: cache_write C C_acc | split C.i i.o i.i 4 | split C.j j.o j.i 48 | "
            "reorder C j.o i.o i.i j.i | unroll C.i.i | vectorize C.j.i 8 | "
            "compute_at C_acc C.i.o | reorder C_acc k i j | unroll C_acc.i | "
            "vectorize C_acc.j 8"});
}

TEST_F(Tasks, RegisterBlockTargetsTheReductionStageOfAFusedGemm) {
  EXPECT_EQ(propose("register_block", default_pipeline(*gemm_relu_)),
            Lines{"y_r: cache_write y_r y_r_acc | split y_r.b b.o b.i 6 | split y_r.o o.o o.i 32 | "
                  "reorder y_r o.o b.o b.i o.i | unroll y_r.b.i | vectorize y_r.o.i 16 | "
                  "compute_at y_r_acc y_r.b.o | reorder y_r_acc i b o | unroll y_r_acc.b | "
                  "vectorize y_r_acc.o 16 | cache_read W y_r_acc W_pk | reorder_storage W_pk i o | "
                  "compute_at W_pk y_r.o.o"})
      << "W[o, i] is read across rows along the tile's vector dim o: packed in the same step";
  const Lines on_softmax = propose("register_block", default_pipeline(*softmax_));
  ASSERT_EQ(on_softmax.size(), 1u);
  EXPECT_TRUE(on_softmax[0].starts_with("z_r: cache_write z_r z_r_acc | ")) << on_softmax[0];
}

TEST_F(Tasks, RegisterBlockVectorizesAlongTheOperandsRowsNotALiftedReductionsVar) {
  // 10: y[t, d] = sum(e: wt[t, e] * sum(f: h[t, e, f] * w2[e, f, d])). The inner sum is the
  // stage y_r[t, d, e], its vars in the order t d e (the enclosing reduction's e last). Vectors
  // along e would gather w2 and fill 8 of 16 lanes (NE = 8); the tile's vectors run along d
  // (w2's rows), its rows along t, and y_r is stored with d innermost so the copy-out and y's
  // reads are unit-stride.
  const Task moe = testing::task_at("bench/jaxbench/10_sparse_moe");
  const sched::Pipeline p = default_pipeline(moe);
  const Lines g = propose("register_block", p);
  const auto y_r =
      std::find_if(g.begin(), g.end(), [](const std::string& l) { return l.starts_with("y_r:"); });
  ASSERT_NE(y_r, g.end()) << ::testing::PrintToString(g);
  EXPECT_EQ(*y_r,
            "y_r: cache_write y_r y_r_acc | reorder_storage y_r t e d | "
            "split y_r.t t.o t.i 6 | split y_r.d d.o d.i 32 | reorder y_r e d.o t.o t.i d.i | "
            "unroll y_r.t.i | vectorize y_r.d.i 16 | compute_at y_r_acc y_r.t.o | "
            "reorder y_r_acc e f t d | unroll y_r_acc.t | vectorize y_r_acc.d 16");
  // The whole step applies and lowers.
  Recipe r;
  r.steps.push_back({"register_block", {}});
  auto real = realize_recipe(p, r, {.machine = nullptr, .threads = 1});
  ASSERT_TRUE(real) << real.error().message();
  EXPECT_TRUE(real->skipped.empty()) << (real->skipped.empty() ? "" : real->skipped[0]);
  auto src = generate_kernel(moe, real->schedule, {});
  EXPECT_TRUE(src) << src.error().message();
}

TEST_F(Tasks, RegisterBlockProposesNothingWithoutAGemmOrTwice) {
  EXPECT_EQ(propose("register_block", default_pipeline(*rmsnorm_)), Lines{});
  EXPECT_EQ(propose("register_block", scheduled(*gemm_, register_block_text(*gemm_))), Lines{})
      << "C has its register tile already";
  EXPECT_EQ(propose("register_block", scheduled(*gemm_, "split C.i i.o i.i 8\n")), Lines{})
      << "the form owns the stage's loop nest: it leaves a split one alone";
}

TEST_F(Tasks, RegisterBlockEpilogueIsTheBlockedDirectConvolution) {
  // z_r = conv(x, weight); z = z_r + conv_bias; y = relu(z) + bias. The output y is tiled
  // (8 channels x 16 columns), z is inlined, and z_r is computed into the tile at y's channel
  // tile: each input vector x[n, c, p + r, q + s ..] feeds 8 channels, and the biases and the
  // ReLU are applied to the registers before the one store.
  EXPECT_EQ(propose("register_block_epilogue", default_pipeline(*conv_)),
            Lines{"z_r: compute_inline z | split y.k k.o k.i 8 | split y.q q.o q.i 16 | "
                  "reorder y n p q.o k.o k.i q.i | unroll y.k.i | vectorize y.q.i 16 | "
                  "compute_at z_r y.k.o | reorder z_r n p c r s k q | unroll z_r.k | "
                  "vectorize z_r.q 16"})
      << "x is read along q through q + s: nothing to pack";
}

TEST_F(Tasks, RegisterBlockEpilogueFusesAGemmsEpilogueAndPacksItsWeight) {
  const Lines on_gemm_relu = propose("register_block_epilogue", default_pipeline(*gemm_relu_));
  ASSERT_EQ(on_gemm_relu.size(), 1u);
  EXPECT_TRUE(on_gemm_relu[0].starts_with("y_r: ")) << on_gemm_relu[0];
  EXPECT_NE(on_gemm_relu[0].find("compute_at y_r y.b.o"), std::string::npos) << on_gemm_relu[0];
  EXPECT_NE(on_gemm_relu[0].find("cache_read W y_r W_pk | reorder_storage W_pk i o | "
                                 "compute_at W_pk y.o.o"),
            std::string::npos)
      << on_gemm_relu[0];
  // Where the chain feeds a row reduction (the softmax's max and sum need whole rows), it ends
  // at the last elementwise stage: the GELU g is the tile, written once from the registers.
  EXPECT_EQ(propose("register_block_epilogue", default_pipeline(*softmax_)),
            Lines{"z_r: compute_inline z | split g.b b.o b.i 8 | split g.o o.o o.i 16 | "
                  "reorder g o.o b.o b.i o.i | unroll g.b.i | vectorize g.o.i 16 | "
                  "compute_at z_r g.b.o | reorder z_r i b o | unroll z_r.b | vectorize z_r.o 16 | "
                  "cache_read W z_r W_pk | reorder_storage W_pk i o | compute_at W_pk g.o.o"});
  // Not where the reduction is the output itself, nor where the reduction's own result is read
  // by anything but an elementwise link (register_block's case), nor twice.
  EXPECT_EQ(propose("register_block_epilogue", default_pipeline(*gemm_)), Lines{});
  EXPECT_EQ(propose("register_block_epilogue", default_pipeline(*rmsnorm_)), Lines{});
  const std::string text = register_block_text(*conv_, "register_block_epilogue");
  const sched::Pipeline tiled = scheduled(*conv_, text);
  EXPECT_EQ(propose("register_block_epilogue", tiled), Lines{});
  EXPECT_EQ(propose("register_block", tiled), Lines{}) << "z_r is a register tile already";
  EXPECT_EQ(pipeline_facts(tiled).register_blocked, 1);
}

// 16's y_r2 = sum(n: Cm[b, t, n] * hs[b, h, t / 64, n, p]): hs reads both the vector var p and
// the head h, and the row t only in blocks of 64. The tile's rows are rows t of one chunk, which
// share each hs vector (one [N, P] slice in L1), not heads h, whose slices lie 1 MB apart (eight
// streams per broadcast). Measured at the reduced budget: 0.37x -> 0.96x of the reference.
TEST(RegisterTile, RowsReadingAnOperandInBlocksShareItsVectors) {
  const Task ssd = testing::task_at("bench/jaxbench/16_mamba2_ssd");
  const Lines lines = propose("register_block_epilogue", default_pipeline(ssd));
  auto y = std::find_if(lines.begin(), lines.end(),
                        [](const std::string& l) { return l.starts_with("y_r2: "); });
  ASSERT_NE(y, lines.end()) << ::testing::PrintToString(lines);
  EXPECT_NE(y->find("split y.t t.o t.i 8"), std::string::npos) << *y;
  EXPECT_NE(y->find("unroll y_r2.t"), std::string::npos) << *y;
  EXPECT_EQ(y->find("split y.h"), std::string::npos) << *y;
  // The tile alone, judged at every test shape.
  std::string text = y->substr(std::string("y_r2: ").size());
  for (size_t at = 0; (at = text.find(" | ", at)) != std::string::npos;) text.replace(at, 3, "\n");
  EXPECT_EQ(testing::lower_and_judge(ssd, text + "\n"), "ok") << text;
}

TEST_F(Tasks, RegisterBlockEpilogueComputesTwoReductionsIntoOneTile) {
  // 09: g = x @ Wg, u = x @ Wu, h = g * sigmoid(g) * u, y = h @ Wd. Both projections end in h
  // (read by y's reduction, which needs whole rows): h is the tile, g and u are computed into
  // it (2 x 8 vector accumulators), each with its weight panel packed; neither is written out.
  // The down projection y, with no epilogue, gets register_block's tile in the same step.
  EXPECT_EQ(
      propose("register_block_epilogue", default_pipeline(*swiglu_)),
      (Lines{"g: split h.t t.o t.i 8 | split h.f f.o f.i 16 | reorder h f.o t.o t.i f.i | "
             "unroll h.t.i | vectorize h.f.i 16 | compute_at g h.t.o | reorder g d t f | "
             "unroll g.t | vectorize g.f 16 | cache_read Wg g Wg_pk | compute_at Wg_pk h.f.o | "
             "vectorize Wg_pk.f 16 | compute_at u h.t.o | reorder u d t f | unroll u.t | "
             "vectorize u.f 16 | cache_read Wu u Wu_pk | compute_at Wu_pk h.f.o | "
             "vectorize Wu_pk.f 16",
             "y: cache_write y y_acc | split y.t t.o t.i 8 | split y.e e.o e.i 16 | "
             "reorder y e.o t.o t.i e.i | unroll y.t.i | vectorize y.e.i 16 | "
             "compute_at y_acc y.t.o | reorder y_acc f t e | unroll y_acc.t | "
             "vectorize y_acc.e 16"}));
}

TEST_F(Tasks, PackOperandPacksThePanelTheTileStreams) {
  EXPECT_EQ(propose("pack_operand", default_pipeline(*gemm_)), Lines{}) << "no tile yet";
  const sched::Pipeline blocked = scheduled(*gemm_, register_block_text(*gemm_));
  EXPECT_EQ(propose("pack_operand", blocked),
            Lines{"C: cache_read B C_acc B_pk | compute_at B_pk C.j.o | vectorize B_pk.j 16"});
}

TEST_F(Tasks, PackOperandTransposesAnOutMajorWeight) {
  // y_r[b, o] = sum(i: x[b, i] * W[o, i]): the tile's vector dim o indexes W across rows, so
  // the packed panel is stored i-major (W_pk[i][o]). register_block packs it itself ...
  const std::string text = register_block_text(*gemm_relu_);
  ASSERT_NE(text.find("cache_read W y_r_acc W_pk"), std::string::npos) << text;
  EXPECT_EQ(propose("pack_operand", scheduled(*gemm_relu_, text)), Lines{}) << "packed already";
  // ... and pack_operand proposes the same panel for a tile without it.
  const std::string tile_only = text.substr(0, text.find("cache_read"));
  EXPECT_EQ(propose("pack_operand", scheduled(*gemm_relu_, tile_only)),
            Lines{"y_r: cache_read W y_r_acc W_pk | reorder_storage W_pk i o | "
                  "compute_at W_pk y_r.o.o"});
}

TEST_F(Tasks, DoubleBufferPackFillsTheNextPanelFromTheTilesReductionLoop) {
  EXPECT_EQ(propose("double_buffer_pack", default_pipeline(*gemm_)), Lines{}) << "no pack yet";
  const std::string packed =
      register_block_text(*gemm_) +
      "cache_read B C_acc B_pk\ncompute_at B_pk C.j.o\nvectorize B_pk.j 16\n";
  EXPECT_EQ(propose("double_buffer_pack", scheduled(*gemm_, packed)),
            Lines{"B_pk: double_buffer B_pk C_acc.k 32"});
  EXPECT_EQ(propose("double_buffer_pack", scheduled(*gemm_, packed), 1, {{"every", 16}}),
            Lines{"B_pk: double_buffer B_pk C_acc.k 16"});
  EXPECT_EQ(
      propose("double_buffer_pack", scheduled(*gemm_, packed + "double_buffer B_pk C_acc.k 32\n")),
      Lines{})
      << "double buffered already";
  EXPECT_EQ(propose("double_buffer_pack", scheduled(*gemm_, packed + "parallel C.j.o\n")),
            Lines{"B_pk: double_buffer B_pk C_acc.k 32"})
      << "a parallel panel loop runs as one chunk per thread";
  // 09: the gate's and the up projection's weight panels (at h.f.o) and the down projection's
  // (at y.e.o), each filled from its own tile's reduction loop.
  const sched::Pipeline all_packed = scheduled(
      *swiglu_,
      "split h.t t.o t.i 6\nsplit h.f f.o f.i 64\nreorder h f.o t.o t.i f.i\nunroll h.t.i\n"
      "vectorize h.f.i 16\ncompute_at g h.t.o\nreorder g d t f\nunroll g.t\nvectorize g.f 16\n"
      "cache_read Wg g Wg_pk\ncompute_at Wg_pk h.f.o\ncompute_at u h.t.o\nreorder u d t f\n"
      "unroll u.t\nvectorize u.f 16\ncache_read Wu u Wu_pk\ncompute_at Wu_pk h.f.o\n"
      "cache_write y y_acc\nsplit y.t t.o t.i 6\nsplit y.e e.o e.i 64\n"
      "reorder y e.o t.o t.i e.i\nunroll y.t.i\nvectorize y.e.i 16\ncompute_at y_acc y.t.o\n"
      "reorder y_acc f t e\nunroll y_acc.t\nvectorize y_acc.e 16\n"
      "cache_read Wd y_acc Wd_pk\ncompute_at Wd_pk y.e.o\n");
  EXPECT_EQ(propose("double_buffer_pack", all_packed),
            (Lines{"Wg_pk: double_buffer Wg_pk g.d 32", "Wu_pk: double_buffer Wu_pk u.d 32",
                   "Wd_pk: double_buffer Wd_pk y_acc.f 32"}));
  EXPECT_EQ(pipeline_facts(all_packed).packed_in_loop, 3);
}

TEST_F(Tasks, UnrollReductionUnrollsTheTilesReductionLoop) {
  EXPECT_EQ(propose("unroll_reduction", default_pipeline(*gemm_)), Lines{});
  const sched::Pipeline blocked = scheduled(*gemm_, register_block_text(*gemm_));
  EXPECT_EQ(propose("unroll_reduction", blocked),
            Lines{"C_acc: split C_acc.k k.uo k.ui 4 | unroll C_acc.k.ui"});
  EXPECT_EQ(propose("unroll_reduction", blocked, 1, {{"unroll", 8}}),
            Lines{"C_acc: split C_acc.k k.uo k.ui 8 | unroll C_acc.k.ui"});
  EXPECT_EQ(propose("unroll_reduction",
                    scheduled(*gemm_, register_block_text(*gemm_) +
                                          "split C_acc.k k.uo k.ui 4\nunroll C_acc.k.ui\n")),
            Lines{})
      << "unrolled once already: a second split of k.uo would only nest the unrolling";
  // The fused tile of register_block_epilogue is a register tile too (z_r itself).
  const std::string text = register_block_text(*conv_, "register_block_epilogue");
  EXPECT_EQ(propose("unroll_reduction", scheduled(*conv_, text)),
            Lines{"z_r: split z_r.c c.uo c.ui 4 | unroll z_r.c.ui"});
}

// ---- Row reductions, elementwise chains ---------------------------------------------------

TEST_F(Tasks, RfactorReductionTargetsTheRowSumOfSquares) {
  EXPECT_EQ(propose("rfactor_reduction", default_pipeline(*rmsnorm_)),
            Lines{"ms_r: split ms_r.d d.vo d.vi 16 | rfactor ms_r.d.vi ms_r_rf | "
                  "reorder ms_r_rf n d.vo d.vi | vectorize ms_r_rf.d.vi 16 | "
                  "compute_at ms_r_rf ms_r.n"});
  EXPECT_EQ(propose("rfactor_reduction", default_pipeline(*rmsnorm_), 1, {{"lanes", 8}}),
            Lines{"ms_r: split ms_r.d d.vo d.vi 8 | rfactor ms_r.d.vi ms_r_rf | "
                  "reorder ms_r_rf n d.vo d.vi | vectorize ms_r_rf.d.vi 8 | "
                  "compute_at ms_r_rf ms_r.n"});
}

TEST_F(Tasks, RfactorReductionTargetsEveryRowReductionOfTheSoftmax) {
  // z_r, the GEMM's dot products, is register_block's (each loaded vector feeds several FMAs
  // there, one here).
  const Lines g = propose("rfactor_reduction", default_pipeline(*softmax_));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(g[0].starts_with("m: split m.o o.vo o.vi 16 | rfactor m.o.vi m_rf")) << g[0];
  EXPECT_TRUE(g[1].starts_with("y_r: split y_r.o2 o2.vo o2.vi 16 | rfactor y_r.o2.vi y_r_rf"))
      << g[1];
}

TEST_F(Tasks, ScoresAgainstAnIntermediateGetVectorDotProductsAtRoot) {
  // 03's keys kn[b, j, h, c] are an intermediate: no transposed copy will apply once the scores
  // are fused, so their dot products over c get rfactor's vectors where they are (they were 78%
  // of the time once the projections were register tiles).
  const Task mla = testing::task_at("bench/jaxbench/03_mla_attention");
  const Lines g = propose("rfactor_reduction", default_pipeline(mla));
  EXPECT_TRUE(std::any_of(g.begin(), g.end(), [](const std::string& l) {
    return l.starts_with("sc_r: split sc_r.c c.vo c.vi 16 | rfactor sc_r.c.vi sc_r_rf");
  })) << fmt::format("{}", fmt::join(g, "\n"));
  // Its projections (cq: x[b, s, e] * wq_a[e, t]) are register_block's.
  for (const std::string& l : g) EXPECT_FALSE(l.starts_with("cq:")) << l;
  // 01's keys are an input: its scores still wait to be fused and copied transposed.
  const Task attn = testing::task_at("bench/jaxbench/01_flash_attention");
  for (const std::string& l : propose("rfactor_reduction", default_pipeline(attn)))
    EXPECT_FALSE(l.starts_with("s_r:")) << l;
}

TEST_F(Tasks, RfactorReductionSkipsVectorizedReductions) {
  const sched::Pipeline p = scheduled(*rmsnorm_, "vectorize ms_r.n 16\n");
  EXPECT_EQ(propose("rfactor_reduction", p), Lines{});
}

TEST_F(Tasks, RfactorTwiceDoesNotApply) {
  const sched::Pipeline once = scheduled(
      *rmsnorm_,
      "split ms_r.d d.vo d.vi 16\nrfactor ms_r.d.vi ms_r_rf\nreorder ms_r_rf n d.vo d.vi\n"
      "vectorize ms_r_rf.d.vi 16\ncompute_at ms_r_rf ms_r.n\n");
  // The form sees ms_r's lane-combining loop as another row reduction, but the schedule layer
  // refuses the second rfactor, so the planner never picks it twice.
  Recipe again;
  again.steps.push_back({"rfactor_reduction", {}});
  auto r = realize_recipe(once, again, {});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->applied_groups, std::vector<int>{0});
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_TRUE(r->skipped[0].starts_with("rfactor_reduction on ms_r: ")) << r->skipped[0];
}

TEST_F(Tasks, InlineElementwiseInlinesPureIntermediatesOnly) {
  // z, g, e are elementwise; m and y_r are reductions, z_r the GEMM: those stay.
  EXPECT_EQ(propose("inline_elementwise", default_pipeline(*softmax_)),
            (Lines{"z: compute_inline z", "g: compute_inline g", "e: compute_inline e"}));
  EXPECT_EQ(propose("inline_elementwise", default_pipeline(*rmsnorm_)),
            Lines{"ms: compute_inline ms"});
  EXPECT_EQ(propose("inline_elementwise", default_pipeline(*gemm_)), Lines{});
  EXPECT_EQ(propose("inline_elementwise", default_pipeline(*gemm_relu_)), Lines{});
}

TEST_F(Tasks, InlineElementwiseKeepsAnExpThatItsReaderWouldRecompute) {
  // 01 (causal attention): o[b, h, i, d] = sum(j: pe[b, h, i, j] * v[b, h, j, d]) reads each
  // exponential once per d, and its d loop runs outside j: inlined, pe's exp would be evaluated
  // D times over. The row max m and sum den keep their moving ranges (0..i + 1) inside their
  // definitions: inlined, every read would run a whole row's loop again (into pe, once per j).
  // The scaled scores s, read once by m and pe, are still inlined; rmsnorm's ms[n], read along
  // d inside the row loop n that indexes it, too (the compiler keeps it in a register).
  const Task attn = testing::task_at("bench/jaxbench/01_flash_attention");
  const sched::Pipeline p = default_pipeline(attn);
  EXPECT_EQ(propose("inline_elementwise", p), Lines{"s: compute_inline s"});
  const PipelineFacts f = pipeline_facts(p);
  EXPECT_EQ(f.pure_intermediates_at_root, 1);
  EXPECT_EQ(f.intermediates_at_root, 5) << "s_r, s, m, pe, den";
  // Vectorizing o along d keeps d outside j: pe is still kept.
  EXPECT_EQ(propose("inline_elementwise", scheduled(attn, "vectorize o.d 16\n")),
            Lines{"s: compute_inline s"});
  EXPECT_EQ(propose("inline_elementwise", default_pipeline(*rmsnorm_)),
            Lines{"ms: compute_inline ms"});
}

TEST_F(Tasks, FuseIntoConsumerComputesCausalScoresPerRow) {
  // 01: o reads den[b, h, i] and pe[b, h, i, j] with j in 0..i + 1. Each row i of o reads its own
  // row of them, and its d loop would read that row again: the chain lands at o.i, where region
  // inference narrows the scores to the causal half (j in 0..i + 1), never computed twice.
  const Task attn = testing::task_at("bench/jaxbench/01_flash_attention");
  EXPECT_EQ(propose("fuse_into_consumer", default_pipeline(attn)),
            (Lines{"den: compute_at den o.i", "pe: compute_at pe o.i", "m: compute_at m o.i",
                   "s: compute_at s o.i", "s_r: compute_at s_r o.i"}));
  EXPECT_EQ(testing::lower_and_judge(attn,
                                     "compute_at den o.i\ncompute_at pe o.i\ncompute_at m "
                                     "o.i\ncompute_at s o.i\ncompute_at s_r o.i\n"),
            "ok");
}

TEST_F(Tasks, PagedScoresFusedPerHeadGetVectorDotProducts) {
  // 06: the keys are gathered through the page table, so no transposed copy applies, at root
  // or fused: the scores' dot products over d get rfactor's vectors either way (they were one
  // scalar chain per score: 0.39x of the reference, 2.2x with them).
  const Task paged = testing::task_at("bench/jaxbench/06_paged_attention");
  const Lines at_root = propose("rfactor_reduction", default_pipeline(paged));
  EXPECT_TRUE(std::any_of(at_root.begin(), at_root.end(),
                          [](const std::string& g) { return g.starts_with("s_r:"); }));
  const std::string fused =
      "compute_at den o.h\ncompute_at pe o.h\ncompute_at m o.h\ncompute_at s o.h\n"
      "compute_at s_r o.h\n";
  const sched::Pipeline p = scheduled(paged, fused);
  EXPECT_EQ(propose("change_layout", p), Lines{});
  const Lines g = propose("rfactor_reduction", p);
  ASSERT_FALSE(g.empty());
  EXPECT_EQ(g[0],
            "s_r: split s_r.d d.vo d.vi 16 | rfactor s_r.d.vi s_r_rf | "
            "reorder s_r_rf n h t d.vo d.vi | vectorize s_r_rf.d.vi 16 | "
            "compute_at s_r_rf s_r.t");
  EXPECT_EQ(pipeline_facts(p).row_reductions, 1);
  const std::string text = fused + schedule_text(g);
  EXPECT_EQ(testing::lower_and_judge(paged, text), "ok");
}

TEST_F(Tasks, RaggedScoresFusedWithTheirIndexStagesGetVectorDotProducts) {
  // 07: fuse_into_consumer also brings the index stages in (seq at o.r, pos at o.h). rfactor's
  // partials of the scores are computed where the scores are, so they stay inside seq's loop
  // (at root they would read seq outside it, and the group was refused: 0.89x of the reference,
  // 2.3x with the vectors).
  const Task ragged = testing::task_at("bench/jaxbench/07_ragged_paged_attention");
  const std::string fused =
      "compute_at den o.h\ncompute_at pe o.h\ncompute_at m o.h\ncompute_at s o.h\n"
      "compute_at s_r o.h\ncompute_at pos o.h\ncompute_at seq o.r\n";
  const Lines g = propose("rfactor_reduction", scheduled(ragged, fused));
  ASSERT_FALSE(g.empty());
  EXPECT_TRUE(g[0].starts_with("s_r: split s_r.d d.vo d.vi 16 | rfactor s_r.d.vi s_r_rf")) << g[0];
  const std::string text = fused + schedule_text(g);
  EXPECT_EQ(testing::lower_and_judge(ragged, text), "ok");
}

TEST_F(Tasks, NoRegisterTileWhereItsVectorsWouldGather) {
  // 28's transposed convolution reads x at (ow + 1 - e) / 2: a tile's vectors along ow would
  // gather x lane by lane and select per lane (it ran at 0.17x of the naive schedule). Neither
  // register tile targets it; an nn.Linear weight W[o, i] (packed transposed) and a
  // convolution's x[.., ow + kw] still get theirs. Nor does a row sum, which reuses nothing.
  const Task deconv = testing::task_at("bench/jaxbench/28_convtranspose3d_layernorm_gelu_scaling");
  for (const char* form : {"register_block", "register_block_epilogue"})
    for (const std::string& g : propose(form, default_pipeline(deconv)))
      EXPECT_FALSE(g.starts_with("z_r:")) << form << ": " << g;
  EXPECT_FALSE(propose("register_block_epilogue", default_pipeline(*conv_)).empty());
  const Task mish = testing::task_at("bench/jaxbench/27_matmul_mish_mish");
  EXPECT_FALSE(propose("register_block_epilogue", default_pipeline(mish)).empty());
  // 17's t[i, j, d] = sum(k: lf[i, k, d] * rt[j, k, d]): both operands read the columns d, but
  // lf does not read the rows j, so each of its vectors feeds every row of the tile.
  const Task triangle = testing::task_at("bench/jaxbench/17_triangle_multiplication");
  bool t_tiled = false;
  for (const std::string& g : propose("register_block", default_pipeline(triangle)))
    t_tiled = t_tiled || g.starts_with("t: cache_write t t_acc");
  EXPECT_TRUE(t_tiled);
  // 15's den_r = sum(j: abs(r[b, h, i, j])) reads one tensor: nothing for a tile to reuse.
  const Task retention = testing::task_at("bench/jaxbench/15_retnet_retention");
  for (const char* form : {"register_block", "register_block_epilogue"})
    for (const std::string& g : propose(form, default_pipeline(retention)))
      EXPECT_FALSE(g.starts_with("den_r:")) << form << ": " << g;
}

TEST_F(Tasks, GatherHoistingMarksTheStagesThatReadThroughThePageTable) {
  // 06: the scores and the output read k_pages and v_pages at page_table[n, t / PS]. The
  // softmax statistics read no gather. Once the scores' dot products are rfactored into s_r_rf
  // (computed at s_r.t), s_r_rf holds the reads; marked before that, s_r's mark covers them.
  const Task paged = testing::task_at("bench/jaxbench/06_paged_attention");
  EXPECT_EQ(propose("gather_hoisting", default_pipeline(paged)),
            (Lines{"s_r: hoist_gathers s_r", "o: hoist_gathers o"}));
  const std::string fused =
      "compute_at den o.h\ncompute_at pe o.h\ncompute_at m o.h\ncompute_at s o.h\n"
      "compute_at s_r o.h\nsplit s_r.d d.vo d.vi 16\nrfactor s_r.d.vi s_r_rf\n"
      "reorder s_r_rf n h t d.vo d.vi\nvectorize s_r_rf.d.vi 16\ncompute_at s_r_rf s_r.t\n";
  EXPECT_EQ(propose("gather_hoisting", scheduled(paged, fused)),
            (Lines{"s_r_rf: hoist_gathers s_r_rf", "o: hoist_gathers o"}));
  const std::string marked = fused + "hoist_gathers s_r_rf\nhoist_gathers o\n";
  EXPECT_EQ(propose("gather_hoisting", scheduled(paged, marked)), Lines{});
  EXPECT_EQ(pipeline_facts(scheduled(paged, marked)).paged_gathers, 0);
  EXPECT_EQ(testing::lower_and_judge(paged, marked + "vectorize o.d 16\n"), "ok");
  // Marked before the rfactor: s_r_rf, computed in s_r's loop over t, is covered by s_r's mark.
  const std::string first = "hoist_gathers s_r\nhoist_gathers o\n" + fused;
  EXPECT_EQ(propose("gather_hoisting", scheduled(paged, first)), Lines{});
  EXPECT_EQ(testing::lower_and_judge(paged, first), "ok");
  // A task without page tables: nothing to do.
  EXPECT_EQ(propose("gather_hoisting", default_pipeline(*rmsnorm_)), Lines{});
}

TEST_F(Tasks, CausalAttentionRowsVectorizeTheirReductionsAndCopyKTransposed) {
  // 01 with the chain fused per row: m's max and den's sum over j in 0..i + 1 stay inside their
  // definitions. Each reads its row at consecutive j: vector partial results; vectorizing m's
  // row var instead would gather. o reads v[b, h, j, d] across rows: it vectorizes along d.
  const Task attn = testing::task_at("bench/jaxbench/01_flash_attention");
  const std::string fused =
      "compute_at den o.i\ncompute_at pe o.i\ncompute_at m o.i\ncompute_at s o.i\n"
      "compute_at s_r o.i\n";
  // At root too (the flag goes with the stage when it is fused).
  EXPECT_EQ(propose("rfactor_reduction", default_pipeline(attn)),
            (Lines{"m: vectorize_reductions m 16", "den: vectorize_reductions den 16"}));
  const sched::Pipeline p = scheduled(attn, fused);
  EXPECT_EQ(propose("rfactor_reduction", p),
            (Lines{"m: vectorize_reductions m 16", "den: vectorize_reductions den 16"}));
  EXPECT_EQ(propose("vectorize_inner", p),
            (Lines{"s: vectorize s.j 16", "pe: vectorize pe.j 16", "o: vectorize o.d 16"}));
  // The scores reduce over d with k[b, h, j, d] read across its rows along j: k is copied
  // transposed once per head (every row i reads it), d goes outside j, j becomes the vectors.
  EXPECT_EQ(propose("change_layout", p),
            Lines{"s_r: cache_read k s_r k_t | reorder_storage k_t b h d j | compute_at k_t o.h | "
                  "reorder s_r b h i d j | vectorize s_r.j 16"});
  const PipelineFacts f = pipeline_facts(p);
  EXPECT_EQ(f.inline_row_reductions, 2);
  EXPECT_EQ(f.row_reductions, 0);
  EXPECT_EQ(f.strided_operands, 1);
  const std::string vec = fused + "vectorize_reductions m 16\nvectorize_reductions den 16\n" +
                          "cache_read k s_r k_t\nreorder_storage k_t b h d j\n" +
                          "compute_at k_t o.h\nreorder s_r b h i d j\nvectorize s_r.j 16\n";
  EXPECT_EQ(propose("rfactor_reduction", scheduled(attn, vec)), Lines{});
  EXPECT_EQ(propose("change_layout", scheduled(attn, vec)), Lines{});
  EXPECT_EQ(testing::lower_and_judge(attn, vec + "vectorize o.d 16\nvectorize pe.j 16\n"), "ok");
}

TEST_F(Tasks, FuseIntoConsumerKeepsARegisterTileWhole) {
  // 01 with its scores register-blocked at root (4 x 16 tiles of s): fused into o's row loop, a
  // tile of 4 rows would shrink to one. Its readers (m, pe) are computed inside o, so o's own
  // loops say nothing of how they index s: the tile host stays at root. The chain after it
  // still lands in the row loop.
  const Task attn = testing::task_at("bench/jaxbench/01_flash_attention");
  const sched::Pipeline tiled =
      scheduled(attn,
                "split s.i i.o i.i 4\nsplit s.j j.o j.i 16\nreorder s b h j.o i.o i.i j.i\n"
                "unroll s.i.i\nvectorize s.j.i 16\ncompute_at s_r s.i.o\n");
  EXPECT_EQ(propose("fuse_into_consumer", tiled),
            (Lines{"den: compute_at den o.i", "pe: compute_at pe o.i", "m: compute_at m o.i"}));
}

TEST_F(Tasks, FuseIntoConsumerLeavesAGemmTileAtRootAndFusesTheSoftmaxRows) {
  // 50 once its GEMM + GELU is register-tiled (6 x 64 tiles of g, rows along b) and the
  // softmax vectorized: y's row loop walks g's tiled rows, so g stays at root (fused there it
  // ran 85 ms against 21); the softmax's max, exponentials and sum go into y's rows, where a
  // row stays in L1 between its passes (1.03-1.04x side by side).
  const std::string best =
      "compute_inline z\nsplit g.b b.o b.i 6\nsplit g.o o.o o.i 64\nreorder g o.o b.o b.i o.i\n"
      "unroll g.b.i\nvectorize g.o.i 16\ncompute_at z_r g.b.o\nreorder z_r i b o\n"
      "unroll z_r.b\nvectorize z_r.o 16\ncache_read W z_r W_pk\nreorder_storage W_pk i o\n"
      "compute_at W_pk g.o.o\nsplit m.o o.vo o.vi 16\nrfactor m.o.vi m_rf\n"
      "reorder m_rf b o.vo o.vi\nvectorize m_rf.o.vi 16\ncompute_at m_rf m.b\n"
      "split y_r.o2 o2.vo o2.vi 16\nrfactor y_r.o2.vi y_r_rf\nreorder y_r_rf b o2.vo o2.vi\n"
      "vectorize y_r_rf.o2.vi 16\ncompute_at y_r_rf y_r.b\nvectorize e.o 16\nvectorize y.o 16\n";
  const sched::Pipeline p = scheduled(*softmax_, best);
  EXPECT_EQ(propose("fuse_into_consumer", p),
            (Lines{"y_r: compute_at y_r y.b", "e: compute_at e y.b", "m: compute_at m y.b"}));
  EXPECT_EQ(testing::lower_and_judge(*softmax_, best + "compute_at y_r y.b\ncompute_at e y.b\n"
                                                       "compute_at m y.b\n"),
            "ok");
}

TEST_F(Tasks, FuseIntoConsumerNeverComputesAProducerAgainPerRow) {
  // 03 with its projections register-tiled: y's tile accumulator (computed at y.s.o, inside the
  // column tiles e.o) reads att[b, s, h, c], which no column reads on its own, and att reads the
  // value projection vv[b, j, h, c] and the rotated keys kr[b, j, r] over every key j <= i. The
  // attention chain went to y.s.o (the accumulator's loop) and was computed again for every
  // column tile and, for vv and kr, every block of six rows: the candidate ran past the time
  // limit, twice per run. Now only loops whose iterations read their own part of a stage (through
  // the vars the host fixes in its readers) take it: the batch loop.
  const Task mla = testing::task_at("bench/jaxbench/03_mla_attention");
  const Lines tiles = propose("register_block", default_pipeline(mla));
  // vv is read over prefixes of the keys that together cover all of it: no fusion computes
  // less of it, so it is a register tile like the other projections.
  EXPECT_TRUE(std::any_of(tiles.begin(), tiles.end(), [](const std::string& l) {
    return l.starts_with("vv: cache_write vv");
  })) << fmt::format("{}", fmt::join(tiles, "\n"));
  const std::string blocked = schedule_text(tiles);
  const Lines g = propose("fuse_into_consumer", scheduled(mla, blocked));
  for (const char* chain :
       {"att: compute_at att y.b", "sc_r: compute_at sc_r y.b", "kr: compute_at kr y.b"})
    EXPECT_TRUE(std::find(g.begin(), g.end(), chain) != g.end())
        << chain << " in\n"
        << fmt::format("{}", fmt::join(g, "\n"));
  for (const std::string& l : g) EXPECT_EQ(l.find("y.s.o"), std::string::npos) << l;
  // Where the reads do move with the host's loop, the stage still follows it: qa's row sum of
  // squares per row s.
  EXPECT_TRUE(std::find(g.begin(), g.end(), "qa_r: compute_at qa_r qa.s") != g.end());
  EXPECT_EQ(testing::lower_and_judge(mla, blocked + schedule_text(g)), "ok");
}

TEST_F(Tasks, FuseIntoConsumerLeavesAColumnStatisticAtRoot) {
  // 31 (GEMM, batch norm over the rows b, GELU, ReLU) tiled and vectorized: v[b, o] goes into
  // y's rows, but the column mean mu[o] and variance var[o] it reads are the same for every row.
  // At y.b they were computed again per row (a timeout at 2 s against the best's 22 ms).
  const Task t = testing::task_at("bench/jaxbench/31_gemm_batchnorm_gelu_relu");
  const std::string best =
      "split z.b b.o b.i 8\nsplit z.o o.o o.i 16\nreorder z o.o b.o b.i o.i\nunroll z.b.i\n"
      "vectorize z.o.i 16\ncompute_at z_r z.b.o\nreorder z_r i b o\nunroll z_r.b\n"
      "vectorize z_r.o 16\ncache_read W z_r W_pk\nreorder_storage W_pk i o\n"
      "compute_at W_pk z.o.o\nvectorize mu.o 16\nvectorize var.o 16\nvectorize v.o 16\n"
      "vectorize y.o 16\n";
  EXPECT_EQ(propose("fuse_into_consumer", scheduled(t, best)), Lines{"v: compute_at v y.b"});
}

TEST_F(Tasks, FuseIntoConsumerLandsTheChainInTheRowLoop) {
  EXPECT_EQ(propose("fuse_into_consumer", default_pipeline(*rmsnorm_)),
            (Lines{"ms: compute_at ms y.n", "ms_r: compute_at ms_r y.n"}));
  EXPECT_EQ(propose("fuse_into_consumer", default_pipeline(*gemm_relu_)),
            Lines{"y_r: compute_at y_r y.b"});
  EXPECT_EQ(propose("fuse_into_consumer", default_pipeline(*softmax_)),
            (Lines{"y_r: compute_at y_r y.b", "e: compute_at e y.b", "m: compute_at m y.b",
                   "g: compute_at g y.b", "z: compute_at z y.b", "z_r: compute_at z_r y.b"}));
  EXPECT_EQ(propose("fuse_into_consumer", default_pipeline(*gemm_)), Lines{});
}

}  // namespace
}  // namespace kf::agents::builtin
