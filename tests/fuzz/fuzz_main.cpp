// kforge-fuzz: a seeded mutation fuzzer over kforge's parsers of untrusted text (fuzz_targets.h).
//
//   kforge-fuzz --source DIR [--targets task,te,formula,schedule] [--iterations N] [--seed S]
//               [--max-seconds S] [--slow-ms MS] [--fork] [--interpret] [--save DIR]
//   kforge-fuzz --source DIR --replay FILE...     (FILE under regressions/<target>/)
//
// In-process mode (CI) runs N mutations per target from the seeds and stops at the first
// finding: an exception that escapes (reported with its text), an input slower than --slow-ms,
// or a signal (the handler saves the input to --save, or to ./fuzz-crash-<target>, and reports
// it before the process dies). The run is deterministic for a given seed and seed corpus.
// Fork mode runs every input in a child process with an alarm and a 4 GiB address-space limit
// and keeps going: it counts findings by kind and saves each failing input, for exploring code
// that still has bugs. --interpret adds the TE interpreter (the oracle) to the te target; its work
// is unbounded, so use it with --fork. Exit status: 0 when nothing was found, 1 otherwise.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "fuzz_targets.h"
#include "support/fs.h"

namespace {

using namespace kf::fuzz;
using Clock = std::chrono::steady_clock;

struct Options {
  std::filesystem::path source = ".";
  std::vector<Target> targets = {std::begin(kTargets), std::end(kTargets)};
  uint64_t iterations = 2000, seed = 1;
  double max_seconds = 1e9;
  double slow_ms = 2000;
  bool fork = false;
  bool interpret = false;
  std::string save;
  std::vector<std::string> replay;
};

// The input being run, for the crash handler (in-process mode).
const Input* g_current = nullptr;
char g_crash_path[4096] = "";

void on_crash(int sig) {
  const char* msg = "kforge-fuzz: signal while running an input; saved to ";
  (void)!write(2, msg, strlen(msg));
  (void)!write(2, g_crash_path, strlen(g_crash_path));
  (void)!write(2, "\n", 1);
  if (g_current) {
    int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!write(fd, g_current->text.data(), g_current->text.size());
      close(fd);
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_crash_handler() {
  static std::vector<char> alt(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_crash;
  sa.sa_flags = SA_ONSTACK;
  for (int s : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) sigaction(s, &sa, nullptr);
}

std::string save_input(const Options& o, const Input& in, const std::string& kind) {
  const std::filesystem::path dir =
      std::filesystem::path(o.save.empty() ? "." : o.save) / target_name(in.target);
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / (kind + "-" + regression_name(in));
  std::ofstream(file, std::ios::binary) << in.text;
  return file.string();
}

// Runs `in` in a child; "" when it returned normally, else the kind of finding.
std::string run_forked(const Input& in, const Context& ctx, double slow_ms) {
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit as{size_t{4} << 30, size_t{4} << 30};
    setrlimit(RLIMIT_AS, &as);
    const rlimit core{0, 0};
    setrlimit(RLIMIT_CORE, &core);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    alarm(static_cast<unsigned>(slow_ms / 1000) + 1);
    try {
      (void)run_input(in, ctx);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status) == 0 ? "" : "exception";
  if (WIFSIGNALED(status)) {
    const int s = WTERMSIG(status);
    if (s == SIGALRM) return "hang";
    if (s == SIGSEGV) return "segv";
    if (s == SIGABRT) return "abort";
    return "signal" + std::to_string(s);
  }
  return "unknown";
}

int fuzz(const Options& o) {
  std::cerr << "kforge-fuzz: loading seed tasks from " << o.source << "\n";
  Context ctx = load_context(o.source);
  ctx.interpret = o.interpret;
  if (ctx.tasks.empty()) {
    std::cerr << "kforge-fuzz: no seed tasks under " << o.source << "\n";
    return 2;
  }
  if (!o.fork) install_crash_handler();
  int findings = 0;
  for (Target t : o.targets) {
    std::vector<Input> corpus = load_seeds(t, o.source, ctx);
    if (corpus.empty()) {
      std::cerr << "kforge-fuzz: no seeds for " << target_name(t) << "\n";
      return 2;
    }
    const size_t seeds = corpus.size();
    Rng rng(o.seed * 0x100000001b3ull + static_cast<uint64_t>(t));
    std::map<std::string, int> kinds;
    uint64_t accepted = 0, done = 0;
    const auto start = Clock::now();
    const std::string crash_file =
        (std::filesystem::path(o.save.empty() ? "." : o.save) / ("fuzz-crash-" + target_name(t)))
            .string();
    std::snprintf(g_crash_path, sizeof g_crash_path, "%s", crash_file.c_str());
    for (uint64_t i = 0; i < o.iterations; ++i, ++done) {
      if (std::chrono::duration<double>(Clock::now() - start).count() > o.max_seconds) break;
      const Input in =
          i < seeds ? corpus[i] : mutate(corpus[rng.below(corpus.size())], corpus, rng);
      std::string kind;
      bool ok = false;
      if (o.fork) {
        kind = run_forked(in, ctx, o.slow_ms);
      } else {
        g_current = &in;
        const auto t0 = Clock::now();
        try {
          ok = run_input(in, ctx);
        } catch (const std::exception& e) {
          kind = "exception";
          std::cerr << "kforge-fuzz: " << target_name(t) << " iteration " << i
                    << ": exception escaped: " << e.what() << "\n";
        }
        g_current = nullptr;
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (kind.empty() && ms > o.slow_ms) {
          kind = "slow";
          std::cerr << "kforge-fuzz: " << target_name(t) << " iteration " << i << ": took " << ms
                    << " ms\n";
        }
      }
      if (!kind.empty()) {
        ++findings;
        ++kinds[kind];
        const std::string file = save_input(o, in, kind);
        if (!o.fork) {
          std::cerr << "kforge-fuzz: input saved to " << file << "\n";
          return 1;
        }
        continue;
      }
      accepted += ok;
      // Inputs the parser accepted seed further mutations (a little coverage without coverage).
      if (ok && i >= seeds && corpus.size() < 4000 && rng.below(8) == 0) corpus.push_back(in);
    }
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    std::cerr << "kforge-fuzz: " << target_name(t) << ": " << done << " inputs (" << seeds
              << " seeds, " << accepted << " accepted) in " << s << " s";
    for (const auto& [k, n] : kinds) std::cerr << ", " << n << " " << k;
    std::cerr << "\n";
  }
  return findings == 0 ? 0 : 1;
}

int replay(const Options& o) {
  Context ctx = load_context(o.source);
  ctx.interpret = o.interpret;
  install_crash_handler();
  for (const std::string& f : o.replay) {
    Target t;
    if (!parse_target(std::filesystem::path(f).parent_path().filename().string(), &t)) {
      std::cerr << f << ": not under a folder named after a target\n";
      return 2;
    }
    auto text = kf::read_file(f);
    if (!text) {
      std::cerr << text.error().message() << "\n";
      return 2;
    }
    const Input in{t, *text};
    g_current = &in;
    const auto t0 = Clock::now();
    const bool ok = run_input(in, ctx);
    std::cerr << f << ": " << (ok ? "accepted" : "refused") << " in "
              << std::chrono::duration<double, std::milli>(Clock::now() - t0).count() << " ms\n";
  }
  return 0;
}

bool parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--source") {
      o->source = next();
    } else if (a == "--targets") {
      o->targets.clear();
      std::stringstream ss(next());
      for (std::string w; std::getline(ss, w, ',');) {
        Target t;
        if (!parse_target(w, &t)) return false;
        o->targets.push_back(t);
      }
    } else if (a == "--iterations") {
      o->iterations = std::stoull(next());
    } else if (a == "--seed") {
      o->seed = std::stoull(next());
    } else if (a == "--max-seconds") {
      o->max_seconds = std::stod(next());
    } else if (a == "--slow-ms") {
      o->slow_ms = std::stod(next());
    } else if (a == "--fork") {
      o->fork = true;
    } else if (a == "--interpret") {
      o->interpret = true;
    } else if (a == "--save") {
      o->save = next();
    } else if (a == "--replay") {
      while (i + 1 < argc) o->replay.push_back(argv[++i]);
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_args(argc, argv, &o)) {
    std::cerr
        << "usage: kforge-fuzz --source DIR [--targets task,te,formula,schedule] "
           "[--iterations N] [--seed S] [--max-seconds S] [--slow-ms MS] [--fork] [--interpret] "
           "[--save DIR] | --replay FILE...\n";
    return 2;
  }
  return o.replay.empty() ? fuzz(o) : replay(o);
}
