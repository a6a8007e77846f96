#include "harness/jail.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>

#include "support/interrupt.h"

namespace kf {
namespace {

// Landlock rights and attributes newer than the system headers (Debian 12 ships ABI 2).
constexpr uint64_t kFsTruncate = 1ull << 14;        // ABI 3
constexpr uint64_t kFsIoctlDev = 1ull << 15;        // ABI 5
constexpr uint64_t kNetBindTcp = 1ull << 0;         // ABI 4
constexpr uint64_t kNetConnectTcp = 1ull << 1;      // ABI 4
constexpr uint64_t kScopeAbstractUnix = 1ull << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ull << 1;        // ABI 6

struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
};

// The unprivileged id a root judge runs jailed work as ("nobody" on Debian).
constexpr uid_t kJailUid = 65534;
constexpr gid_t kJailGid = 65534;

// Trees every jailed process may read: the system's programs, libraries and headers, and the
// pseudo-files the C library and OpenMP runtimes read (a fresh /proc of its own PID namespace).
constexpr const char* kSystemTrees[] = {"/usr",
                                        "/lib",
                                        "/lib64",
                                        "/etc/ld.so.cache",
                                        "/etc/alternatives",
                                        "/proc",
                                        "/sys/devices/system/cpu",
                                        "/dev/null",
                                        "/dev/zero",
                                        "/dev/urandom"};

int landlock_abi() {
  long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : static_cast<int>(v);
}

uint64_t fs_rights(int abi) {
  uint64_t all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // ABI 1
  if (abi >= 2) all |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) all |= kFsTruncate;
  if (abi >= 5) all |= kFsIoctlDev;
  return all;
}

constexpr uint64_t kReadRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t kFileOnlyRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                     LANDLOCK_ACCESS_FS_READ_FILE | kFsTruncate | kFsIoctlDev;

// One Landlock rule: a tree (or file) and the rights granted beneath it.
struct Grant {
  std::string path;
  uint64_t rights;
};

// What a spec grants: the system trees to read and execute (the dynamic loader is opened for
// execution, and the compiler driver runs its own programs; the worker's seccomp filter refuses
// execve itself), its read-only and read-write trees (never executable), a toolchain's prefix
// (read and execute), and the program.
std::vector<Grant> grants_of(const JailSpec& spec, uint64_t handled, bool private_shm) {
  std::vector<Grant> out;
  for (const char* tree : kSystemTrees)
    out.push_back({tree, kReadRights | LANDLOCK_ACCESS_FS_EXECUTE});
  for (const auto& p : spec.read_only) out.push_back({p.string(), kReadRights});
  for (const auto& p : spec.read_exec)
    out.push_back({p.string(), kReadRights | LANDLOCK_ACCESS_FS_EXECUTE});
  const uint64_t write = handled & ~(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                                     LANDLOCK_ACCESS_FS_EXECUTE);
  for (const auto& p : spec.read_write) out.push_back({p.string(), write});
  if (private_shm) out.push_back({"/dev/shm", write});
  out.push_back({spec.argv.at(0), LANDLOCK_ACCESS_FS_EXECUTE | kReadRights});
  return out;
}

RulesetAttr ruleset_attr(int abi) {
  RulesetAttr attr;
  attr.handled_access_fs = fs_rights(abi);
  if (abi >= 4) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (abi >= 6) attr.scoped = kScopeAbstractUnix | kScopeSignal;
  return attr;
}

