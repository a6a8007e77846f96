// The worker's seccomp filter: the system calls a kernel and the worker protocol need, and
// nothing else (default deny).
//
// A call that is not allowed is not executed: the kernel parks the calling thread and notifies
// the judge (SECCOMP_RET_USER_NOTIF), which records the call by name and kills the worker. No
// signal is involved, so nothing the candidate does with its signal handlers or masks can hide
// an attempt. A few harmless probes the C library makes on its own (terminal ioctls for stdio,
// clone3 before falling back to clone) fail with an error code instead.
//
// The allowlist is what the C and C++ runtimes, OpenMP (libgomp, libomp), oneDNN and OpenBLAS
// use once loaded: memory, threads (clone with CLONE_THREAD only), futexes, signals to the
// worker itself, clocks, read-only files (Landlock decides which), and the protocol's pipes.
// Arguments are checked where a call has a dangerous mode: clone flags, open flags, fcntl
// commands (no F_SETOWN/F_SETSIG: a kernel-sent signal could stop the judge), madvise advice
// (no MADV_REMOVE), signal targets (the worker itself only), prlimit (read only), sendmsg (the
// reply channel only).
//
// This file is shared by the worker (which installs the filter) and the judge (which names a
// refused call in the verdict).
#pragma once

#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace kf::sandbox {

// Allowed without conditions.
inline constexpr int kAllowed[] = {
    // memory
    SCMP_SYS(brk),
    SCMP_SYS(mmap),
    SCMP_SYS(munmap),
    SCMP_SYS(mprotect),
    SCMP_SYS(mremap),
    SCMP_SYS(msync),
    SCMP_SYS(mincore),
    SCMP_SYS(get_mempolicy),
    SCMP_SYS(membarrier),
    // threads and synchronization
    SCMP_SYS(futex),
    SCMP_SYS(set_robust_list),
    SCMP_SYS(get_robust_list),
    SCMP_SYS(rseq),
    SCMP_SYS(set_tid_address),
    SCMP_SYS(sched_yield),
    SCMP_SYS(sched_getaffinity),
    SCMP_SYS(sched_setaffinity),
    SCMP_SYS(sched_getparam),
    SCMP_SYS(sched_getscheduler),
    SCMP_SYS(sched_get_priority_max),
    SCMP_SYS(sched_get_priority_min),
    SCMP_SYS(getcpu),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(restart_syscall),
    // signals (delivery to itself is checked below)
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(rt_sigpending),
    SCMP_SYS(rt_sigtimedwait),
    SCMP_SYS(rt_sigsuspend),
    SCMP_SYS(pause),
    // identity and information
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    SCMP_SYS(getppid),
    SCMP_SYS(getuid),
    SCMP_SYS(geteuid),
    SCMP_SYS(getgid),
    SCMP_SYS(getegid),
    SCMP_SYS(getresuid),
    SCMP_SYS(getresgid),
    SCMP_SYS(getgroups),
    SCMP_SYS(uname),
    SCMP_SYS(sysinfo),
    SCMP_SYS(getrlimit),
    SCMP_SYS(getrusage),
    SCMP_SYS(times),
    SCMP_SYS(getrandom),
    SCMP_SYS(getcwd),
    // clocks and sleeping
    SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_getres),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(time),
    SCMP_SYS(nanosleep),
    SCMP_SYS(clock_nanosleep),
    // descriptors it already has, and reading files (Landlock limits which)
    SCMP_SYS(read),
    SCMP_SYS(readv),
    SCMP_SYS(pread64),
    SCMP_SYS(preadv),
    SCMP_SYS(write),
    SCMP_SYS(writev),
    SCMP_SYS(close),
    SCMP_SYS(fstat),
    SCMP_SYS(newfstatat),
    SCMP_SYS(stat),
    SCMP_SYS(lstat),
    SCMP_SYS(statx),
    SCMP_SYS(lseek),
    SCMP_SYS(access),
    SCMP_SYS(faccessat),
    SCMP_SYS(faccessat2),
    SCMP_SYS(readlink),
    SCMP_SYS(readlinkat),
    SCMP_SYS(getdents64),
    SCMP_SYS(fstatfs),
    SCMP_SYS(statfs),
    SCMP_SYS(dup),
    SCMP_SYS(dup3),
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
};

