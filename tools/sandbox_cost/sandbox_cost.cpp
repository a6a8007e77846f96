// kforge-sandbox-cost: what the judge's sandbox costs per evaluation, measured side by side.
//
//   kforge-sandbox-cost [--reps N]
//
// Start-up: a plain fork+exec of /bin/true (posix_spawn: what an unconfined worker start costs)
// next to a jailed one (namespaces, Landlock, limits, id drop); then a whole worker start to its
// READY (jail, seccomp allowlist, mapping the buffers, loading a kernel). Per call: the round trip
// of an empty command, and one call of a small kernel, through the allowlist. Prints min and median
// of each, in alternating order.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "harness/jail.h"
#include "harness/sandbox.h"
#include "harness/toolchain.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void report(const char* what, std::vector<double> v, double unit, const char* unit_name) {
  std::sort(v.begin(), v.end());
  fmt::print("  {:<44} min {:>9.3f} {}   median {:>9.3f} {}\n", what, v.front() * unit, unit_name,
             v[v.size() / 2] * unit, unit_name);
}

double plain_spawn(const char* prog) {
  const auto t = Clock::now();
  pid_t pid;
  char* argv[] = {const_cast<char*>(prog), nullptr};
  if (posix_spawn(&pid, prog, nullptr, nullptr, argv, environ) != 0) return 0;
  int st;
  waitpid(pid, &st, 0);
  return since(t);
}

double jailed_spawn(const char* prog) {
  const auto t = Clock::now();
  auto pid = kf::spawn_jailed(kf::JailSpec{.argv = {prog}});
  if (!pid) {
    fmt::print(stderr, "{}\n", pid.error().message());
    return 0;
  }
  int st;
  waitpid(*pid, &st, 0);
  return since(t);
}

constexpr const char* kKernel = R"(
#include <cstdint>
extern "C" __attribute__((visibility("default"))) void kf_entry(void* const* b, const int64_t* d,
                                                            const double*) {
  const float* x = static_cast<const float*>(b[0]);
  float* y = static_cast<float*>(b[1]);
  for (int64_t i = 0; i < d[0]; ++i) y[i] = 2 * x[i];
}
)";

}  // namespace

int main(int argc, char** argv) {
  int reps = 30;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(3, std::atoi(argv[i + 1]));
  kf::make_judge_undumpable();
  if (auto s = kf::require_sandbox(); !s.ok()) {
    fmt::print(stderr, "{}\n", s.message());
    return 2;
  }
  const char* prog = access("/usr/bin/true", X_OK) == 0 ? "/usr/bin/true" : "/bin/true";
  std::vector<double> plain, jailed;
  for (int i = 0; i < reps; ++i) {
    if (i % 2 == 0) plain.push_back(plain_spawn(prog));
    jailed.push_back(jailed_spawn(prog));
    if (i % 2 == 1) plain.push_back(plain_spawn(prog));
  }
  kf::CompiledObject so = kf::compile_solution(kKernel, "", {});
  if (!so.info.ok) {
    fmt::print(stderr, "the probe kernel does not compile:\n{}\n", so.info.log);
    return 2;
  }
  const int64_t n = 1 << 16;
  std::vector<double> start, ping, call;
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    auto w = kf::Worker::start(
        {.so = so.so_path,
         .layout = {{"x", n * sizeof(float), true}, {"y", n * sizeof(float), false}},
         .dims = {n}});
    if (!w || (*w)->fault()) {
      fmt::print(stderr, "the worker did not start: {}\n",
                 w ? (*w)->fault()->message : w.error().message());
      return 2;
    }
    start.push_back(since(t));
    for (int k = 0; k < 10; ++k) {
      ping.push_back((*w)->ping().seconds);
      call.push_back((*w)->run(0, 1, 10).seconds);
    }
  }
  fmt::print("sandbox cost, {} repetitions (alternating):\n", reps);
  report("start /bin/true: plain posix_spawn", plain, 1e3, "ms");
  report("start /bin/true: in the jail", jailed, 1e3, "ms");
  report("worker start to READY (jail + seccomp + load)", start, 1e3, "ms");
  report("per call: empty round trip (ping)", ping, 1e6, "us");
  report("per call: 64 Ki-element kernel, one call", call, 1e6, "us");
  return 0;
}
