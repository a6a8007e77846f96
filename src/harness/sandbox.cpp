#include "harness/sandbox.h"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <sstream>
#include <cstring>
#include <fmt/format.h>
#include <random>

#include "harness/worker_protocol.h"
#include "sandbox_rules.h"
#include "support/fs.h"

extern char** environ;

namespace kf {
namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned char kCanary = 0xA5;
constexpr size_t kDefaultMemory = size_t{3} << 30;

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

fs::path worker_path() {
  if (const char* p = std::getenv("KFORGE_WORKER"); p && *p) return p;
  return executable_dir() / "kforge-worker";
}

// A fd number >= 100 with FD_CLOEXEC, so dup2 to 3/4/5 in the child never collides.
int high_fd(int fd) {
  int h = fcntl(fd, F_DUPFD_CLOEXEC, 100);
  close(fd);
  return h;
}

}  // namespace

Expected<std::unique_ptr<Worker>> Worker::start(const WorkerSpec& spec) {
  KF_CHECK(spec.sets >= 1);
  std::unique_ptr<Worker> w(new Worker(spec));
  const size_t page = page_size();

  // Layout: [slack+canary | buffer] [guard page] per tensor per set.
  std::string buffers, guards;
  size_t off = 0;
  for (int s = 0; s < spec.sets; ++s) {
    for (const BufferSpec& b : spec.layout) {
      size_t body = round_up(std::max<size_t>(round_up(b.bytes, 64), 1), page);
      size_t start = off + body - round_up(b.bytes, 64);
      w->offsets_.push_back(start);
      if (s == 0) w->slack_.push_back(start - off);
      buffers += fmt::format("{}{}:{}:{}:{}", buffers.empty() ? "" : ";", start, b.bytes,
                             b.input ? "ro" : "rw", b.name);
      guards += fmt::format("{}{}:{}:{}", guards.empty() ? "" : ";", off + body, page, b.name);
      off += body + page;
    }
  }
  w->map_size_ = off;

  w->memfd_ = memfd_create("kforge-buffers", MFD_CLOEXEC);
  if (w->memfd_ < 0) return Status::error(fmt::format("memfd_create: {}", std::strerror(errno)));
  // Allocate and map the pages in bulk: faulting shared memory in page by page is several
  // times slower, and bench shapes can hold gigabytes.
  if (fallocate(w->memfd_, 0, 0, static_cast<off_t>(w->map_size_)) != 0 &&
      ftruncate(w->memfd_, static_cast<off_t>(w->map_size_)) != 0)
    return Status::error(fmt::format("allocating {} bytes of shared memory: {}", w->map_size_,
                                     std::strerror(errno)));
  w->map_ = mmap(nullptr, w->map_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                 w->memfd_, 0);
  if (w->map_ == MAP_FAILED) {
    w->map_ = nullptr;
    return Status::error(fmt::format("mmap: {}", std::strerror(errno)));
  }
  for (int s = 0; s < spec.sets; ++s)
    for (size_t t = 0; t < spec.layout.size(); ++t) {
      auto* p = static_cast<char*>(w->buffer(s, t));
      std::memset(p - w->slack_[t], kCanary, w->slack_[t]);
      const size_t bytes = spec.layout[t].bytes;
      std::memset(p + bytes, kCanary, round_up(bytes, 64) - bytes);
    }

  static std::mt19937_64 nonce_gen{std::random_device{}()};
  w->nonce_ = nonce_gen();

  char dir_tmpl[] = "/tmp/kforge-run-XXXXXX";
  if (!mkdtemp(dir_tmpl)) return Status::error("mkdtemp failed");
  w->dir_ = dir_tmpl;
  w->log_path_ = fs::path(w->dir_).parent_path() / (fs::path(w->dir_).filename().string() + ".log");
  int log_fd = open(w->log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) return Status::error("cannot create the worker's log file");
  log_fd = high_fd(log_fd);

  int cmd[2], reply[2];
  if (pipe2(cmd, O_CLOEXEC) != 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, reply) != 0)
    return Status::error(fmt::format("pipe: {}", std::strerror(errno)));
  int cmd_r = high_fd(cmd[0]), reply_w = high_fd(reply[1]);
  w->cmd_fd_ = high_fd(cmd[1]);
  w->reply_fd_ = high_fd(reply[0]);
  int mem = fcntl(w->memfd_, F_DUPFD_CLOEXEC, 100);

  std::string dims, scalars;
  for (auto d : spec.dims) dims += fmt::format("{}{}", dims.empty() ? "" : ",", d);
  for (auto v : spec.scalars) scalars += fmt::format("{}{:.17g}", scalars.empty() ? "" : ",", v);
  const size_t as_limit = w->map_size_ + (spec.memory_limit ? spec.memory_limit : kDefaultMemory);
  std::vector<std::string> args = {worker_path().string(),
                                   "--so", spec.so,
                                   "--dir", w->dir_,
                                   "--map-size", std::to_string(w->map_size_),
                                   "--as-limit", std::to_string(as_limit),
                                   "--cpu-limit", std::to_string(static_cast<long>(spec.cpu_limit_s)),
                                   "--sets", std::to_string(spec.sets),
                                   "--buffers", buffers,
                                   "--guards", guards,
                                   "--dims", dims,
                                   "--scalars", scalars};
  if (!spec.preload.empty()) {
    std::string libs;
    for (const auto& l : spec.preload) libs += (libs.empty() ? "" : ",") + l;
    args.insert(args.end(), {"--preload", libs});
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // A clean environment: nothing from the judge's environment leaks into the candidate.
  // OpenMP threads are bound one per core: unbound, a parallel region after an idle spell
  // waits milliseconds for its threads on a shared VM, which would dominate short kernels.
  // Idle threads spin ~0.5 ms (GOMP_SPINCOUNT) before they sleep, not libgomp's default of
  // several ms: side-by-side timing alternates batches between worker processes bound to the
  // same cores, and one worker's spinning threads would slow the next worker's batch (oneDNN's
  // 2-thread 50 ran at 18.6 ms next to a candidate, 11.9 ms alone). Calls within a batch run
  // back to back, so their threads never reach the sleep.
  std::vector<std::string> env = {fmt::format("OMP_NUM_THREADS={}", spec.threads),
                                  "OMP_PROC_BIND=true", "OMP_PLACES=cores", "GOMP_SPINCOUNT=30000",
                                  "PATH=/usr/bin:/bin", "LC_ALL=C"};
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
  posix_spawn_file_actions_adddup2(&fa, cmd_r, wire::kCommandFd);
  posix_spawn_file_actions_adddup2(&fa, reply_w, wire::kReplyFd);
  posix_spawn_file_actions_adddup2(&fa, mem, wire::kBufferFd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, dflt;
  sigemptyset(&none);
  sigfillset(&dflt);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dflt);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  int rc = posix_spawn(&w->pid_, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(cmd_r);
  close(reply_w);
  close(mem);
  close(log_fd);
  if (rc != 0)
    return Status::error(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));

  // The seccomp listener comes first, then READY (or a fault while loading: static
  // constructors run then).
  RunOutcome ready = w->receive_listener(spec.start_timeout_s);
  if (ready.ok) ready = w->transact(0, 0, 0, spec.start_timeout_s);
  if (!ready.ok) {
    w->dead_ = true;
    w->death_ = ready;
  }
  return w;
}

