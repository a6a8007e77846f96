// iso_host_files — class "reading the judge": reads files of the host that hold secrets or the
// judge's state: /etc/shadow, root's and the user's home, the task folder next to the judge, the
// compile cache (the oracle's object), /var. Correct only if one was readable. Expected:
// wrong_answer (Landlock grants the system trees and its own object only; it runs as an
// unprivileged id).
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>

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

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  bool read_secret = false;
  for (const char* file : {"/etc/shadow", "/etc/hostname", "/root/.bash_history", "/root/.profile",
                           "/var/log/dpkg.log", "/home", "/root", "/work", "/tmp", "/var/tmp",
                           "/run"}) {
    if (std::FILE* f = std::fopen(file, "r")) {
      char c;
      read_secret |= std::fread(&c, 1, 1, f) == 1;
      std::fclose(f);
    }
    if (DIR* d = opendir(file)) {
      read_secret |= readdir(d) != nullptr;
      closedir(d);
    }
  }
  finish(read_secret, A, B, C, M, N, K);
}
