// The static instruction mix of a candidate's kernel, from its object's disassembly:
// how many FMAs and at which vector width, other packed and scalar floating-point arithmetic,
// loads, stores and gathers. Counts are static (instructions in the code, each once), not
// executed counts: the machine has no hardware counters (MACHINE.md). Two sets: every
// instruction, and only those inside innermost loops (found from backward branches), which is
// closer to what runs. Alignment padding (nop) is not counted.
//
// Which functions count: the task's function (plain or template instance, with its clones and
// the lambdas defined in it), the OpenMP bodies GCC outlines from it (`gemm._omp_fn.0`), and
// the functions those call or reference that are defined in the object (not std:: helpers).
// When the kernel was inlined into the entry shim and has no body of its own, `kf_entry` is
// counted instead and `inlined_into_entry` says so.
//
// Input: `objdump -d -r --no-show-raw-insn -M intel -C` of the object (Intel syntax,
// demangled, relocations shown).
//
//   InstructionMix mix = count_instructions(objdump_text, task.function);
//   const InstructionCounts& c = mix.hot();       // inside innermost loops
//   if (c.fmas() > 0 && c.fma_zmm == 0) say("no 512-bit FMAs");
#pragma once

#include <string>
#include <vector>

namespace kf::agents {

// Counts of one set of instructions.
struct InstructionCounts {
  int total = 0;                              // instructions, nops excluded
  int fma_zmm = 0, fma_ymm = 0, fma_xmm = 0;  // packed FMAs (vfmadd...ps/pd, vdpbf16ps) by width
  int fma_scalar = 0;                         // vfmadd...ss/sd
  int packed_arith = 0;  // other packed floating-point arithmetic: add, mul, div, max, sqrt, ...
  int scalar_arith = 0;  // the same on scalars (..ss/..sd)
  int loads = 0, stores = 0;  // instructions reading / writing a memory operand (roughly)
  int gathers = 0, scatters = 0;

  int packed_fmas() const { return fma_zmm + fma_ymm + fma_xmm; }
  int fmas() const { return packed_fmas() + fma_scalar; }
  int packed_fp() const { return packed_fmas() + packed_arith; }
  int scalar_fp() const { return fma_scalar + scalar_arith; }
  // fma_zmm / fmas(); 0 without FMAs.
  double zmm_fma_share() const { return fmas() ? double(fma_zmm) / fmas() : 0.0; }
  // packed_fmas() / fmas(); 0 without FMAs.
  double packed_fma_share() const { return fmas() ? double(packed_fmas()) / fmas() : 0.0; }
};

struct InstructionMix {
  bool available = false;            // false: no disassembly; see `unavailable`
  std::string unavailable;           // why, e.g. "objdump not found"
  std::vector<std::string> symbols;  // the functions counted, demangled
  bool inlined_into_entry = false;   // the kernel had no body of its own; kf_entry was counted
  InstructionCounts all;             // every instruction of the counted functions
  // Only the instructions inside innermost loops: code between a backward branch and its
  // target that holds no other such loop. Leaves out prologues and straight-line epilogues,
  // not scalar fallback loops (GCC's versions for possible aliasing) or remainder loops.
  InstructionCounts loops;
  int innermost_loops = 0;

  // The counts that describe the hot code: `loops` when innermost loops were found, else `all`.
  const InstructionCounts& hot() const { return innermost_loops > 0 ? loops : all; }
};

// Counts the kernel's instructions in `objdump_text`. `function` is the task's function name
// (Task::function). Never fails: when no function matches, available is false and
// `unavailable` names the function that was not found.
InstructionMix count_instructions(const std::string& objdump_text, const std::string& function);

// The unqualified name of a demangled symbol, without template arguments, return type,
// parameters or clone suffixes: "void gemm<float>(float const*, long)" -> "gemm",
// "gemm(float*) [clone ._omp_fn.0]" -> "gemm", "kf_entry._omp_fn.1" -> "kf_entry".
// `qualified` (optional) receives it with its namespaces and classes, template arguments
// removed: "std::vector<float>::resize(unsigned long)" -> "std::vector::resize".
std::string symbol_base_name(const std::string& demangled, std::string* qualified = nullptr);

}  // namespace kf::agents
