// infinite_loop — spins forever on a volatile counter, never writes C.
// Expected verdict: timeout. The judge must enforce a wall-clock deadline on every run and kill
// the worker (SIGKILL) when it passes; a CPU-time limit alone also works here but not for
// sleep_forever.cpp.
#include <cstdint>

void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  volatile uint64_t spin = 0;
  for (;;) spin = spin + 1;
}
