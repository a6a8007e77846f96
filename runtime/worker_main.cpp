// kforge-worker: runs one untrusted candidate for the judge. See harness/worker_protocol.h for
// the protocol and its design notes; harness/sandbox.cpp is the parent side.
//
// Start-up order matters: limits and the seccomp filter are in place before the candidate's
// shared object is loaded, so nothing the candidate contains runs unconfined.
#include <dlfcn.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/worker_protocol.h"
#include "sandbox_rules.h"

namespace {

using kf::wire::FaultKind;
using kf::wire::Reply;
using kf::wire::ReplyKind;

using EntryFn = void (*)(void* const*, const int64_t*, const double*);

struct Range {
  uintptr_t begin = 0, end = 0;
  std::string name;
};

// Everything the signal handlers read; set before any candidate code runs.
struct State {
  std::vector<Range> inputs, guards;
  size_t as_limit = 0;
} g;

void send_reply(const Reply& r) {
  const char* p = reinterpret_cast<const char*>(&r);
  size_t left = sizeof r;
  while (left > 0) {
    ssize_t n = write(kf::wire::kReplyFd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Async-signal-safe formatting helpers.
void append(char* dst, size_t cap, const char* s) {
  size_t n = strnlen(dst, cap);
  while (*s && n + 1 < cap) dst[n++] = *s++;
  dst[n] = 0;
}
void append_num(char* dst, size_t cap, unsigned long long v, int base = 10) {
  char tmp[32];
  int i = 0;
  do {
    int d = static_cast<int>(v % static_cast<unsigned>(base));
    tmp[i++] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    v /= static_cast<unsigned>(base);
  } while (v && i < 31);
  char out[34];
  int j = 0;
  if (base == 16) {
    out[j++] = '0';
    out[j++] = 'x';
  }
  while (i > 0) out[j++] = tmp[--i];
  out[j] = 0;
  append(dst, cap, out);
}

// Virtual memory in use, from /proc/self/statm (async-signal-safe: open/read/close only).
size_t vm_bytes() {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[64] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  size_t pages = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i)
    pages = pages * 10 + static_cast<size_t>(buf[i] - '0');
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGSYS:
      return "SIGSYS";
    case SIGXCPU:
      return "SIGXCPU";
    default:
      return "signal";
  }
}

void on_fault(int sig, siginfo_t* info, void* context) {
  Reply r;
  r.kind = ReplyKind::fault;
  r.code = sig;
  if (sig == SIGXCPU) {
    r.fault = FaultKind::cpu_limit;
    append(r.text, sizeof r.text, "CPU time limit exceeded (SIGXCPU)");
    send_reply(r);
    _exit(kf::wire::kExitFault);
  }
  r.fault = FaultKind::signal;
  append(r.text, sizeof r.text, signal_name(sig));
  if (sig == SIGSEGV || sig == SIGBUS) {
    auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    append(r.text, sizeof r.text, " at address ");
    append_num(r.text, sizeof r.text, addr, 16);
    for (const Range& in : g.inputs)
      if (addr >= in.begin && addr < in.end) {
        r.fault = FaultKind::input_write;
        r.text[0] = 0;
        append(r.text, sizeof r.text, "write to read-only input '");
        append(r.text, sizeof r.text, in.name.c_str());
        append(r.text, sizeof r.text, "' (SIGSEGV)");
      }
    // x86-64 page-fault error code: bit 1 set for a write.
    const bool is_write = (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    for (const Range& gd : g.guards)
      if (addr >= gd.begin && addr < gd.end) {
        r.fault = is_write ? FaultKind::guard_write : FaultKind::signal;
        r.text[0] = 0;
        append(r.text, sizeof r.text,
               is_write ? "write past the end of buffer '" : "read past the end of buffer '");
        append(r.text, sizeof r.text, gd.name.c_str());
        append(r.text, sizeof r.text, "' (SIGSEGV in its guard page)");
      }
  }
  if (r.fault == FaultKind::signal && g.as_limit > 0 && vm_bytes() > g.as_limit / 10 * 9) {
    r.fault = FaultKind::out_of_memory;
    append(r.text, sizeof r.text, " with the address space at its limit (");
    append_num(r.text, sizeof r.text, vm_bytes() >> 20);
    append(r.text, sizeof r.text, " MiB): out of memory");
  }
  send_reply(r);
  signal(sig, SIG_DFL);
  raise(sig);
}

void on_new_failure() {
  Reply r;
  r.kind = ReplyKind::fault;
  r.fault = FaultKind::out_of_memory;
  append(r.text, sizeof r.text, "memory allocation failed at the address-space limit (");
  append_num(r.text, sizeof r.text, g.as_limit >> 20);
  append(r.text, sizeof r.text, " MiB)");
  send_reply(r);
  _exit(kf::wire::kExitFault);
}

// An exception escaped the kernel: say which, then abort as std::terminate would.
[[noreturn]] void on_terminate() {
  Reply r;
  r.kind = ReplyKind::fault;
  r.fault = FaultKind::signal;
  r.code = SIGABRT;
  std::string what = "unknown type";
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      on_new_failure();
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
    }
  }
  std::snprintf(r.text, sizeof r.text, "uncaught C++ exception escaped the kernel (%s): SIGABRT",
                what.c_str());
  send_reply(r);
  _exit(kf::wire::kExitFault);
}

[[noreturn]] void setup_failed(const std::string& what) {
  Reply r;
  r.kind = ReplyKind::fault;
  r.fault = FaultKind::setup_failed;
  std::snprintf(r.text, sizeof r.text, "worker setup: %s", what.c_str());
  send_reply(r);
  _exit(kf::wire::kExitSetup);
}

// Hands the seccomp listener to the judge over the reply socket (one byte 'N' + SCM_RIGHTS).
void send_notify_fd(int fd) {
  kf::wire::FdMessage m;
  m.set_fd(fd);
  if (sendmsg(kf::wire::kReplyFd, &m.msg, 0) != 1) setup_failed("cannot send the seccomp listener");
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

struct Args {
  std::string so, dir;
  size_t map_size = 0, as_limit = 0;
  long cpu_limit = 0;
  int sets = 1;
  std::vector<std::string> buffers;  // "offset:length:ro|rw:name", set-major
  std::vector<std::string> guards;   // "offset:length:name"
  std::vector<std::string> preload;  // trusted runtime libraries to load and initialize first
  std::vector<int64_t> dims;
  std::vector<double> scalars;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--so")
      a.so = v;
    else if (k == "--dir")
      a.dir = v;
    else if (k == "--map-size")
      a.map_size = std::stoull(v);
    else if (k == "--as-limit")
      a.as_limit = std::stoull(v);
    else if (k == "--cpu-limit")
      a.cpu_limit = std::stol(v);
    else if (k == "--sets")
      a.sets = std::stoi(v);
    else if (k == "--buffers")
      a.buffers = split(v, ';');
    else if (k == "--guards")
      a.guards = split(v, ';');
    else if (k == "--preload")
      a.preload = split(v, ',');
    else if (k == "--dims")
      for (auto& d : split(v, ',')) a.dims.push_back(std::stoll(d));
    else if (k == "--scalars")
      for (auto& d : split(v, ',')) a.scalars.push_back(std::stod(d));
    else
      setup_failed("unknown argument " + k);
  }
  return a;
}

void set_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit rl = {soft, hard};
  if (setrlimit(resource, &rl) != 0) setup_failed("setrlimit: " + std::string(strerror(errno)));
}