size_t ruleset_attr_size(int abi) {
  return abi >= 6 ? sizeof(RulesetAttr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
}

// Everything the child needs, prepared by the parent: after clone() the child may not allocate.
struct ChildPlan {
  bool drop_to_nobody = false;  // root judge: setresuid to the jail's id
  int sync_fd = -1;             // user namespace: wait for the parent's id maps
  int error_fd = -1;            // close-on-exec: a message here means the start failed
  int exe_fd = -1;              // O_PATH of argv[0], run with execveat
  int landlock_abi = 0;         // 0: no Landlock (unsafe mode on a kernel without it)
  RulesetAttr ruleset;
  size_t ruleset_size = 0;
  std::vector<const char*> grant_paths;
  std::vector<uint64_t> grant_rights;
  bool new_proc = false;  // mount a fresh /proc (own PID namespace)
  int last_cap = 40;
  std::vector<int> from, to;  // descriptor moves
  std::vector<char*> argv, envp;
  const char* cwd = "/";
  JailLimits limits;
};

[[noreturn]] void child_fail(const ChildPlan& p, const char* step) {
  const int err = errno;
  char msg[256];
  // snprintf of integers and strings does not allocate.
  int n = snprintf(msg, sizeof msg, "jail: %s failed: %s", step, strerrorname_np(err));
  if (n > 0) {
    ssize_t ignored = write(p.error_fd, msg, static_cast<size_t>(std::min(n, 255)));
    (void)ignored;
  }
  _exit(127);
}

void child_limit(const ChildPlan& p, int resource, rlim_t soft, rlim_t hard) {
  struct rlimit rl = {soft, hard};
  if (setrlimit(resource, &rl) != 0) child_fail(p, "setrlimit");
}

// Builds the Landlock ruleset inside the child, after its /proc is mounted (a rule binds to the
// mount it was opened on), and confines the child with it.
void restrict_self(const ChildPlan& p) {
  const int rs =
      static_cast<int>(syscall(SYS_landlock_create_ruleset, &p.ruleset, p.ruleset_size, 0));
  if (rs < 0) child_fail(p, "landlock_create_ruleset");
  for (size_t i = 0; i < p.grant_paths.size(); ++i) {
    const int fd = open(p.grant_paths[i], O_PATH | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;  // a system tree this machine does not have
      child_fail(p, "opening a granted path");
    }
    struct stat st;
    uint64_t rights = p.grant_rights[i] & p.ruleset.handled_access_fs;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= kFileOnlyRights;
    struct landlock_path_beneath_attr attr = {.allowed_access = rights, .parent_fd = fd};
    if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0)
      child_fail(p, "landlock_add_rule");
    close(fd);
  }
  if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) child_fail(p, "landlock_restrict_self");
  close(rs);
}

