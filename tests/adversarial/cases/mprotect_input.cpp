// mprotect_input — computes a correct C, then mprotect()s the pages holding A to
// PROT_READ|PROT_WRITE and writes into A (zeroes its first element, flips the last), defeating a
// judge that protects inputs only with a read-only mapping.
// Expected verdict: forbidden ("input"). If the worker mapped A MAP_SHARED from a read-only file
// descriptor (or a memfd sealed with F_SEAL_FUTURE_WRITE / F_SEAL_WRITE), mprotect fails with
// EACCES/EPERM and the store faults inside A -> forbidden (write to input). If the mprotect
// succeeds and the store lands, the parent's comparison of A after the run shows the change ->
// forbidden. If the worker's mapping is MAP_PRIVATE the write only changes a private copy: the
// judge sees nothing, so inputs must be MAP_SHARED. mprotect itself cannot be banned (malloc and
// the loader need it), so a message naming the input is what to expect, not "mprotect".
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  const int64_t n = M * K;
  if (n <= 0) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(A) & ~(page - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(A + n) + page - 1) & ~(page - 1);
  mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_READ | PROT_WRITE);  // result ignored
  volatile float* a = const_cast<float*>(A);
  a[0] = 0.0f;
  a[n - 1] = -a[n - 1] + 1.0f;  // never equal to itself, even for 0
}