Worker::~Worker() {
  if (pid_ > 0) {
    if (!dead_) {
      wire::Command c;
      c.op = wire::Op::exit;
      ssize_t ignored = write(cmd_fd_, &c, sizeof c);
      (void)ignored;
    }
    kill(-pid_, SIGKILL);
    int st;
    waitpid(pid_, &st, 0);
  }
  for (int fd : {memfd_, cmd_fd_, reply_fd_, notify_fd_})
    if (fd >= 0) close(fd);
  if (map_) munmap(map_, map_size_);
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
  if (!log_path_.empty()) fs::remove(log_path_, ec);
}

void* Worker::buffer(int set, size_t tensor) const {
  size_t i = static_cast<size_t>(set) * spec_.layout.size() + tensor;
  return static_cast<char*>(map_) + offsets_.at(i);
}

RunOutcome Worker::die(Verdict v, std::string message) {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    int st;
    waitpid(pid_, &st, 0);
    pid_ = -1;
  }
  dead_ = true;
  death_ = RunOutcome{.ok = false, .seconds = 0, .verdict = v, .message = std::move(message)};
  return death_;
}

RunOutcome Worker::classify_exit(const std::string& context) {
  int st = 0;
  pid_t got = 0;
  // The pipe closed: the process is exiting; give it a moment to be reaped.
  for (int i = 0; i < 200 && (got = waitpid(pid_, &st, WNOHANG)) == 0; ++i) usleep(5000);
  if (got == 0) return die(Verdict::crash, context + ": the worker closed its channel");
  pid_ = -1;
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    if (sig == SIGXCPU) return die(Verdict::timeout, context + ": CPU time limit exceeded");
    if (sig == SIGSYS)
      return die(Verdict::forbidden,
                 context + ": killed by SIGSYS: a forbidden system call (with SIGSYS blocked)");
    return die(Verdict::crash, fmt::format("{}: killed by {}", context, signal_text(sig)));
  }
  return die(Verdict::crash,
             fmt::format("{}: the process exited with status {} (a kernel must return, not exit)",
                         context, WEXITSTATUS(st)));
}