[[noreturn]] void child_main(ChildPlan& p) {
  // The plan's own descriptors move above every target first: placing the spec's descriptors
  // must not overwrite them.
  for (int* own : {&p.error_fd, &p.exe_fd, &p.sync_fd})
    if (*own >= 0 && (*own = fcntl(*own, F_DUPFD_CLOEXEC, 900)) < 0) _exit(127);
  if (setsid() < 0) child_fail(p, "setsid");
  if (p.sync_fd >= 0) {
    // The judge is non-dumpable, and so is this copy of it: its /proc files then belong to root
    // and a judge that is not root could not write the id maps. It runs nothing untrusted
    // before exec, which replaces its memory.
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) child_fail(p, "dumpable");
    if (write(p.sync_fd, "R", 1) != 1) child_fail(p, "announcing the namespace");
    char go = 0;
    if (read(p.sync_fd, &go, 1) != 1 || go != 'G') child_fail(p, "waiting for the id maps");
  }
  if (p.new_proc) {
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      child_fail(p, "making mounts private");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
      child_fail(p, "mounting /proc");
    // POSIX shared memory of its own, small, gone with the namespace (System V shared memory
    // lives in its own IPC namespace).
    if (access("/dev/shm", F_OK) == 0 &&
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=16m,nr_inodes=64,mode=1777") != 0)
      child_fail(p, "mounting /dev/shm");
  }
  // Descriptors: every source moved out of the way first, then placed; 0-2 default to
  // /dev/null; everything else is closed at exec.
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) child_fail(p, "opening /dev/null");
  int high[16];
  const size_t moves = std::min<size_t>(p.from.size(), 16);
  for (size_t i = 0; i < moves; ++i)
    if ((high[i] = fcntl(p.from[i], F_DUPFD_CLOEXEC, 1000)) < 0)
      child_fail(p, "moving a descriptor");
  for (int std_fd = 0; std_fd < 3; ++std_fd)
    if (dup2(null_fd, std_fd) < 0) child_fail(p, "dup2 /dev/null");
  int top = 2;
  for (size_t i = 0; i < moves; ++i) {
    if (dup2(high[i], p.to[i]) < 0) child_fail(p, "dup2");
    top = std::max(top, p.to[i]);
  }
  if (syscall(SYS_close_range, static_cast<unsigned>(top + 1), ~0u, 4 /*CLOSE_RANGE_CLOEXEC*/) != 0)
    child_fail(p, "close_range");

  child_limit(p, RLIMIT_CORE, 0, 0);
  child_limit(p, RLIMIT_FSIZE, p.limits.file_size, p.limits.file_size);
  child_limit(p, RLIMIT_NOFILE, p.limits.open_files, p.limits.open_files);
  if (p.limits.processes > 0) child_limit(p, RLIMIT_NPROC, p.limits.processes, p.limits.processes);
  if (p.limits.address_space > 0)
    child_limit(p, RLIMIT_AS, p.limits.address_space, p.limits.address_space);
  if (p.limits.cpu_s > 0) {
    const auto cpu = static_cast<rlim_t>(std::ceil(p.limits.cpu_s));
    child_limit(p, RLIMIT_CPU, cpu, cpu + 2);
  }
  if (chdir(p.cwd) != 0) child_fail(p, "chdir");

  // Privileges: no capability can come back (bounding set emptied, ambient cleared);
  // no_new_privs (required by Landlock, and it blocks set-id programs); Landlock while still
  // privileged enough to open the granted paths (the jail's id may not traverse their parents);
  // then the unprivileged id. A process that changes ids keeps no capabilities; one in its own
  // user namespace loses them at exec (its id there is not 0).
  for (int cap = 0; cap <= p.last_cap; ++cap)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      child_fail(p, "dropping capabilities");
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    child_fail(p, "ambient capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(p, "no_new_privs");
  if (p.landlock_abi > 0) restrict_self(p);
  // The raw system calls, not libc's: libc's set*id wrappers signal every thread the judge had
  // when it forked (POSIX says all threads change ids) and wait for answers that never come in
  // a child, which has one thread: a judge compiling on several threads would hang here.
  if (p.drop_to_nobody) {
    if (syscall(SYS_setgroups, 0, nullptr) != 0) child_fail(p, "setgroups");
    if (syscall(SYS_setresgid, kJailGid, kJailGid, kJailGid) != 0) child_fail(p, "setresgid");
    if (syscall(SYS_setresuid, kJailUid, kJailUid, kJailUid) != 0) child_fail(p, "setresuid");
  }
  // The judge's death ends the jail (set after the id change, which clears it).
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) child_fail(p, "pdeathsig");
  syscall(SYS_execveat, p.exe_fd, "", p.argv.data(), p.envp.data(), AT_EMPTY_PATH);
  child_fail(p, "exec");
}

int read_last_cap() {
  auto text = read_file("/proc/sys/kernel/cap_last_cap");
  if (!text) return CAP_LAST_CAP;
  try {
    return std::stoi(*text);
  } catch (...) {
    return CAP_LAST_CAP;
  }
}

Status write_proc(pid_t pid, const char* file, const std::string& text) {
  const std::string path = fmt::format("/proc/{}/{}", pid, file);
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(fmt::format("jail: open {}: {}", path, strerror(errno)));
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  close(fd);
  if (!ok) return Status::error(fmt::format("jail: write {}: {}", path, strerror(err)));
  return ok_status();
}

std::atomic<bool> g_unsafe{false};

// One descriptor, closed on scope exit.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset(int f = -1) {
    if (fd >= 0) close(fd);
    fd = f;
  }
};

struct Facilities {
  bool namespaces = true, landlock = true;
};

