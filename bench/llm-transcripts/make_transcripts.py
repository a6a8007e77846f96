#!/usr/bin/env python3
"""Writes the scripted expert transcripts for the hard JaxBench tasks from kernels/*.cpp (run it
after editing a kernel; the JSON files are checked in). Each transcript is what a good model
would answer `kforge optimize --brain llm`: one plan (analysis, bottleneck, strategy, expected
effect), the kernel in one ```cpp block, then a stop plan. scripts/llm-expert-check.sh serves
them with `kforge llm-serve` and judges the kernels for real."""
import json
import pathlib

here = pathlib.Path(__file__).parent


def plan(analysis, bottleneck, strategy, effect):
    return (f"## Analysis\n{analysis}\n## Bottleneck\n{bottleneck}\n"
            f"## Strategy\n{strategy}\n## Expected effect\n{effect}\n")


def code(task, words):
    src = (here / "kernels" / f"{task}.cpp").read_text()
    return f"{words}\n\n```cpp\n{src}```\n"


def stop(why):
    return plan(why, "Arithmetic: the kernel runs its FMAs from registers.", "stop",
                "1x: no plan left that I expect to pay for its evaluation.")


PLANS = {
    "01_flash_attention": plan(
        "The reference computes each query row in three passes over its keys (scores, exp and "
        "sum, P.V) with scalar dot products of length D, and keeps a full row of scores. The "
        "library baseline materializes the whole S x S score matrix per head (4 MiB at the bench "
        "shape), masks half of it and runs softmax and a second GEMM over it: three trips "
        "through memory for data that is produced and consumed once, and half of the GEMM work "
        "on masked keys.",
        "Memory traffic of the materialized scores, and scalar dot products in the reference.",
        "Write a flash-attention kernel: per head, transpose K once so scores are a register "
        "tile of 6 query rows x 64 keys (24 zmm accumulators, broadcast q, contiguous K); go "
        "over key blocks of 64 up to the diagonal only; keep a running max and sum per row and "
        "rescale the output by 2^(m_old - m_new); compute p = 2^(s - m) in registers with a "
        "vector exp2 and the causal mask as a lane mask; then accumulate o += p.V for the same "
        "6 rows x 64 output columns in registers, in the same loop nest. Fold 1/sqrt(D) and "
        "log2(e) into one scale. Group 4 row tiles per query block so each K and V block is "
        "reused from L1. Divide by the sum once at the end. Mask the tails of D and of the key "
        "blocks; repeat the last row for a short row tile.",
        "10x over the reference and 3x over the baseline: half the work (causal blocks only), "
        "no score matrix in memory, and both GEMMs at register-tile FMA rates."),
    "10_sparse_moe": plan(
        "The reference runs both chosen experts token by token: for every token it streams "
        "two experts' W1, W3 and W2 (2 x 11 MiB at the bench shape) from memory to do one "
        "vector-matrix product with each, so the kernel is bound by DRAM bandwidth at about "
        "two flops per byte. The baseline groups tokens per expert but runs silu, the product "
        "and the weighting as separate passes over intermediates.",
        "Weight bandwidth: every weight is read once per token instead of once per expert.",
        "Route all tokens first and group them by expert (counting sort). For each expert, "
        "gather its tokens' rows into a contiguous matrix, pack each weight panel contiguously "
        "(the weights' rows are a page or more apart), and run two blocked GEMMs: "
        "H = silu(X W1) * (X W3) with a register tile of 6 rows x 32 columns of W1 and the same "
        "32 columns of W3 (24 accumulators), applying the SwiGLU in registers before H is "
        "stored; then Y = H W2 with a 6 x 64 tile whose epilogue scatter-adds weight * row into "
        "y[token]. Masked loads and stores for column tails; repeat the last row for a short "
        "row tile. Split column panels across threads so no two write the same element.",
        "30x over the reference (each weight read once per expert and reused by 6 tokens from "
        "registers) and on par with or faster than the baseline's sgemm calls, since the "
        "SwiGLU and the weighting are fused into the GEMM epilogues."),
    "18_conv2d_relu_biasadd": plan(
        "The reference is a seven-deep scalar loop: one output at a time, a dependent chain of "
        "C * R * S adds, no vectorization across output columns. The library baseline runs "
        "oneDNN's convolution with reorders to a blocked layout and two more passes for the "
        "ReLU and the bias.",
        "A serial add chain per output and no SIMD in the reference; extra passes and reorders "
        "in the baseline.",
        "Write a direct convolution with register tiles of output channels x output columns of "
        "one output row: 8 channels x 32 columns (16 zmm accumulators) when K is a multiple of "
        "8, else 6 x 64; pack the weights per call into channel groups, [group][c][r][s][8], "
        "so each tap's weights are adjacent broadcasts; for each (c, r, s) load the input row "
        "shifted by s and do the FMAs. Run all channel groups of a column block back to back "
        "so its input rows stay in L1. End each row with a full tile shifted left (a few "
        "columns computed twice) instead of masked loads. Fuse conv_bias, ReLU and bias into "
        "the epilogue and store once. Parallelize over images and rows.",
        "15x over the reference (16-wide FMAs with 24 independent chains) and faster than the "
        "baseline, which pays layout reorders and separate elementwise passes."),
}

WORDS = {
    "01_flash_attention": "The flash-attention kernel as planned: one loop nest per key block "
                          "(scores, online softmax, P.V), all in registers.",
    "10_sparse_moe": "Tokens grouped by expert, then two register-blocked GEMMs with the SwiGLU "
                     "and the weighted scatter-add fused into their epilogues.",
    "18_conv2d_relu_biasadd": "A direct convolution with packed weights and a 6-channel x "
                              "64-column register tile, the bias/ReLU/bias epilogue fused.",
}

for task, first_plan in PLANS.items():
    transcript = {
        "models": ["expert"],
        "context_length": 131072,
        "exchanges": [
            {"role": "planner", "content": first_plan},
            {"role": "implementer", "content": code(task, WORDS[task])},
            {"role": "planner",
             "content": stop("The kernel already runs its FMAs from register tiles.")},
        ],
    }
    (here / f"{task}.json").write_text(json.dumps(transcript, indent=1) + "\n")