RunOutcome Worker::receive_listener(double timeout_s) {
  struct pollfd p = {reply_fd_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout_s * 1000)) <= 0)
    return die(Verdict::crash, "the worker did not start in time");
  wire::FdMessage m;
  m.byte = 0;
  ssize_t n = recvmsg(reply_fd_, &m.msg, MSG_CMSG_CLOEXEC);
  if (n == 1 && (notify_fd_ = m.fd()) >= 0) return RunOutcome{.ok = true};
  // Not the listener: the worker reported a set-up failure instead.
  if (n > 0) {
    wire::Reply r;
    auto* bytes = reinterpret_cast<char*>(&r);
    bytes[0] = m.byte;
    size_t got = 1;
    while (got < sizeof r) {
      ssize_t k = read(reply_fd_, bytes + got, sizeof r - got);
      if (k <= 0) break;
      got += static_cast<size_t>(k);
    }
    r.text[sizeof r.text - 1] = 0;
    if (got == sizeof r) return die(Verdict::crash, r.text);
  }
  return classify_exit("starting the sandbox");
}

// A forbidden system call is pending: name it and end the worker.
RunOutcome Worker::forbidden_call(const char* what) {
  struct seccomp_notif* req = nullptr;
  struct seccomp_notif_resp* resp = nullptr;
  std::string name = "a forbidden system call";
  std::string reason;
  if (seccomp_notify_alloc(&req, &resp) == 0 && seccomp_notify_receive(notify_fd_, req) == 0) {
    const int nr = req->data.nr;
    char* resolved = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    name = resolved ? resolved : fmt::format("syscall {}", nr);
    free(resolved);
    reason = sandbox::syscall_reason(nr);
  }
  if (req) seccomp_notify_free(req, resp);
  return die(Verdict::forbidden,
             fmt::format("{}: forbidden system call {} ({})", what, name, reason));
}

void Worker::pause() {
  if (dead_ || paused_ || pid_ <= 0) return;
  if (kill(-pid_, SIGSTOP) != 0) return;
  // Wait until the group has stopped: SIGSTOP is asynchronous, and a thread still running would
  // share the machine with the solution timed next. A worker that died instead is reaped later.
  int st = 0;
  if (waitpid(pid_, &st, WUNTRACED) == pid_ && !WIFSTOPPED(st)) {
    pid_ = -1;
    dead_ = true;
    death_ = RunOutcome{.ok = false, .verdict = Verdict::crash,
                        .message = "the worker died while it was paused"};
    return;
  }
  paused_ = true;
}

void Worker::resume() {
  if (!paused_) return;
  paused_ = false;
  if (pid_ > 0) kill(-pid_, SIGCONT);
}