Expected<pid_t> spawn_with(const JailSpec& spec, const Facilities& use) {
  if (spec.argv.empty() || spec.argv[0].empty() || spec.argv[0][0] != '/')
    return Status::error("jail: argv[0] must be an absolute path");
  if (spec.fds.size() > 16) return Status::error("jail: at most 16 descriptors");
  const bool root = geteuid() == 0;
  ChildPlan plan;
  plan.drop_to_nobody = root;
  plan.last_cap = read_last_cap();
  plan.limits = spec.limits;
  plan.new_proc = use.namespaces;
  std::vector<std::string> argv = spec.argv, envp = spec.env;
  for (auto& a : argv) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (auto& e : envp) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  const std::string cwd = spec.cwd.empty() ? "/" : spec.cwd.string();
  plan.cwd = cwd.c_str();
  for (auto [from, to] : spec.fds) {
    plan.from.push_back(from);
    plan.to.push_back(to);
  }
  Fd exe(open(spec.argv[0].c_str(), O_PATH | O_CLOEXEC));
  if (exe.fd < 0)
    return Status::error(fmt::format("jail: cannot open {}: {}", spec.argv[0], strerror(errno)));
  plan.exe_fd = exe.fd;
  std::vector<Grant> grants;
  if (use.landlock) {
    plan.landlock_abi = landlock_abi();
    plan.ruleset = ruleset_attr(plan.landlock_abi);
    plan.ruleset_size = ruleset_attr_size(plan.landlock_abi);
    grants = grants_of(spec, plan.ruleset.handled_access_fs, plan.new_proc);
    for (const Grant& g : grants) {
      plan.grant_paths.push_back(g.path.c_str());
      plan.grant_rights.push_back(g.rights);
    }
  }
  int err_pipe[2], sync_pipe[2] = {-1, -1};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return Status::error("jail: pipe failed");
  Fd err_r(err_pipe[0]), err_w(err_pipe[1]);
  plan.error_fd = err_w.fd;
  const bool user_ns = use.namespaces && !root;
  Fd sync_r, sync_w;
  if (user_ns) {
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync_pipe) != 0)
      return Status::error("jail: socketpair failed");
    sync_r.reset(sync_pipe[0]);
    sync_w.reset(sync_pipe[1]);
    plan.sync_fd = sync_r.fd;
  }
  unsigned long flags = SIGCHLD;
  if (use.namespaces)
    flags |= CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS | CLONE_NEWUTS |
             (user_ns ? CLONE_NEWUSER : 0);
  const long pid = syscall(SYS_clone, flags, nullptr, nullptr, nullptr, 0);
  if (pid < 0) return Status::error(fmt::format("jail: clone: {}", strerror(errno)));
  if (pid == 0) child_main(plan);
  err_w.reset();
  sync_r.reset();
  const auto child = static_cast<pid_t>(pid);
  auto abort_child = [&](Status s) -> Expected<pid_t> {
    kill(child, SIGKILL);
    int st;
    waitpid(child, &st, 0);
    return s;
  };
  if (user_ns) {
    // The child says when it is dumpable again (its /proc files are then the user's).
    char ready = 0;
    if (read(sync_w.fd, &ready, 1) != 1 || ready != 'R') {
      char msg[256];
      ssize_t k = read(err_r.fd, msg, sizeof msg - 1);
      msg[std::max<ssize_t>(k, 0)] = 0;
      return abort_child(Status::error(k > 0 ? msg : "jail: the child did not start"));
    }
    const uid_t uid = geteuid();
    const gid_t gid = getegid();
    Status s = write_proc(child, "setgroups", "deny");
    if (s.ok()) s = write_proc(child, "uid_map", fmt::format("{} {} 1\n", uid, uid));
    if (s.ok()) s = write_proc(child, "gid_map", fmt::format("{} {} 1\n", gid, gid));
    if (!s.ok()) return abort_child(s);
    if (write(sync_w.fd, "G", 1) != 1) return abort_child(Status::error("jail: sync failed"));
  }
  // The error pipe closes at exec: EOF means the program is running confined.
  char msg[256];
  ssize_t n;
  do n = read(err_r.fd, msg, sizeof msg - 1);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    msg[n] = 0;
    return abort_child(Status::error(fmt::format("{} (starting {})", msg, spec.argv[0])));
  }
  return child;
}

Facilities facilities() {
  const SandboxSupport& s = sandbox_support();
  return Facilities{.namespaces = s.namespaces, .landlock = s.landlock};
}

}  // namespace