// Refused with an error code, not a verdict: probes the runtimes make on their own.
struct Quiet {
  int nr;
  int error;
};
inline constexpr Quiet kQuiet[] = {
    {SCMP_SYS(ioctl), ENOTTY},    // stdio asks whether its output is a terminal
    {SCMP_SYS(clone3), ENOSYS},   // its flags are behind a pointer; glibc falls back to clone
    {SCMP_SYS(openat2), ENOSYS},  // its flags are behind a pointer; callers fall back to openat
    {SCMP_SYS(prctl), EPERM},     // thread names; nothing a kernel needs
    {SCMP_SYS(arch_prctl), EPERM},
};

// Why a call is refused, for the verdict; calls not named here are "not on the allowlist".
struct Reason {
  int nr;
  const char* reason;
};
inline constexpr Reason kReasons[] = {
    {SCMP_SYS(fork), "starting processes (fork) is not allowed"},
    {SCMP_SYS(vfork), "starting processes (fork) is not allowed"},
    {SCMP_SYS(clone), "starting processes (fork) is not allowed; threads are"},
    {SCMP_SYS(execve), "running programs is not allowed"},
    {SCMP_SYS(execveat), "running programs is not allowed"},
    {SCMP_SYS(socket), "network access is not allowed"},
    {SCMP_SYS(socketpair), "sockets are not allowed"},
    {SCMP_SYS(connect), "network access is not allowed"},
    {SCMP_SYS(sendmsg), "only the judge's reply channel may be written"},
    {SCMP_SYS(ptrace), "tracing processes is not allowed"},
    {SCMP_SYS(process_vm_readv), "reading other processes is not allowed"},
    {SCMP_SYS(process_vm_writev), "writing other processes is not allowed"},
    {SCMP_SYS(kill), "signalling other processes is not allowed"},
    {SCMP_SYS(tkill), "signalling threads by id is not allowed"},
    {SCMP_SYS(tgkill), "signalling other processes is not allowed"},
    {SCMP_SYS(rt_sigqueueinfo), "signalling other processes is not allowed"},
    {SCMP_SYS(rt_tgsigqueueinfo), "signalling other processes is not allowed"},
    {SCMP_SYS(open), "opening files for writing is not allowed"},
    {SCMP_SYS(openat), "opening files for writing is not allowed"},
    {SCMP_SYS(creat), "creating files is not allowed"},
    {SCMP_SYS(fcntl), "this fcntl command is not allowed (owners, signals, leases, locks, seals)"},
    {SCMP_SYS(madvise), "this madvise advice is not allowed"},
    {SCMP_SYS(prlimit64), "changing resource limits is not allowed"},
    {SCMP_SYS(setrlimit), "changing resource limits is not allowed"},
    {SCMP_SYS(setpriority), "changing priorities is not allowed"},
    {SCMP_SYS(sched_setscheduler), "changing the scheduler is not allowed"},
    {SCMP_SYS(sched_setattr), "changing the scheduler is not allowed"},
    {SCMP_SYS(mount), "mounting is not allowed"},
    {SCMP_SYS(fsopen), "mounting is not allowed"},
    {SCMP_SYS(fsmount), "mounting is not allowed"},
    {SCMP_SYS(move_mount), "mounting is not allowed"},
    {SCMP_SYS(open_tree), "mounting is not allowed"},
    {SCMP_SYS(unshare), "namespaces are not allowed"},
    {SCMP_SYS(setns), "namespaces are not allowed"},
    {SCMP_SYS(shmget), "System V shared memory is not allowed"},
    {SCMP_SYS(memfd_create), "anonymous files are not allowed"},
    {SCMP_SYS(io_uring_setup), "io_uring is not allowed"},
    {SCMP_SYS(bpf), "bpf is not allowed"},
    {SCMP_SYS(perf_event_open), "performance counters are not allowed"},
    {SCMP_SYS(seccomp), "changing the filter is not allowed"},
    {SCMP_SYS(open_by_handle_at), "opening files by handle is not allowed"},
    {SCMP_SYS(name_to_handle_at), "file handles are not allowed"},
    {SCMP_SYS(fchown), "changing owners is not allowed"},
    {SCMP_SYS(fchmod), "changing modes is not allowed"},
    {SCMP_SYS(utimensat), "changing file times is not allowed"},
    {SCMP_SYS(fsetxattr), "changing extended attributes is not allowed"},
    {SCMP_SYS(setxattr), "changing extended attributes is not allowed"},
    {SCMP_SYS(pidfd_open), "handles to other processes are not allowed"},
    {SCMP_SYS(pidfd_send_signal), "signalling other processes is not allowed"},
    {SCMP_SYS(userfaultfd), "userfaultfd is not allowed"},
};

