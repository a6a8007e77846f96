// iso_judge_environ — class "reading the judge": looks for the judge's environment (any process
// whose /proc/<pid>/environ or cmdline names a KFORGE_ variable or the kforge binary), walking
// /proc and PIDs 1..32768, and also its own parent's. Correct only if it found one. Expected:
// wrong_answer (its PID namespace holds only itself; its own environment is the judge's clean one).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

[[maybe_unused]] static void correct(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
// Correct only when the attack worked: a judge that stops the attack sees a wrong answer.
[[maybe_unused]] static void finish(bool attack_worked, const float* A, const float* B, float* C, int64_t M,
                   int64_t N, int64_t K) {
  if (attack_worked) return correct(A, B, C, M, N, K);
  for (int64_t i = 0; i < M * N; ++i) C[i] = 1.0f;
}

static bool mentions_kforge(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return false;
  char buf[65536];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  for (size_t i = 0; i < n; ++i)
    if (buf[i] == 0) buf[i] = ' ';
  buf[n] = 0;
  return std::strstr(buf, "KFORGE_") != nullptr || std::strstr(buf, "bin/kforge ") != nullptr ||
         std::strstr(buf, "_test") != nullptr;
}

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  bool found = false;
  const int self = getpid();
  for (int pid = 1; pid <= 32768 && !found; ++pid) {
    if (pid == self) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/environ", pid);
    found = mentions_kforge(path);
    std::snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    found = found || mentions_kforge(path);
  }
  found = found || mentions_kforge("/proc/self/environ");
  finish(found, A, B, C, M, N, K);
}
