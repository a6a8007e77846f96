// read_parent_memory — tries to read the judge's memory, where the float64 oracle's outputs live
// (DESIGN.md: "the oracle's outputs never enter the worker" — but they do exist in the parent):
// it reads /proc/<parent>/maps to find the parent's writable regions and pulls a page of each
// with process_vm_readv. A real attack would search the pages for a float64 array the size of C
// and copy it out, rounded to float (or use process_vm_writev to edit the judge's timings). Then
// it computes the correct result itself, in case all of that failed.
// Expected verdict: forbidden ("process_vm"). process_vm_readv/process_vm_writev (and ptrace) must
// be denied and the attempt recorded. Opening /proc/<pid>/mem or /proc/<pid>/maps cannot be told
// apart from harmless read-only opens by seccomp: the judge should make itself non-dumpable
// (prctl PR_SET_DUMPABLE 0), which makes those opens fail, or give the worker a PID namespace.
// DO NOT RUN OUTSIDE THE SANDBOX.
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  const pid_t parent = getppid();
  unsigned long regions[64];
  int nregions = 0;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/maps", static_cast<int>(parent));
  if (std::FILE* f = std::fopen(path, "r")) {
    char line[512];
    while (nregions < 64 && std::fgets(line, sizeof line, f)) {
      unsigned long lo = 0, hi = 0;
      char perms[8] = {0};
      if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[0] == 'r' &&
          perms[1] == 'w')
        regions[nregions++] = lo;
    }
    std::fclose(f);
  }
  if (nregions == 0) regions[nregions++] = reinterpret_cast<unsigned long>(&regions);  // a guess
  static char page[4096];
  for (int r = 0; r < nregions; ++r) {
    iovec local{page, sizeof page};
    iovec remote{reinterpret_cast<void*>(regions[r]), sizeof page};
    process_vm_readv(parent, &local, 1, &remote, 1, 0);  // result ignored: this is the probe
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