void install_handlers() {
  static std::vector<char> alt(1 << 16);
  stack_t ss = {};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa = {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGXCPU})
    sigaction(sig, &sa, nullptr);
  signal(SIGXFSZ, SIG_IGN);  // output beyond the file-size cap fails quietly
  signal(SIGPIPE, SIG_IGN);
  std::set_new_handler(on_new_failure);
  std::set_terminate(on_terminate);
}

bool read_command(kf::wire::Command& c) {
  char* p = reinterpret_cast<char*>(&c);
  size_t left = sizeof c;
  while (left > 0) {
    ssize_t n = read(kf::wire::kCommandFd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return c.magic == kf::wire::kMagic;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse_args(argc, argv);
  if (chdir(a.dir.c_str()) != 0) setup_failed("chdir " + a.dir);

  // One inaccessible range; each input mapped read-only from the sealed inputs' file, each
  // output read-write from the outputs' file, at its offset. What stays unmapped (the guard page
  // after every buffer) faults on any access.
  void* base =
      mmap(nullptr, a.map_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) setup_failed("mmap: " + std::string(strerror(errno)));
  auto* b = static_cast<char*>(base);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<void*> ptrs;
  for (const auto& spec : a.buffers) {
    auto f = split(spec, ':');
    if (f.size() != 4) setup_failed("bad buffer spec " + spec);
    size_t off = std::stoull(f[0]), len = std::stoull(f[1]);
    ptrs.push_back(b + off);
    const bool input = f[2] == "ro";
    // The buffer's pages: its slack (canary) in front, the buffer, up to its page end.
    const size_t lo = off / page * page, hi = (off + len + page - 1) / page * page;
    if (hi > lo) {
      const int prot = input ? PROT_READ : PROT_READ | PROT_WRITE;
      const int fd = input ? kf::wire::kInputFd : kf::wire::kOutputFd;
      if (mmap(b + lo, hi - lo, prot, MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd,
               static_cast<off_t>(lo)) == MAP_FAILED)
        setup_failed("mapping buffer " + f[3] + ": " + strerror(errno));
    }
    if (input && len > 0)
      g.inputs.push_back(
          {reinterpret_cast<uintptr_t>(b + off), reinterpret_cast<uintptr_t>(b + off + len), f[3]});
  }
  for (const auto& spec : a.guards) {
    auto f = split(spec, ':');
    if (f.size() != 3) setup_failed("bad guard spec " + spec);
    size_t off = std::stoull(f[0]), len = std::stoull(f[1]);
    g.guards.push_back(
        {reinterpret_cast<uintptr_t>(b + off), reinterpret_cast<uintptr_t>(b + off + len), f[2]});
  }
  close(kf::wire::kInputFd);
  close(kf::wire::kOutputFd);
  const size_t per_set = ptrs.size() / static_cast<size_t>(a.sets);

  g.as_limit = a.as_limit;
  install_handlers();
  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_FSIZE, 1 << 20, 1 << 20);
  if (a.cpu_limit > 0)
    set_limit(RLIMIT_CPU, static_cast<rlim_t>(a.cpu_limit), static_cast<rlim_t>(a.cpu_limit + 2));
  if (a.as_limit > 0) set_limit(RLIMIT_AS, a.as_limit, a.as_limit);
  // Trusted runtimes (e.g. LLVM's libomp, which registers itself through a file in /dev/shm on
  // first use) are loaded and initialized before the filter; the candidate then shares them.
  for (const auto& lib : a.preload) {
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) setup_failed("cannot preload " + lib);
    if (auto init = reinterpret_cast<int (*)()>(dlsym(h, "omp_get_max_threads"))) init();
  }
  int notify_fd = -1;
  std::string err = kf::sandbox::install_filter(getpid(), &notify_fd);
  if (!err.empty()) setup_failed(err);
  send_notify_fd(notify_fd);
  close(notify_fd);

  void* so = dlopen(a.so.c_str(), RTLD_NOW | RTLD_LOCAL);
  close(kf::wire::kObjectFd);
  if (!so) {
    Reply r;
    r.kind = ReplyKind::fault;
    r.fault = FaultKind::load_failed;
    std::snprintf(r.text, sizeof r.text, "%s", dlerror());
    send_reply(r);
    return kf::wire::kExitSetup;
  }
  auto entry = reinterpret_cast<EntryFn>(dlsym(so, "kf_entry"));
  if (!entry) {
    Reply r;
    r.kind = ReplyKind::fault;
    r.fault = FaultKind::load_failed;
    std::snprintf(r.text, sizeof r.text, "the shared object has no kf_entry");
    send_reply(r);
    return kf::wire::kExitSetup;
  }
  // The profiler's instrumented build exports its stage timers; a judged candidate need not.
  using StageTimesFn = int (*)(int64_t*, int);
  auto stage_times = reinterpret_cast<StageTimesFn>(dlsym(so, "kf_stage_times"));
  Reply ready;
  ready.kind = ReplyKind::ready;
  send_reply(ready);

  kf::wire::Command c;
  while (read_command(c)) {
    Reply r;
    r.nonce = c.nonce;
    switch (c.op) {
      case kf::wire::Op::run:
        for (uint32_t j = 0; j < c.reps; ++j) {
          size_t set = (c.first_set + j) % static_cast<size_t>(a.sets);
          entry(ptrs.data() + set * per_set, a.dims.data(), a.scalars.data());
        }
        r.kind = ReplyKind::done;
        break;
      case kf::wire::Op::ping:
        r.kind = ReplyKind::pong;
        break;
      case kf::wire::Op::stage_times:
        r.kind = ReplyKind::done;
        r.code = stage_times ? stage_times(r.values, kf::wire::kMaxStageTimes) : -1;
        break;
      case kf::wire::Op::exit:
        return 0;
    }
    send_reply(r);
  }
  return 0;
}
