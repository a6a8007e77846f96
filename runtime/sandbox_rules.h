// The worker's seccomp filter: what a candidate may not do, and why (the reason is reported to
// the judge and printed in the verdict's diagnostics).
//
// Forbidden calls are not executed: the kernel parks the calling thread and notifies the judge
// (SECCOMP_RET_USER_NOTIF), which records the call and kills the worker. No signal is involved,
// so nothing the candidate does with its signal handlers or masks can hide an attempt.
//
// Default allow, with a deny list: a candidate needs the ordinary user-space runtime
// (threads, memory, reading files such as /proc/cpuinfo for libgomp), so an allow list would be
// fragile; what it must never do is start processes, reach the network, signal or trace other
// processes, change the file system, or raise its own limits. Threads are allowed: clone is only
// trapped when CLONE_THREAD is absent, and clone3 (whose flags seccomp cannot see) answers
// ENOSYS so the C library falls back to clone.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace kf::sandbox {

struct Rule {
  int nr;
  const char* name;
  const char* reason;
};

inline constexpr Rule kTrapped[] = {
    {SCMP_SYS(fork), "fork", "starting processes (fork) is not allowed"},
    {SCMP_SYS(vfork), "vfork", "starting processes (fork) is not allowed"},
    {SCMP_SYS(execve), "execve", "running programs is not allowed"},
    {SCMP_SYS(execveat), "execveat", "running programs is not allowed"},
    {SCMP_SYS(socket), "socket", "network access is not allowed"},
    {SCMP_SYS(socketpair), "socketpair", "sockets are not allowed"},
    {SCMP_SYS(connect), "connect", "network access is not allowed"},
    {SCMP_SYS(bind), "bind", "network access is not allowed"},
    {SCMP_SYS(listen), "listen", "network access is not allowed"},
    {SCMP_SYS(accept), "accept", "network access is not allowed"},
    {SCMP_SYS(accept4), "accept4", "network access is not allowed"},
    {SCMP_SYS(ptrace), "ptrace", "tracing processes is not allowed"},
    {SCMP_SYS(process_vm_readv), "process_vm_readv", "reading other processes is not allowed"},
    {SCMP_SYS(process_vm_writev), "process_vm_writev", "writing other processes is not allowed"},
    {SCMP_SYS(tkill), "tkill", "signalling threads by id is not allowed"},
    {SCMP_SYS(pidfd_open), "pidfd_open", "handles to other processes are not allowed"},
    {SCMP_SYS(pidfd_send_signal), "pidfd_send_signal", "signalling other processes is not allowed"},
    {SCMP_SYS(creat), "creat", "creating files is not allowed"},
    {SCMP_SYS(unlink), "unlink", "changing the file system is not allowed"},
    {SCMP_SYS(unlinkat), "unlinkat", "changing the file system is not allowed"},
    {SCMP_SYS(rename), "rename", "changing the file system is not allowed"},
    {SCMP_SYS(renameat), "renameat", "changing the file system is not allowed"},
    {SCMP_SYS(renameat2), "renameat2", "changing the file system is not allowed"},
    {SCMP_SYS(mkdir), "mkdir", "changing the file system is not allowed"},
    {SCMP_SYS(mkdirat), "mkdirat", "changing the file system is not allowed"},
    {SCMP_SYS(rmdir), "rmdir", "changing the file system is not allowed"},
    {SCMP_SYS(link), "link", "changing the file system is not allowed"},
    {SCMP_SYS(linkat), "linkat", "changing the file system is not allowed"},
    {SCMP_SYS(symlink), "symlink", "changing the file system is not allowed"},
    {SCMP_SYS(symlinkat), "symlinkat", "changing the file system is not allowed"},
    {SCMP_SYS(chmod), "chmod", "changing the file system is not allowed"},
    {SCMP_SYS(fchmodat), "fchmodat", "changing the file system is not allowed"},
    {SCMP_SYS(truncate), "truncate", "changing the file system is not allowed"},
    {SCMP_SYS(mknod), "mknod", "changing the file system is not allowed"},
    {SCMP_SYS(mknodat), "mknodat", "changing the file system is not allowed"},
    {SCMP_SYS(mount), "mount", "mounting is not allowed"},
    {SCMP_SYS(umount2), "umount2", "mounting is not allowed"},
    {SCMP_SYS(chroot), "chroot", "changing the root is not allowed"},
    {SCMP_SYS(setrlimit), "setrlimit", "changing resource limits is not allowed"},
    {SCMP_SYS(unshare), "unshare", "namespaces are not allowed"},
    {SCMP_SYS(setns), "setns", "namespaces are not allowed"},
    {SCMP_SYS(io_uring_setup), "io_uring_setup", "io_uring is not allowed"},
    {SCMP_SYS(bpf), "bpf", "bpf is not allowed"},
    {SCMP_SYS(perf_event_open), "perf_event_open", "performance counters are not allowed"},
    {SCMP_SYS(personality), "personality", "changing the personality is not allowed"},
    {SCMP_SYS(seccomp), "seccomp", "changing the filter is not allowed"},
};

