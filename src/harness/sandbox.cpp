#include "harness/sandbox.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <random>
#include <sstream>

#include "harness/jail.h"
#include "harness/worker_protocol.h"
#include "sandbox_rules.h"
#include "support/fs.h"
#include "support/interrupt.h"

extern char** environ;

namespace kf {
namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned char kCanary = 0xA5;
constexpr size_t kDefaultMemory = size_t{3} << 30;

size_t page_size() {
  return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}
size_t round_up(size_t v, size_t a) {
  return (v + a - 1) / a * a;
}

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

// Creates one shared-memory file of `size` bytes, allocates `ranges` of it in bulk (faulting
// shared memory in page by page is several times slower, and bench shapes can hold gigabytes),
// and maps it read-write for the judge.
Status make_shared_file(const char* name, size_t size,
                        const std::vector<std::pair<size_t, size_t>>& ranges, int* fd, void** map) {
  *fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (*fd < 0) return Status::error(fmt::format("memfd_create: {}", std::strerror(errno)));
  if (ftruncate(*fd, static_cast<off_t>(size)) != 0)
    return Status::error(fmt::format("sizing shared memory: {}", std::strerror(errno)));
  for (auto [off, len] : ranges)
    if (len > 0 && fallocate(*fd, 0, static_cast<off_t>(off), static_cast<off_t>(len)) != 0)
      return Status::error(
          fmt::format("allocating {} bytes of shared memory: {}", len, std::strerror(errno)));
  *map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
  if (*map == MAP_FAILED) {
    *map = nullptr;
    return Status::error(fmt::format("mmap: {}", std::strerror(errno)));
  }
  for (auto [off, len] : ranges)
    if (len > 0) madvise(static_cast<char*>(*map) + off, len, MADV_POPULATE_WRITE);
  return ok_status();
}

}  // namespace

Status Worker::map_buffers(std::string& buffers, std::string& guards) {
  const size_t page = page_size();
  // Layout: [slack+canary | buffer] [guard page] per tensor per set, one address range. Inputs
  // live in one shared file and outputs in another, at the same offsets: the inputs' file is
  // sealed against writes before the worker starts, so the worker can map it read-only and
  // nothing (mprotect, mremap, a write through /proc) can make it writable again. Guard pages
  // belong to neither file.
  std::vector<std::pair<size_t, size_t>> in_ranges, out_ranges;
  size_t off = 0;
  for (int s = 0; s < spec_.sets; ++s) {
    for (const BufferSpec& b : spec_.layout) {
      size_t body = round_up(std::max<size_t>(round_up(b.bytes, 64), 1), page);
      size_t start = off + body - round_up(b.bytes, 64);
      offsets_.push_back(start);
      if (s == 0) slack_.push_back(start - off);
      (b.input ? in_ranges : out_ranges).emplace_back(off, body);
      buffers += fmt::format("{}{}:{}:{}:{}", buffers.empty() ? "" : ";", start, b.bytes,
                             b.input ? "ro" : "rw", b.name);
      guards += fmt::format("{}{}:{}:{}", guards.empty() ? "" : ";", off + body, page, b.name);
      off += body + page;
    }
  }
  map_size_ = off;
  KF_RETURN_IF_ERROR(make_shared_file("kforge-inputs", off, in_ranges, &in_fd_, &in_map_));
  KF_RETURN_IF_ERROR(make_shared_file("kforge-outputs", off, out_ranges, &out_fd_, &out_map_));
  for (int s = 0; s < spec_.sets; ++s)
    for (size_t t = 0; t < spec_.layout.size(); ++t) {
      auto* p = static_cast<char*>(buffer(s, t));
      std::memset(p - slack_[t], kCanary, slack_[t]);
      const size_t bytes = spec_.layout[t].bytes;
      std::memset(p + bytes, kCanary, round_up(bytes, 64) - bytes);
    }
  // The judge keeps writing inputs through its own mapping; no new writable mapping can exist.
  if (fcntl(in_fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) !=
      0)
    return Status::error(fmt::format("sealing the inputs: {}", std::strerror(errno)));

  return {};
}

