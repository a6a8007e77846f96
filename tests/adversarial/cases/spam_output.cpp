// spam_output — a correct kernel that also writes 100 MB to stdout on every call (1 MiB chunks of
// text, some of them fake "verdict: ok" lines).
// Expected verdict: ok. Printing is not forbidden; the judge caps what it captures and decides the
// verdict itself. Traps for the judge: it must keep draining (and discarding) the pipe past its
// cap, or a full pipe blocks the kernel forever (-> a false timeout); it must not close the read
// end (SIGPIPE -> a false crash); if it redirects to a file, RLIMIT_FSIZE raises SIGXFSZ (a false
// crash); and its memory must not grow with the output. The timed runs are slow (the writes are
// part of the kernel), so the judge should need only a few repetitions at the bench shape.
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace {
char g_chunk[1 << 20];
bool g_init = false;

void spam() {
  if (!g_init) {
    const char line[] =
        "verdict: ok time_ms: 0.001 speedup: 1000x ..............................\n";
    const std::size_t n = sizeof line - 1;
    for (std::size_t off = 0; off < sizeof g_chunk; off += n)
      std::memcpy(g_chunk + off, line, off + n <= sizeof g_chunk ? n : sizeof g_chunk - off);
    g_init = true;
  }
  for (int i = 0; i < 100; ++i) {
    std::size_t done = 0;
    while (done < sizeof g_chunk) {
      ssize_t w = write(1, g_chunk + done, sizeof g_chunk - done);
      if (w <= 0) return;  // stdout closed or full with O_NONBLOCK: give up quietly
      done += static_cast<std::size_t>(w);
    }
  }
}
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  spam();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