// Rules with argument conditions; named here for the diagnostics.
inline constexpr Rule kConditional[] = {
    {SCMP_SYS(clone), "clone", "starting processes (fork) is not allowed; threads are"},
    {SCMP_SYS(open), "open", "opening files for writing is not allowed"},
    {SCMP_SYS(openat), "openat", "opening files for writing is not allowed"},
    {SCMP_SYS(kill), "kill", "signalling other processes is not allowed"},
    {SCMP_SYS(tgkill), "tgkill", "signalling other processes is not allowed"},
    {SCMP_SYS(rt_sigqueueinfo), "rt_sigqueueinfo", "signalling other processes is not allowed"},
    {SCMP_SYS(rt_tgsigqueueinfo), "rt_tgsigqueueinfo", "signalling other processes is not allowed"},
    {SCMP_SYS(prlimit64), "prlimit64", "changing resource limits is not allowed"},
};

inline const char* syscall_reason(int nr) {
  for (const Rule& r : kTrapped)
    if (r.nr == nr) return r.reason;
  for (const Rule& r : kConditional)
    if (r.nr == nr) return r.reason;
  return "not allowed";
}

// Installs the filter for process `self`. On success returns "" and sets *notify_fd to the
// listener the judge must receive; otherwise returns what failed.
constexpr uint32_t kDeny = SCMP_ACT_NOTIFY;

inline std::string install_filter(int self, int* notify_fd) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return "seccomp_init failed";
  auto fail = [&](const char* what) {
    seccomp_release(ctx);
    return std::string("seccomp: ") + what;
  };
  for (const Rule& r : kTrapped)
    if (seccomp_rule_add(ctx, kDeny, r.nr, 0) != 0) return fail(r.name);
  const auto self_pid = static_cast<scmp_datum_t>(self);
  int rc = 0;
  rc |= seccomp_rule_add(ctx, kDeny, SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
  for (scmp_datum_t bit : {scmp_datum_t(O_WRONLY), scmp_datum_t(O_RDWR), scmp_datum_t(O_CREAT),
                           scmp_datum_t(O_TRUNC), scmp_datum_t(O_APPEND)}) {
    rc |= seccomp_rule_add(ctx, kDeny, SCMP_SYS(open), 1,
                           SCMP_A1(SCMP_CMP_MASKED_EQ, bit, bit));
    rc |= seccomp_rule_add(ctx, kDeny, SCMP_SYS(openat), 1,
                           SCMP_A2(SCMP_CMP_MASKED_EQ, bit, bit));
  }
  for (int nr : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo),
                 SCMP_SYS(rt_tgsigqueueinfo)})
    rc |= seccomp_rule_add(ctx, kDeny, nr, 1, SCMP_A0(SCMP_CMP_NE, self_pid));
  // prlimit64(pid, resource, new_limit, old_limit): reading (new_limit == NULL) is fine.
  rc |= seccomp_rule_add(ctx, kDeny, SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_NE, 0));
  if (rc != 0) return fail("adding conditional rules");
  if (seccomp_load(ctx) != 0) return fail("seccomp_load (is seccomp available?)");
  *notify_fd = seccomp_notify_fd(ctx);
  seccomp_release(ctx);
  if (*notify_fd < 0) return "seccomp: no notification fd";
  return "";
}

}  // namespace kf::sandbox
