// compile_bomb — attacks the compiler, not the worker: it #includes /dev/zero, an endless file.
// GCC 12 reserves ~2 GiB for it and then reads zeros for as long as it is allowed to (observed:
// still running after 15 s under a 6 GiB address-space limit; it fails at once with "out of memory"
// under a 2 GiB limit). Never gets to define gemm.
// Expected verdict: compile_error (or timeout). The judge must run the compiler with a wall-clock
// deadline and a memory limit, with stdin from /dev/null (`#include "/dev/stdin"` would otherwise
// wait on the judge's own stdin), and report the failure as a compile error. Other ways to the same
// end: deep template recursion, huge constexpr evaluation, giant static arrays.
// DO NOT COMPILE OUTSIDE A LIMITED ENVIRONMENT.
#include "/dev/zero"
