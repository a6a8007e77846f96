// text_output_bytes — a correct GEMM that, on every call, writes invalid UTF-8, NUL bytes and
// terminal escape sequences (clear screen, set the window title, a hyperlink) to stdout and
// stderr. Expected verdict: ok. Its output is logged, capped, and stored and printed as JSON with
// the invalid sequences replaced; nothing of it reaches the judge's terminal.
#include <kforge/kernel.h>
#include <unistd.h>

#include <cstdint>

namespace {
const char kBytes[] =
    "\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80 \x1b[2J\x1b]0;owned\x07"
    "\x1b]8;;file:///etc/passwd\x1b\\link\x1b]8;;\x1b\\\r\n";
}

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  (void)!write(1, kBytes, sizeof kBytes);  // with its NUL terminator
  (void)!write(2, kBytes, sizeof kBytes);
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}
