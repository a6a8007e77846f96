// The strategy catalog: one explicit, ordered list (no static registration). Descriptions are
// written for a person or an LLM; `evidence` names what in a profile or a spec points here.
#include "agents/builtin/moves.h"
#include "agents/strategy.h"

namespace kf::agents {

namespace builtin {
#define KF_STRATEGY_UNIT(id) Strategy id();
#include "agents/builtin/strategies/units.def"
#undef KF_STRATEGY_UNIT
}  // namespace builtin

namespace {

using namespace builtin;

Knob lanes_knob() {
  return {"lanes", 16, {8, 16}, "vector lanes (16 = one AVX-512 register of f32)"};
}

// Fusion, vector loops, loop order, threads and register tiles.
std::vector<Strategy> fusion_vector_and_tile_strategies() {
  const Knob lanes = lanes_knob();
  return {
      // ---- Generic, with schedule moves -------------------------------------------------
      {"inline_elementwise",
       "Inline elementwise stages",
       StrategyScope::generic,
       "Substitute every pure elementwise intermediate into its readers so it is never "
       "written to memory and read back; the work moves into the consumer's loop.",
       "Memory-bound; intermediates computed at root; bytes moved far above the compulsory "
       "traffic of inputs and outputs.",
       {},
       moves_inline_elementwise},
      {"fuse_into_consumer",
       "Fuse producers into consumers",
       StrategyScope::generic,
       "Compute each intermediate (e.g. a row's max or sum) inside its consumer's loop nest, at "
       "the deepest loop whose iterations each read their own part of it (a row, a row tile), "
       "for just the region the consumer needs: it stays in L1 between producer and consumer, "
       "and a part no consumer reads (the masked half of causal scores) is never computed.",
       "Memory-bound pipeline of several passes over the same rows; working set beyond L2; "
       "consumers that reduce over a range that moves with the row (causal or windowed "
       "attention).",
       {},
       moves_fuse_into_consumer},
      {"vectorize_inner",
       "Vectorize the innermost loop",
       StrategyScope::generic,
       "Run the innermost unit-stride loop of every stage as SIMD vectors; tails are masked.",
       "Compiler report: hot loops not vectorized; few packed FMAs in the disassembly.",
       {lanes},
       moves_vectorize_inner},
      {"reorder_unit_stride",
       "Reorder for unit stride",
       StrategyScope::generic,
       "Move the loop that walks an operand's contiguous dimension innermost (i-k-j GEMM order), "
       "so loads are unit-stride and the inner loop vectorizes.",
       "A reduction innermost over a strided operand; vectorization report: 'complicated access'.",
       {},
       moves_reorder_unit_stride},
      {"rfactor_reduction",
       "Vector partial sums (rfactor)",
       StrategyScope::generic,
       "Split a row reduction into lanes of independent partial results held in one vector, "
       "combined once at the end: the reduction runs at vector speed without a dependence chain.",
       "Row reductions (norms, softmax sums) not vectorized; latency-bound reduction loop.",
       {lanes},
       moves_rfactor_reduction},
      {"parallel_outer",
       "Parallelize the outer loop",
       StrategyScope::generic,
       "Run the outermost independent loop of each stage on all threads (OpenMP).",
       "Software counters: one CPU busy while several threads were requested.",
       {},
       moves_parallel_outer},
      {"register_block",
       "Register-block the reduction",
       StrategyScope::generic,
       "Accumulate an MR x NR tile of the output in vector registers across the whole reduction "
       "(the micro-kernel of BLAS-style GEMM): each loaded operand vector feeds MR FMAs.",
       "Compute-bound GEMM-like stage far below the FMA peak; loads per FMA above 1.",
       {{"mr", 6, {4, 6, 8, 12}, "rows of the register tile"},
        {"nr", 32, {16, 32, 48, 64}, "columns of the register tile (a multiple of lanes)"},
        lanes},
       moves_register_block},
      {"register_block_epilogue",
       "Register-block with the epilogue fused",
       StrategyScope::generic,
       "Tile the output stage instead of the reduction: the reduction is computed into an MR x "
       "NR register tile at each output tile and the elementwise chain after it (bias, "
       "activation, scaling) is applied to the registers before the one store, so the "
       "reduction's result never goes to memory. The form of a blocked direct convolution "
       "(output channels x output columns, input vectors reused by every channel) and of a GEMM "
       "with its epilogue fused.",
       "A GEMM-like reduction or convolution whose only consumer is an elementwise chain ending "
       "in an output; extra passes over an intermediate as large as the output.",
       {{"mr", 8, {4, 6, 8, 12}, "rows of the register tile"},
        {"nr", 16, {16, 32, 48, 64}, "columns of the register tile (a multiple of lanes)"},
        lanes},
       moves_register_block_epilogue},
      {"pack_operand",
       "Pack an operand panel",
       StrategyScope::generic,
       "Copy the operand panel a register tile streams (K x NR of B, transposed if needed) into "
       "a contiguous buffer once per column tile, so the micro-kernel reads it unit-stride from "
       "L1/L2 and never strides across rows or pages.",
       "Register-blocked GEMM below ~70% of peak; strided or transposed operand (W[o, i]).",
       {lanes},
       moves_pack_operand},
      {"double_buffer_pack",
       "Double-buffer the packed panel",
       StrategyScope::generic,
       "Fill the next column tile's packed panel while the micro-kernel runs on this one: two "
       "copies of the panel, one row of the next filled every few iterations of the "
       "micro-kernel's reduction loop with its inputs prefetched a few rows ahead, the rest at "
       "the end of the tile. The panel's reads from memory (strided rows, page after page) "
       "overlap the FMAs instead of stalling before each tile.",
       "Register-blocked, packed kernel that is compute-bound but below ~92% of peak; a panel "
       "pack per column tile whose operand is far larger than the caches (weights).",
       {{"every", 32, {8, 16, 32, 64}, "micro-kernel iterations per panel row filled"}},
       moves_double_buffer},
  };
}

// Unrolling, local accumulation, cache tiles, and the knobs the autotuner sets.
std::vector<Strategy> unroll_and_tuned_strategies() {
  const Knob lanes = lanes_knob();
  return {
      {"unroll_reduction",
       "Unroll the reduction loop",
       StrategyScope::generic,
       "Unroll the micro-kernel's reduction loop to cut loop overhead and let the compiler "
       "schedule loads ahead of the FMAs.",
       "Register-blocked kernel; loop-control instructions a visible share of the hot loop.",
       {{"unroll", 4, {2, 4, 8}, "reduction steps per iteration"}},
       moves_unroll_reduction},
      {"accumulate_locally",
       "Accumulate in a local buffer",
       StrategyScope::generic,
       "Accumulate a row of a reduction in a local buffer (cache_write at the row loop) and copy "
       "it out once, instead of read-modify-writing the output in memory at every step.",
       "Reduction reordered for unit stride with its accumulator in memory.",
       {},
       moves_accumulate_locally},
      {"tile_2d",
       "Tile for cache",
       StrategyScope::generic,
       "Split two nested loops into tiles so a block of both operands stays in cache while it is "
       "reused (transposes, stencils, outer products).",
       "Working set beyond L2 with reuse across the outer loop.",
       {{"ti", 32, {16, 32, 64}, "tile rows"}, {"tj", 64, {32, 64, 128}, "tile columns"}},
       moves_tile_2d},
      {"unroll_inner",
       "Unroll around the vector loop",
       StrategyScope::generic,
       "Unroll the loop just outside the vectorized one so several independent vectors are in "
       "flight (hides FMA latency: 4 cycles x 2 per cycle needs 8 independent chains).",
       "Vectorized but below peak; one accumulator chain per loop.",
       {{"unroll", 4, {2, 4, 8}, "copies of the body"}},
       moves_unroll_inner},
      {"fuse_parallel_loops",
       "Fuse loops for more parallelism",
       StrategyScope::generic,
       "Fuse the two outer loops into one before parallelizing, when the outermost has fewer "
       "iterations than threads (batch 1) or too few to balance.",
       "Parallel loop extent small against the thread count; threads busy below requested.",
       {},
       moves_fuse_parallel_loops},
      {"strength_reduce",
       "Divide by multiplying with a reciprocal",
       StrategyScope::generic,
       "Replace a division by a value that does not change along the innermost loop (a row's "
       "sum, a norm's scale, a constant such as sqrt(2)) with a multiplication by its "
       "reciprocal, computed once per row or folded by the compiler: a vector divide costs "
       "~8-16x a multiply and does not pipeline.",
       "Divisions in the hot loop (vdivps in the instruction mix) by row statistics or "
       "constants; the tolerance allows one extra rounding.",
       {},
       moves_strength_reduce},
      {"recompute_vs_store",
       "Store instead of recomputing",
       StrategyScope::generic,
       "Compute an inlined intermediate with a transcendental (exp, erf, tanh) once, in a row "
       "buffer at its last reader's outer loop, instead of evaluating it again in every reader "
       "(softmax's exp in both the row sum and the normalization); the row stays in L1 between "
       "the readers. The opposite trade, inlining a cheap value, is inline_elementwise.",
       "Transcendentals evaluated several times per element (an inlined exp read by a row sum "
       "and by the output).",
       {lanes},
       moves_recompute_vs_store},
      // ---- CPU-specific, applied by the built-in brain through the autotuner --------------
      {"pick_vector_width",
       "Pick the vector width (AVX-512 vs AVX2)",
       StrategyScope::cpu,
       "Choose 16-lane (zmm) or 8-lane (ymm) vectors: 512-bit halves the instruction count "
       "where data is wide enough; 256-bit wastes less on short rows and masked tails.",
       "Short rows or many masked tails; target ISA.",
       {lanes},
       nullptr,
       "lanes"},
      {"tile_to_cache_sizes",
       "Tile to L1/L2 from the machine probe",
       StrategyScope::cpu,
       "Size register tiles and packed panels from the measured cache sizes (L1d 48 KiB, L2 "
       "1 MiB here): the packed panel in L2, a tile of A and the accumulators in L1/registers.",
       "Working set of a tile beyond L1/L2 in the profile.",
       {{"nr", 32, {16, 32, 48}, "panel width"}},
       nullptr,
       "nr"},
      {"thread_count",
       "Thread count and chunking",
       StrategyScope::cpu,
       "Use fewer threads when a kernel is too small to amortize the fork/join, all of them "
       "when it is large.",
       "Run time per call near the parallel region's overhead; threads busy below requested.",
       {{"threads", 0, {0}, "threads for the kernel (0 = as requested)"}},
       nullptr,
       "threads"},
  };
}

// Rewrites of the program, layouts, and the forms for other brains.
std::vector<Strategy> rewrite_strategies() {
  const Knob lanes = lanes_knob();
  return {
      {"online_softmax",
       "Two passes into one with online rescaling",
       StrategyScope::generic,
       "Compute a softmax's row maximum and its normalizer in one pass: a running maximum, and a "
       "running sum rescaled by exp(m_old - m_new) each time the maximum grows (one exp per "
       "value). The result is the row's logsumexp, so exp(x - logsumexp) are the probabilities "
       "themselves: the normalizer stage and the division by it go (attention's P @ V / den, a "
       "softmax's e / sum), and max + log(sum) is the logsumexp. Rows are read twice, not three "
       "times.",
       "A row max whose readers take exp(x - max) and sum it over the same range (softmax, "
       "attention, cross entropy, log-sum-exp); several passes per row in the time per stage.",
       {},
       moves_online_softmax,
       "",
       true},
      {"hoist_invariants",
       "Hoist loop invariants",
       StrategyScope::generic,
       "Move computations that do not depend on some of a stage's variables out of their loops "
       "into a stage of their own (a decay factor shared by every channel, a weight shared by "
       "every column): computed once per value instead of once per iteration of the loops "
       "they do not read. Products are regrouped so the invariant factors form one term.",
       "Expensive operations (exp, div, sqrt, a nested reduction) in a stage on values that do "
       "not change along one or more of its loops.",
       {},
       moves_hoist_invariants},
      {"phase_decomposition",
       "Phase-decompose a strided transposed convolution",
       StrategyScope::generic,
       "A stride-s transposed convolution written as a gather tests every tap of every output "
       "and keeps one in s per dim: the others multiply a zero, after a division, a modulo and "
       "a bounds test each. Split each strided output dim into its phase p = o % s and "
       "quotient q = o / s: for one phase only the taps r = s*t + ((p + P) % s) count, each "
       "reading the input at q - t + (p + P) / s, so every phase is a plain convolution "
       "(unit-stride along q) over a zero-padded copy of the input and the taps; the output "
       "reads its phase back (phase_split). The convolutions then register-block like any "
       "other.",
       "A reduction under a guard (o + P - r) % s == 0 reading its input at (o + P - r) / s "
       "(conv_transpose with stride > 1); compute-bound at a tiny fraction of the peak.",
       {},
       moves_phase_split},
      {"change_layout",
       "Change an operand's layout",
       StrategyScope::generic,
       "Store a transposed copy of an operand (once per slice, e.g. per head) so the consumer's "
       "vectors read it unit-stride: attention's scores q.k over d, vectorized along the keys j, "
       "read k[j, d] across rows; the copy k_t[d, j] turns each vector into one load and the "
       "reduction over d into FMAs into a row of results, with no horizontal sum per element.",
       "A reduction whose vector loop would gather an operand (its reduction var last, the "
       "vector var before it); vectorization report: gathers or 'complicated access'.",
       {lanes},
       moves_change_layout},
      {"im2col_gemm",
       "Convolution as GEMM",
       StrategyScope::generic,
       "Lower a convolution to a packed GEMM over (channel x kernel window) so the GEMM "
       "micro-kernel does the work.",
       "Convolution compute-bound and far below peak; large channel counts.",
       {}},
      {"split_k_parallel",
       "Split the reduction across threads",
       StrategyScope::generic,
       "Give each thread a slice of the reduction and combine the partial results when the "
       "output is too small to parallelize (a dot product, a global sum, a GEMV with few "
       "rows): the partials are computed in parallel (rfactor over the slices), each thread's "
       "accumulated in a local buffer and stored once (no line shared while summing), then "
       "combined.",
       "Fewer output elements than threads, a long reduction, idle threads.",
       {},
       moves_split_k_parallel},
      {"tile_k_for_l1",
       "Block the reduction for L1",
       StrategyScope::generic,
       "Split the reduction so the slice of the packed panel one tile uses stays in L1.",
       "Packed panel beyond L1; micro-kernel loads missing L1.",
       {}},
  };
}

// Memory placement and the fast forms of transcendentals.
std::vector<Strategy> memory_strategies() {
  const Knob lanes = lanes_knob();
  return {
      {"avoid_false_sharing",
       "Avoid false sharing",
       StrategyScope::cpu,
       "Give each thread output chunks that are whole cache lines (64 B) so two cores never "
       "write the same line: a parallel loop over the innermost stored dim (one element per "
       "iteration) runs in blocks of a line's elements.",
       "Parallel loop over a stage's contiguous dim; scaling below the thread count.",
       {{"line", 16, {16, 32}, "elements per block (16 f32 = one 64-byte line)"}},
       moves_avoid_false_sharing},
      {"prefetch_distance",
       "Software prefetch",
       StrategyScope::cpu,
       "Prefetch the inputs a fixed distance ahead in the vector loops that stream them, so "
       "DRAM keeps streaming the next rows while a row is computed from L1 (the hardware "
       "prefetcher stops at the row being reread), or for page-crossing and gathered rows.",
       "Memory-bound at a low fraction of bandwidth with compute passes over L1-resident rows "
       "(softmax's exponentials); gathered or paged access.",
       {{"distance",
         4096,
         {1024, 4096, 16384},
         "elements ahead (4096 f32 = 16 KiB: the next row of a 4096-wide norm)"}},
       moves_prefetch},
      {"aligned_loads",
       "Aligned loads and stores",
       StrategyScope::cpu,
       "Pad the rows of an intermediate to whole 64-byte lines (align_storage) so that each "
       "row starts on a line, as the first does: vector loads and stores from a row's start "
       "never split two lines. (Inputs and outputs keep the task's layout.)",
       "Vectorized passes over intermediates whose rows are not a multiple of 16 floats (a "
       "convolution's 62 output columns).",
       {},
       moves_aligned_loads},
      {"fast_approximations",
       "Fast exp/tanh/erf within tolerance",
       StrategyScope::cpu,
       "Evaluate exp, log, tanh, erf and sigmoid with cheaper polynomial forms accurate to the "
       "task's tolerance (an exponential of degree 4: 2.8e-6 relative error), in scalar code too "
       "(no libm call), and rewrite Mish's tanh(log(1 + exp(x))) as n / (n + 2), n = e (e + 2): "
       "one exp and a division instead of an exp, a log and a tanh.",
       "Transcendentals a large share of the work (Mish, GELU, softmax epilogues); libm calls "
       "in scalar loops; a tolerance (rel_l2 >= 1e-5) with room for a few ulps more.",
       {},
       moves_fast_approximations},
      {"streaming_stores",
       "Non-temporal stores",
       StrategyScope::cpu,
       "Write outputs that are not read again with streaming stores so they bypass the cache "
       "and do not evict the inputs: no read-for-ownership, a third less traffic for a kernel "
       "that reads one array and writes one.",
       "Memory-bound, output larger than L3, write-allocate traffic visible.",
       {lanes},
       moves_streaming_stores},
      {"numa_first_touch",
       "First-touch placement",
       StrategyScope::cpu,
       "Initialize buffers on the threads that use them so pages land near them: an "
       "intermediate written by a serial loop and read by parallel loops is written in "
       "parallel too (only on a machine with several memory nodes).",
       "Multi-socket machine; memory-bound parallel kernel scaling poorly.",
       {},
       moves_numa_first_touch},
      {"gather_hoisting",
       "Hoist gathers out of the inner loop",
       StrategyScope::generic,
       "Read a data-dependent index once per row (page table, expert id) and stream the "
       "addressed row contiguously: a loop whose variable indexes a page table through "
       "t / PS runs by pages (hoist_gathers), so the table is read once per page and no "
       "iteration divides.",
       "Data-dependent indexing inside the innermost loop; gathers in the disassembly; an "
       "index read at a variable divided by a size.",
       {},
       moves_gather_hoisting},
  };
}

// The catalog in its fixed order: the groups above, one after another, then the strategies that
// are units of their own (agents/builtin/strategies/: entry, moves and planner rule in one file).
// The units are listed in agents/builtin/strategies/units.def.
std::vector<Strategy> make_catalog() {
  std::vector<Strategy> all;
  for (auto* group : {&fusion_vector_and_tile_strategies, &unroll_and_tuned_strategies,
                      &rewrite_strategies, &memory_strategies})
    for (Strategy& s : group()) all.push_back(std::move(s));
#define KF_STRATEGY_UNIT(id) all.push_back(builtin::id());
#include "agents/builtin/strategies/units.def"
#undef KF_STRATEGY_UNIT
  return all;
}

}  // namespace

const std::vector<Strategy>& strategy_catalog() {
  static const std::vector<Strategy> catalog = make_catalog();
  return catalog;
}

}  // namespace kf::agents