RunOutcome Worker::transact(uint32_t op, int first_set, int reps, double timeout_s) {
  if (dead_) return death_;
  resume();
  const uint64_t nonce = ++nonce_ * 0x9e3779b97f4a7c15ull;
  using wire::Op;
  const char* what = op == 0                               ? "loading"
                     : op == static_cast<uint32_t>(Op::run)         ? "running"
                     : op == static_cast<uint32_t>(Op::stage_times) ? "reading stage timers"
                                                                     : "ping";
  auto start = Clock::now();
  if (op != 0) {
    wire::Command c;
    c.op = static_cast<wire::Op>(op);
    c.nonce = nonce;
    c.first_set = static_cast<uint32_t>(first_set);
    c.reps = static_cast<uint32_t>(reps);
    start = Clock::now();
    if (write(cmd_fd_, &c, sizeof c) != static_cast<ssize_t>(sizeof c))
      return classify_exit(what);
  }
  const auto deadline = start + std::chrono::duration<double>(timeout_s);
  wire::Reply r;
  size_t got = 0;
  while (got < sizeof r) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return die(Verdict::timeout, fmt::format("{}: timed out after {:.1f} s (wall clock)", what,
                                               timeout_s));
    struct pollfd p[2] = {{reply_fd_, POLLIN, 0}, {notify_fd_, POLLIN, 0}};
    int n = poll(p, 2, static_cast<int>(std::min<long>(left.count() + 1, 1000)));
    if (n < 0 && errno != EINTR) return die(Verdict::crash, "poll failed");
    if (n <= 0) continue;
    if (p[1].revents & POLLIN) return forbidden_call(what);
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t k = read(reply_fd_, reinterpret_cast<char*>(&r) + got, sizeof r - got);
    if (k <= 0) return classify_exit(what);
    got += static_cast<size_t>(k);
  }
  const auto end = Clock::now();
  // A forbidden call made by another thread while this command ran.
  struct pollfd pending = {notify_fd_, POLLIN, 0};
  if (poll(&pending, 1, 0) == 1 && (pending.revents & POLLIN)) return forbidden_call(what);
  if (r.magic != wire::kMagic)
    return die(Verdict::forbidden, fmt::format("{}: garbage on the judge's reply channel (the "
                                               "candidate wrote into it)", what));
  r.text[sizeof r.text - 1] = 0;
  std::string text = r.text;
  switch (r.kind) {
    case wire::ReplyKind::fault:
      switch (r.fault) {
        case wire::FaultKind::input_write:
        case wire::FaultKind::guard_write:
          return die(Verdict::forbidden, fmt::format("{}: {}", what, text));
        case wire::FaultKind::out_of_memory:
          return die(Verdict::memory_limit, fmt::format("{}: {}", what, text));
        case wire::FaultKind::cpu_limit: return die(Verdict::timeout, fmt::format("{}: {}", what, text));
        case wire::FaultKind::load_failed:
          return die(Verdict::compile_error, fmt::format("the shared object did not load: {}", text));
        case wire::FaultKind::signal:
        case wire::FaultKind::setup_failed:
        case wire::FaultKind::none: return die(Verdict::crash, fmt::format("{}: {}", what, text));
      }
      return die(Verdict::crash, text);
    case wire::ReplyKind::ready:
      if (op != 0) break;
      return RunOutcome{.ok = true};
    case wire::ReplyKind::done:
    case wire::ReplyKind::pong:
      if (op == 0 || r.nonce != nonce) break;
      if (op == static_cast<uint32_t>(wire::Op::stage_times)) {
        stage_count_ = std::min(r.code, wire::kMaxStageTimes);
        stage_ns_.assign(r.values, r.values + std::max(stage_count_, 0));
      }
      return RunOutcome{.ok = true, .seconds = std::chrono::duration<double>(end - start).count()};
    case wire::ReplyKind::error: break;
  }
  return die(Verdict::forbidden,
             fmt::format("{}: a forged or out-of-order reply on the judge's channel", what));
}

RunOutcome Worker::run(int first_set, int reps, double timeout_s) {
  return transact(static_cast<uint32_t>(wire::Op::run), first_set, reps, timeout_s);
}

RunOutcome Worker::ping(double timeout_s) {
  return transact(static_cast<uint32_t>(wire::Op::ping), 0, 0, timeout_s);
}

Expected<std::vector<int64_t>> Worker::stage_times(double timeout_s) {
  RunOutcome r = transact(static_cast<uint32_t>(wire::Op::stage_times), 0, 0, timeout_s);
  if (!r.ok) return Status::error(r.message);
  if (stage_count_ < 0) return Status::error("the shared object has no stage timers");
  return stage_ns_;
}

ProcessCounters Worker::counters() const {
  ProcessCounters c;
  if (pid_ <= 0) return c;
  auto stat = read_file(fmt::format("/proc/{}/stat", pid_));
  if (stat) {
    // Fields after the command name (which may hold spaces) start at field 3.
    std::istringstream in(stat->substr(stat->rfind(')') + 2));
    std::vector<std::string> f{std::istream_iterator<std::string>(in), {}};
    if (f.size() > 12) {
      const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
      c.minor_faults = std::stoull(f[7]);
      c.major_faults = std::stoull(f[9]);
      c.cpu_s = static_cast<double>(std::stoull(f[11]) + std::stoull(f[12])) / tick;
    }
  }
  if (auto status = read_file(fmt::format("/proc/{}/status", pid_))) {
    std::istringstream in(*status);
    std::string key;
    uint64_t v;
    while (in >> key) {
      if (key == "voluntary_ctxt_switches:" && in >> v) c.voluntary_switches = v;
      if (key == "nonvoluntary_ctxt_switches:" && in >> v) c.involuntary_switches = v;
    }
  }
  return c;
}

bool Worker::canaries_intact(std::string* which) const {
  for (int s = 0; s < spec_.sets; ++s)
    for (size_t t = 0; t < spec_.layout.size(); ++t) {
      // The slack in front of the buffer and the tail up to its guard page.
      const auto* p = static_cast<const unsigned char*>(buffer(s, t));
      const size_t bytes = spec_.layout[t].bytes;
      bool ok = true;
      for (size_t i = 1; i <= slack_[t]; ++i) ok &= *(p - i) == kCanary;
      for (size_t i = bytes; i < round_up(bytes, 64); ++i) ok &= p[i] == kCanary;
      if (!ok) {
        if (which) *which = spec_.layout[t].name;
        return false;
      }
    }
  return true;
}

std::string Worker::output_log() const {
  auto text = read_file(log_path_);
  if (!text) return "";
  return text->substr(0, 64 * 1024);
}

}  // namespace kf
