#include <gtest/gtest.h>

#include <algorithm>

#include "agents/profile_disasm.h"

namespace kf::agents {
namespace {

// Hand-trimmed `objdump -d -r --no-show-raw-insn -M intel -C` of a kernel `axpy` with an
// OpenMP body, a helper it calls, a std:: function and the entry shim.
const char* kObjdump =
    "v16.o:     file format elf64-x86-64\n"
    "\n"
    "\n"
    "Disassembly of section .text:\n"
    "\n"
    "0000000000000000 <axpy(float const*, float*, long) [clone ._omp_fn.0]>:\n"
    "   0:\tpush   rbp\n"
    "  4b:\tvbroadcastss zmm1,DWORD PTR [rip+0x0]        # 55 <axpy(float const*, float*, long) "
    "[clone ._omp_fn.0]+0x55>\n"
    "\t\t\t51: R_X86_64_PC32\t.LC0-0x4\n"
    "  66:\tcs nop WORD PTR [rax+rax*1+0x0]\n"
    "  70:\tvmovups zmm0,ZMMWORD PTR [rsi+rdx*1]\n"
    "  77:\tvfmadd213ps zmm0,zmm1,ZMMWORD PTR [rcx+rdx*1]\n"
    "  7e:\tvmovups ZMMWORD PTR [rcx+rdx*1],zmm0\n"
    "  85:\tadd    rdx,0x40\n"
    "  89:\tcmp    rax,rdx\n"
    "  8c:\tjne    70 <axpy(float const*, float*, long) [clone ._omp_fn.0]+0x70>\n"
    "  8e:\tvzeroupper\n"
    "  99:\tret\n"
    "\n"
    "00000000000000b0 <axpy(float const*, float*, long)>:\n"
    "  b0:\tpush   rbp\n"
    "  d7:\tlea    rdi,[rip+0x0]        # de <axpy(float const*, float*, long)+0x2e>\n"
    "\t\t\tda: R_X86_64_PC32\taxpy(float const*, float*, long) [clone ._omp_fn.0]-0x4\n"
    "  f0:\tcall   f5 <axpy(float const*, float*, long)+0x45>\n"
    "\t\t\tf1: R_X86_64_PLT32\tGOMP_parallel-0x4\n"
    "  f5:\tcall   fa <axpy(float const*, float*, long)+0x4a>\n"
    "\t\t\tf6: R_X86_64_PLT32\thelper(float*)-0x4\n"
    " 100:\tvfmadd231ss xmm0,xmm1,DWORD PTR [rdi]\n"
    " 105:\tvgatherdps zmm0{k1},DWORD PTR [rax+zmm2*4]\n"
    " 10a:\tvmovss DWORD PTR [rdi],xmm0\n"
    " 10e:\tvaddps ymm0,ymm0,ymm1\n"
    " 112:\tvaddss xmm0,xmm0,xmm1\n"
    " 116:\tcmp    QWORD PTR [rdi],0x0\n"
    " 11a:\tret\n"
    "\n"
    "0000000000000000 <helper(float*)>:\n"
    "   0:\tvfmadd231pd xmm0,xmm1,xmm2\n"
    "   4:\tcall   9 <helper(float*)+0x9>\n"
    "\t\t\t5: R_X86_64_PLT32\tstd::vector<float, std::allocator<float> "
    ">::_M_default_append(unsigned long)-0x4\n"
    "   9:\tret\n"
    "\n"
    "0000000000000000 <std::vector<float, std::allocator<float> >::_M_default_append(unsigned "
    "long)>:\n"
    "   0:\tvfmadd231ps zmm0,zmm1,zmm2\n"
    "   6:\tret\n"
    "\n"
    "0000000000000000 <kf_entry>:\n"
    "   0:\tjmp    5 <kf_entry+0x5>\n"
    "\t\t\t1: R_X86_64_PLT32\taxpy(float const*, float*, long)-0x4\n";

TEST(ProfileDisasm, CountsTheKernelItsOpenMpBodyAndItsHelpers) {
  InstructionMix m = count_instructions(kObjdump, "axpy");
  ASSERT_TRUE(m.available) << m.unavailable;
  EXPECT_FALSE(m.inlined_into_entry);
  std::vector<std::string> symbols = m.symbols;
  std::sort(symbols.begin(), symbols.end());
  EXPECT_EQ(symbols,
            (std::vector<std::string>{"axpy(float const*, float*, long)",
                                      "axpy(float const*, float*, long) [clone ._omp_fn.0]",
                                      "helper(float*)"}));  // not std::vector's, not kf_entry
  const InstructionCounts& a = m.all;
  EXPECT_EQ(a.total, 24);  // the nop is not counted
  EXPECT_EQ(a.fma_zmm, 1);
  EXPECT_EQ(a.fma_ymm, 0);
  EXPECT_EQ(a.fma_xmm, 1);
  EXPECT_EQ(a.fma_scalar, 1);
  EXPECT_EQ(a.packed_arith, 1);
  EXPECT_EQ(a.scalar_arith, 1);
  EXPECT_EQ(a.loads, 6);  // broadcast, 2 FMAs with a memory operand, vmovups, gather, cmp
  EXPECT_EQ(a.stores, 2);
  EXPECT_EQ(a.gathers, 1);
  EXPECT_NEAR(a.zmm_fma_share(), 1.0 / 3, 1e-12);
  EXPECT_NEAR(a.packed_fma_share(), 2.0 / 3, 1e-12);
  // One innermost loop: 0x70..0x8c in the OpenMP body.
  EXPECT_EQ(m.innermost_loops, 1);
  EXPECT_EQ(m.loops.total, 6);
  EXPECT_EQ(m.loops.fma_zmm, 1);
  EXPECT_EQ(m.loops.loads, 2);
  EXPECT_EQ(m.loops.stores, 1);
  EXPECT_EQ(&m.hot(), &m.loops);
}

TEST(ProfileDisasm, FallsBackToTheEntryShim) {
  InstructionMix m = count_instructions(kObjdump, "gemm");
  ASSERT_TRUE(m.available);
  EXPECT_TRUE(m.inlined_into_entry);
  EXPECT_NE(std::find(m.symbols.begin(), m.symbols.end(), "kf_entry"), m.symbols.end());
  InstructionMix none = count_instructions("", "gemm");
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.unavailable.find("'gemm'"), std::string::npos);
}

TEST(ProfileDisasm, MnemonicClassesMatchTheirPatterns) {
  const std::string text =
      "0000000000000000 <k>:\n"
      "   0:\tvfnmsub231sd xmm0,xmm1,xmm2\n"         // scalar FMA (n, sub)
      "   4:\tvfmaddsub213ps zmm0,zmm1,zmm2\n"       // packed zmm FMA (add + sub)
      "   8:\tfmadd132pd xmm0,xmm1,xmm2\n"           // no 'v'
      "   c:\tvfmadd213ph zmm0,zmm1,zmm2\n"          // not an FMA this counts (ph)
      "  10:\tvrcp14ps zmm0,zmm1\n"                  // packed arithmetic
      "  14:\tvrsqrt28ss xmm0,xmm0,xmm1\n"           // scalar arithmetic
      "  18:\tvgetmantpd zmm0,zmm1,0x0\n"            // packed arithmetic
      "  1c:\tvaddph zmm0,zmm1,zmm2\n"               // neither
      "  20:\tvptestmd k1,ZMMWORD PTR [rax],zmm1\n"  // compare: a load
      "  24:\tbtr    DWORD PTR [rax],0x1\n"          // bt*: a load
      "  28:\tvmovaps ZMMWORD PTR [rax],zmm0\n"      // a store
      "  2c:\tucomiss xmm0,DWORD PTR [rax]\n";       // a load
  InstructionMix m = count_instructions(text, "k");
  ASSERT_TRUE(m.available) << m.unavailable;
  EXPECT_EQ(m.all.total, 12);
  EXPECT_EQ(m.all.fma_scalar, 1);
  EXPECT_EQ(m.all.fma_zmm, 1);
  EXPECT_EQ(m.all.fma_xmm, 1);
  EXPECT_EQ(m.all.packed_arith, 2);
  EXPECT_EQ(m.all.scalar_arith, 1);
  EXPECT_EQ(m.all.loads, 3);
  EXPECT_EQ(m.all.stores, 1);
}

TEST(ProfileDisasm, LongSymbolsAndAddressesAreParsedWithoutRecursionOrThrowing) {
  // The candidate names its functions: a symbol of 4 MB used to overflow std::regex's stack in
  // the judge, and an address of 20 hex digits made std::stoull throw.
  const std::string name = "k" + std::string(4 << 20, 'x');
  const std::string text = "0000000000000000 <" + name + ">:\n" +
                           "   0:\tvaddps zmm0,zmm1,zmm2\n"
                           "   4:\tjmp    0 <" +
                           name + "+0x0>\n" + "\t\t\t5: R_X86_64_PLT32\t" + name + "-0x4\n" +
                           "ffffffffffffffffffff:\tvmulps zmm0,zmm1,zmm2\n"
                           "   8:\tjne    ffffffffffffffffffffff <" +
                           name + "+0x0>\n";
  InstructionMix m = count_instructions(text, name);
  ASSERT_TRUE(m.available) << m.unavailable;
  EXPECT_EQ(m.all.total, 4);
  EXPECT_EQ(m.all.packed_arith, 2);
  EXPECT_EQ(m.innermost_loops, 1);  // the jmp back to 0; the jne's target is past it
}

TEST(ProfileDisasm, SymbolBaseNames) {
  std::string q;
  EXPECT_EQ(symbol_base_name("void gemm<float>(float const*, long)"), "gemm");
  EXPECT_EQ(symbol_base_name("gemm(float*) [clone ._omp_fn.0]"), "gemm");
  EXPECT_EQ(symbol_base_name("kf_entry._omp_fn.1"), "kf_entry");
  EXPECT_EQ(symbol_base_name("gemm(float*)::{lambda(long)#1}::operator()(long) const"), "gemm");
  EXPECT_EQ(
      symbol_base_name("std::vector<float, std::allocator<float> >::resize(unsigned long)", &q),
      "resize");
  EXPECT_EQ(q, "std::vector::resize");
  EXPECT_EQ(symbol_base_name("ns::kernel(int)", &q), "kernel");
  EXPECT_EQ(q, "ns::kernel");
}

}  // namespace
}  // namespace kf::agents