const SandboxSupport& sandbox_support() {
  static const SandboxSupport support = [] {
    SandboxSupport s;
    s.as_root = geteuid() == 0;
    s.landlock_abi = landlock_abi();
    s.landlock = s.landlock_abi >= 1;
    if (!s.landlock)
      s.missing.push_back(
          "Landlock is not available (kernel 5.13+ with landlock in the LSM list): "
          "a candidate could read any file its user can");
    s.seccomp_notify = syscall(SYS_seccomp, 3 /*SECCOMP_GET_NOTIF_SIZES*/, 0,
                               std::array<uint16_t, 3>{}.data()) == 0;
    if (!s.seccomp_notify)
      s.missing.push_back("seccomp user notification is not available (kernel 5.0+)");
    // Namespaces: start a confined /bin/true the way every jail starts.
    const char* true_bin = access("/usr/bin/true", X_OK) == 0 ? "/usr/bin/true" : "/bin/true";
    auto pid = spawn_with(JailSpec{.argv = {true_bin}},
                          Facilities{.namespaces = true, .landlock = s.landlock});
    int st = 0;
    if (pid && waitpid(*pid, &st, 0) == *pid && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      s.namespaces = true;
    } else {
      s.missing.push_back(
          fmt::format("namespaces (PID, network, IPC, mount{}) cannot be created: {}",
                      s.as_root ? "" : ", user",
                      pid ? "the probe exited with an error" : pid.error().message()));
    }
    return s;
  }();
  return support;
}

void set_unsafe_sandbox(bool unsafe) {
  g_unsafe = unsafe;
}
bool unsafe_sandbox() {
  return g_unsafe;
}

Status require_sandbox() {
  const SandboxSupport& s = sandbox_support();
  if (s.complete() || g_unsafe) return ok_status();
  std::string lines;
  for (const auto& m : s.missing) lines += "\n  - " + m;
  return Status::error("the judge's sandbox is incomplete on this machine:" + lines +
                       "\nkforge refuses to run untrusted candidates without it; pass "
                       "--unsafe-sandbox to run them anyway (kforge doctor shows the facilities)");
}

Expected<pid_t> spawn_jailed(const JailSpec& spec) {
  KF_RETURN_IF_ERROR(require_sandbox());
  return spawn_with(spec, facilities());
}

Expected<ProcessResult> run_jailed(const JailSpec& spec, double timeout_s, size_t max_output) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Status::error("jail: pipe failed");
  Fd out_r(out[0]), out_w(out[1]);
  if (pipe2(err, O_CLOEXEC) != 0) return Status::error("jail: pipe failed");
  Fd err_r(err[0]), err_w(err[1]);
  JailSpec s = spec;
  s.fds.insert(s.fds.begin(), {{out_w.fd, 1}, {err_w.fd, 2}});
  const auto start = std::chrono::steady_clock::now();
  auto pid = spawn_jailed(s);
  if (!pid) return pid.error();
  out_w.reset();
  err_w.reset();
  ProcessResult r;
  const auto deadline = start + std::chrono::duration<double>(timeout_s);
  struct pollfd p[2] = {{out_r.fd, POLLIN, 0}, {err_r.fd, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_pipes = 2;
  char buf[65536];
  while (open_pipes > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    // An interrupted run (support/interrupt.h) kills the child as at its deadline.
    if (left.count() <= 0 || interrupted()) {
      r.timed_out = true;
      break;
    }
    int n = poll(p, 2, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t k = read(p[i].fd, buf, sizeof buf);
      if (k <= 0) {
        p[i].fd = -1;
        --open_pipes;
        continue;
      }
      // Keep reading past the cap so the child never blocks on a full pipe.
      const size_t room = max_output - std::min(max_output, sinks[i]->size());
      sinks[i]->append(buf, std::min(room, static_cast<size_t>(k)));
    }
  }
  if (r.timed_out) kill(-*pid, SIGKILL);
  int st = 0;
  while (waitpid(*pid, &st, 0) < 0 && errno == EINTR) {
  }
  // The namespace's other processes die with its first one; the group kill covers the rest.
  kill(-*pid, SIGKILL);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  if (WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  return r;
}

Expected<fs::path> make_jail_dir(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    return Status::error(fmt::format("mkdtemp {}: {}", tmpl, strerror(errno)));
  if (geteuid() == 0 && chown(tmpl.c_str(), kJailUid, kJailGid) != 0)
    return Status::error(fmt::format("chown {}: {}", tmpl, strerror(errno)));
  return fs::path(tmpl);
}

void make_judge_undumpable() {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

}  // namespace kf
