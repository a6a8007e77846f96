// sleep_forever — blocks in sleep(1000000) without using any CPU.
// Expected verdict: timeout. Catches a judge that limits only CPU time (RLIMIT_CPU / SIGXCPU):
// a sleeping worker burns no CPU, so only a wall-clock deadline ends it.
#include <unistd.h>

#include <cstdint>

void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  for (;;) sleep(1000000);
}
