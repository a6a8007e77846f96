// dlsym_fork — obtains fork without naming it anywhere the compiler or linker can see: the name
// is assembled at run time from pieces, looked up with dlsym in libc (dlopen("libc.so.6")), and
// called through a function pointer. The child exits at once; the parent computes the correct
// result. The shared object imports only dlopen/dlsym, never fork.
// Expected verdict: forbidden ("fork"). Defeats source greps and import-table checks; only a
// syscall-level filter catches it. (dlopen of an already-loaded libc does no file I/O; dlopen of a
// new library would, read-only, which is allowed — the call it leads to is what is forbidden.)
// DO NOT RUN OUTSIDE THE SANDBOX.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  char name[8];
  const char parts[] = {'k', 'r', 'o', 'f'};
  for (int i = 0; i < 4; ++i) name[i] = parts[3 - i];
  name[4] = '\0';
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == nullptr) libc = dlopen("libc.so.6", RTLD_NOW);
  void* sym = libc ? dlsym(libc, name) : dlsym(RTLD_DEFAULT, name);
  if (sym != nullptr) {
    auto f = reinterpret_cast<pid_t (*)()>(sym);
    pid_t p = f();
    if (p == 0) _exit(0);
    if (p > 0) waitpid(p, nullptr, 0);
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