Expected<std::unique_ptr<Worker>> Worker::start(const WorkerSpec& spec) {
  KF_CHECK(spec.sets >= 1);
  KF_RETURN_IF_ERROR(require_sandbox());
  std::unique_ptr<Worker> w(new Worker(spec));

  std::string buffers, guards;  // the worker's --buffers and --guards
  KF_RETURN_IF_ERROR(w->map_buffers(buffers, guards));

  static std::mt19937_64 nonce_gen{std::random_device{}()};
  w->nonce_ = nonce_gen();

  auto dir = make_jail_dir("kforge-run");
  if (!dir) return dir.error();
  w->dir_ = dir->string();
  w->log_path_ = fs::path(w->dir_).parent_path() / (fs::path(w->dir_).filename().string() + ".log");
  int log_fd = open(w->log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) return Status::error("cannot create the worker's log file");
  log_fd = high_fd(log_fd);
  int so_fd = open(spec.so.c_str(), O_RDONLY | O_CLOEXEC);
  if (so_fd < 0) {
    close(log_fd);
    w->dead_ = true;
    w->death_ = RunOutcome{.ok = false,
                           .verdict = Verdict::compile_error,
                           .message = fmt::format("the shared object did not load: {}: {}", spec.so,
                                                  std::strerror(errno))};
    return w;
  }
  so_fd = high_fd(so_fd);

  int cmd[2], reply[2];
  if (pipe2(cmd, O_CLOEXEC) != 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, reply) != 0)
    return Status::error(fmt::format("pipe: {}", std::strerror(errno)));
  int cmd_r = high_fd(cmd[0]), reply_w = high_fd(reply[1]);
  w->cmd_fd_ = high_fd(cmd[1]);
  w->reply_fd_ = high_fd(reply[0]);

  std::string dims, scalars;
  for (auto d : spec.dims) dims += fmt::format("{}{}", dims.empty() ? "" : ",", d);
  for (auto v : spec.scalars) scalars += fmt::format("{}{:.17g}", scalars.empty() ? "" : ",", v);
  const size_t as_limit = w->map_size_ + (spec.memory_limit ? spec.memory_limit : kDefaultMemory);
  std::vector<std::string> args = {fs::absolute(worker_path()).string(),
                                   "--so",
                                   fmt::format("/proc/self/fd/{}", wire::kObjectFd),
                                   "--dir",
                                   w->dir_,
                                   "--map-size",
                                   std::to_string(w->map_size_),
                                   "--as-limit",
                                   std::to_string(as_limit),
                                   "--cpu-limit",
                                   std::to_string(static_cast<long>(spec.cpu_limit_s)),
                                   "--sets",
                                   std::to_string(spec.sets),
                                   "--buffers",
                                   buffers,
                                   "--guards",
                                   guards,
                                   "--dims",
                                   dims,
                                   "--scalars",
                                   scalars};
  if (!spec.preload.empty()) {
    std::string libs;
    for (const auto& l : spec.preload) libs += (libs.empty() ? "" : ",") + l;
    args.insert(args.end(), {"--preload", libs});
  }
  // A clean environment: nothing from the judge's environment leaks into the candidate.
  // OpenMP threads are bound one per core: unbound, a parallel region after an idle spell
  // waits milliseconds for its threads on a shared VM, which would dominate short kernels.
  // Idle threads spin briefly (GOMP_SPINCOUNT) before they sleep, not libgomp's default of
  // several ms: a solution that is not being timed is stopped, and its threads must not hold a
  // core when it resumes. Calls within a batch run back to back, so their threads never sleep.
  JailSpec jail{
      .argv = std::move(args),
      .env = {fmt::format("OMP_NUM_THREADS={}", spec.threads), "OMP_PROC_BIND=true",
              "OMP_PLACES=cores", "GOMP_SPINCOUNT=30000", "PATH=/usr/bin:/bin", "LC_ALL=C"},
      .cwd = w->dir_,
      .fds = {{log_fd, 1},
              {log_fd, 2},
              {cmd_r, wire::kCommandFd},
              {reply_w, wire::kReplyFd},
              {w->in_fd_, wire::kInputFd},
              {w->out_fd_, wire::kOutputFd},
              {so_fd, wire::kObjectFd}},
      .read_only = {spec.so},
      .limits = {.address_space = as_limit,
                 .cpu_s = spec.cpu_limit_s > 0 ? spec.cpu_limit_s + 1 : 0,
                 .file_size = size_t{1} << 20,
                 .processes = 512,
                 .open_files = 64}};
  for (const auto& lib : spec.preload) jail.read_only.push_back(lib);
  auto pid = spawn_jailed(jail);
  for (int fd : {cmd_r, reply_w, log_fd, so_fd}) close(fd);
  if (!pid) return Status::error(fmt::format("cannot start the worker: {}", pid.error().message()));
  w->pid_ = *pid;

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
  for (int fd : {in_fd_, out_fd_, cmd_fd_, reply_fd_, notify_fd_})
    if (fd >= 0) close(fd);
  if (in_map_) munmap(in_map_, map_size_);
  if (out_map_) munmap(out_map_, map_size_);
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
  if (!log_path_.empty()) fs::remove(log_path_, ec);
}