inline const char* syscall_reason(int nr) {
  for (const Reason& r : kReasons)
    if (r.nr == nr) return r.reason;
  return "not on the worker's allowlist of system calls";
}

// The file descriptor the worker's reply channel lives on (wire::kReplyFd).
constexpr int kReplyChannelFd = 4;

// Installs the filter for process `self`. On success returns "" and sets *notify_fd to the
// listener the judge must receive; otherwise returns what failed.
inline std::string install_filter(int self, int* notify_fd) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_NOTIFY);
  if (!ctx) return "seccomp_init failed";
  auto fail = [&](const char* what) {
    seccomp_release(ctx);
    return std::string("seccomp: ") + what;
  };
  const uint32_t allow = SCMP_ACT_ALLOW;
  for (int nr : kAllowed)
    if (seccomp_rule_add(ctx, allow, nr, 0) != 0) return fail("adding the allowlist");
  for (const Quiet& q : kQuiet)
    if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(static_cast<uint32_t>(q.error)), q.nr, 0) != 0)
      return fail("adding the quiet refusals");
  int rc = 0;
  // Threads only: a clone without CLONE_THREAD is a new process.
  rc |= seccomp_rule_add(ctx, allow, SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
  // Files are opened for reading only.
  constexpr scmp_datum_t kWriting = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_TMPFILE;
  rc |= seccomp_rule_add(ctx, allow, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, kWriting, 0));
  rc |= seccomp_rule_add(ctx, allow, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, kWriting, 0));
  // Signals to itself only (its PID in its own namespace).
  const auto me = static_cast<scmp_datum_t>(self);
  for (int nr : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_tgsigqueueinfo)})
    rc |= seccomp_rule_add(ctx, allow, nr, 1, SCMP_A0(SCMP_CMP_EQ, me));
  // Limits may be read, never set.
  rc |= seccomp_rule_add(ctx, allow, SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_EQ, 0));
  // fcntl: descriptor flags and duplication only.
  for (scmp_datum_t cmd : {F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC})
    rc |= seccomp_rule_add(ctx, allow, SCMP_SYS(fcntl), 1, SCMP_A1(SCMP_CMP_EQ, cmd));
  // madvise: every advice but MADV_REMOVE (punches holes in shared memory) and the
  // memory-failure injections.
  rc |= seccomp_rule_add(ctx, allow, SCMP_SYS(madvise), 1, SCMP_A2(SCMP_CMP_LT, MADV_REMOVE));
  for (scmp_datum_t advice = MADV_REMOVE + 1; advice <= 25; ++advice)
    rc |= seccomp_rule_add(ctx, allow, SCMP_SYS(madvise), 1, SCMP_A2(SCMP_CMP_EQ, advice));
  // sendmsg: the one message that hands the judge this filter's listener, on the reply channel.
  rc |= seccomp_rule_add(ctx, allow, SCMP_SYS(sendmsg), 1,
                         SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(kReplyChannelFd)));
  if (rc != 0) return fail("adding conditional rules");
  if (seccomp_load(ctx) != 0) return fail("seccomp_load (is seccomp available?)");
  *notify_fd = seccomp_notify_fd(ctx);
  seccomp_release(ctx);
  if (*notify_fd < 0) return "seccomp: no notification fd";
  return "";
}

}  // namespace kf::sandbox
