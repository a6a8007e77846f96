// The confinement every piece of untrusted work runs in: the candidate's worker and the
// compiler that builds it. A jailed process is started by clone() into its own user (when the
// judge is not root), PID, IPC, network, UTS and mount namespaces and its own session with no
// terminal; it runs as an unprivileged id with no capabilities and `no_new_privs`, sees the file
// system through Landlock (read-only system trees plus the paths its spec names, write access only
// where the spec says), and carries resource limits. Everything not granted is denied: no spec
// field widens access beyond what it names.
//
//   JailSpec j{.argv = {"/usr/bin/g++", ...}, .read_write = {*make_jail_dir("kforge-cc")},
//              .limits = {.address_space = 4 << 30, .cpu_s = 60, .file_size = 256 << 20}};
//   Expected<pid_t> pid = spawn_jailed(j);              // low level: the worker keeps fds
//   Expected<ProcessResult> r = run_jailed(j, 60);      // captures output, kills at the deadline
//
// Order inside the child (between clone and exec; only raw system calls, no allocation):
//   setsid → fds placed, others closed → [user ns id maps written by the parent] → mount ns made
//   private, a fresh /proc for the new PID namespace → loopback-only network namespace →
//   rlimits → Landlock → drop to the unprivileged id, clear every capability set →
//   no_new_privs → exec.
// A step that fails aborts the start with a message naming it; nothing runs half-confined.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "support/fs.h"
#include "support/status.h"
#include "support/subprocess.h"

namespace kf {

struct JailLimits {
  size_t address_space = 0;            // RLIMIT_AS in bytes; 0 = none
  double cpu_s = 0;                    // RLIMIT_CPU (soft; hard = soft + 2 s); 0 = none
  size_t file_size = size_t{1} << 20;  // RLIMIT_FSIZE: the largest file it may write
  size_t processes = 512;              // RLIMIT_NPROC: threads and processes of the jail's id
  size_t open_files = 256;             // RLIMIT_NOFILE
};

struct JailSpec {
  std::vector<std::string> argv;  // argv[0]: an absolute path (no PATH search inside)
  std::vector<std::string> env;   // the whole environment ("K=V"); nothing is inherited
  fs::path cwd;                   // must be inside read_only or read_write; empty: "/"
  // (parent fd, child fd): the only descriptors the child keeps. Child fd 0 is /dev/null unless
  // mapped here; 1 and 2 likewise.
  std::vector<std::pair<int, int>> fds;
  std::vector<fs::path> read_only;   // trees it may read (beyond the system trees)
  std::vector<fs::path> read_exec;   // trees it may read and run programs from (a toolchain)
  std::vector<fs::path> read_write;  // trees it may read, create and write in (never execute)
  JailLimits limits;
};

// What the platform provides; kforge doctor prints it and the judge refuses untrusted work when
// a facility is missing unless the user opts out (--unsafe-sandbox).
struct SandboxSupport {
  bool namespaces = false;  // PID, IPC, net, mount, UTS (user namespaces when not root)
  bool landlock = false;
  int landlock_abi = 0;
  bool seccomp_notify = false;
  bool as_root = false;              // the judge runs as root: the jail drops to an unprivileged id
  std::vector<std::string> missing;  // one line per facility that is absent, with its effect
  bool complete() const { return missing.empty(); }
};

// Probes once (memoized).
const SandboxSupport& sandbox_support();

// Set once at start-up from --unsafe-sandbox: run untrusted code with whatever facilities exist.
void set_unsafe_sandbox(bool unsafe);
bool unsafe_sandbox();

// Fails with a message naming the missing facilities when the sandbox is incomplete and the
// user has not opted out; the judge calls it before running any untrusted code.
Status require_sandbox();

// Starts the child; the caller owns the pid (waitpid) and its process group (= pid).
Expected<pid_t> spawn_jailed(const JailSpec& spec);

// Runs the child to completion with a wall-clock deadline (the whole group is killed at it),
// capturing stdout and stderr (capped at options.max_output each).
Expected<ProcessResult> run_jailed(const JailSpec& spec, double timeout_s,
                                   size_t max_output = size_t{1} << 20);

// The jailed id must be able to reach every path it is given: when the judge is root the jail
// runs as an unprivileged id that cannot enter root's 0700 directories (a home directory, a
// mkdtemp directory). Callers keep the jail's files in a directory made by make_jail_dir (a fresh
// directory under the system temp dir, owned by the jail's id) and pass files from elsewhere
// (the compile cache, kforge's own binaries and headers) as descriptors or copies.
Expected<fs::path> make_jail_dir(const std::string& prefix);

// Makes the calling process non-dumpable: no core dumps, and no other process of the same user
// may read its memory or /proc/<pid>/{mem,environ,maps}. kforge's main calls it first.
void make_judge_undumpable();

}  // namespace kf
