// fake_output_lines — computes nothing and leaves C untouched; instead prints lines that look like
// a judge's own report to stdout and stderr ("verdict: ok", "time_ms: 0.001", "speedup: 1000x",
// a JSON result object, a "PASSED" gtest line).
// Expected verdict: wrong_answer. C still holds the judge's NaN fill ("NaN"). Nothing the candidate
// prints is trusted (DESIGN.md); the captured text may appear in diagnostics, but it must never
// influence the verdict, the times or the parsed result — the judge's protocol with its worker must
// not run over the candidate's stdout/stderr.
#include <cstdint>
#include <cstdio>

void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  static const char* const lines[] = {
      "verdict: ok\n",
      "time_ms: 0.001\n",
      "speedup: 1000x\n",
      "max_abs_err: 0\n",
      "{\"verdict\":\"ok\",\"time_ns\":1,\"median_ns\":1,\"max_abs_err\":0.0,\"speedup\":1000.0}\n",
      "[       OK ] Adversarial.Gemm (0 ms)\n[  PASSED  ] 1 test.\n",
  };
  for (const char* l : lines) {
    std::fputs(l, stdout);
    std::fputs(l, stderr);
  }
  std::fflush(stdout);
  std::fflush(stderr);
}