void* Worker::buffer(int set, size_t tensor) const {
  size_t i = static_cast<size_t>(set) * spec_.layout.size() + tensor;
  void* map = spec_.layout.at(tensor).input ? in_map_ : out_map_;
  return static_cast<char*>(map) + offsets_.at(i);
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

int Worker::thread_cap() const {
  return spec_.max_threads > 0 ? spec_.max_threads : 4 * spec_.threads + 8;
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
    death_ = RunOutcome{
        .ok = false, .verdict = Verdict::crash, .message = "the worker died while it was paused"};
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
  const char* what = op == 0                                        ? "loading"
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
    if (write(cmd_fd_, &c, sizeof c) != static_cast<ssize_t>(sizeof c)) return classify_exit(what);
  }
  const auto deadline = start + std::chrono::duration<double>(timeout_s);
  wire::Reply r;
  size_t got = 0;
  while (got < sizeof r) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return die(Verdict::timeout,
                 fmt::format("{}: timed out after {:.1f} s (wall clock)", what, timeout_s));
    // An interrupted run (support/interrupt.h) waits for nothing; what the verdict says is
    // discarded unrecorded.
    if (interrupted()) return die(Verdict::crash, fmt::format("{}: {}", what, interrupt_reason()));
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
                                               "candidate wrote into it)",
                                               what));
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
        case wire::FaultKind::cpu_limit:
          return die(Verdict::timeout, fmt::format("{}: {}", what, text));
        case wire::FaultKind::load_failed:
          return die(Verdict::compile_error,
                     fmt::format("the shared object did not load: {}", text));
        case wire::FaultKind::signal:
        case wire::FaultKind::setup_failed:
        case wire::FaultKind::none:
          return die(Verdict::crash, fmt::format("{}: {}", what, text));
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
      if (const int alive = counters().threads; alive > thread_cap())
        return die(Verdict::forbidden,
                   fmt::format("{}: the candidate started {} threads with a grant of {} (at most "
                               "{} may be alive: the grant, the runtimes' pools, the worker)",
                               what, alive, spec_.threads, thread_cap()));
      return RunOutcome{.ok = true, .seconds = std::chrono::duration<double>(end - start).count()};
    case wire::ReplyKind::error:
      break;
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
      if (key == "Threads:" && in >> v) c.threads = static_cast<int>(v);
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
