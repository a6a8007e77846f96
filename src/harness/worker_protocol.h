// The wire protocol between the judge (parent) and kforge-worker (child). Header-only and
// dependency-free: the worker includes it too.
//
// Design notes
// ------------
// The parent owns two memfds at the same offsets, one for the inputs of every set (sealed with
// F_SEAL_FUTURE_WRITE before the worker starts) and one for the outputs; the worker reserves one
// inaccessible address range, maps each input read-only and each output read-write into it at
// its offset (the guard pages stay inaccessible), closes both fds, installs its limits and
// seccomp filter, and only then dlopen()s the candidate from the descriptor the judge opened (so
// even its static constructors run sandboxed). The worker runs inside the jail
// (harness/jail.h): its own namespaces, an unprivileged id, Landlock.
//
// States of a worker, as the parent sees them:
//   spawned --READY--> idle --RUN(nonce)--> running --DONE(nonce)--> idle
//   any state --FAULT / EOF / deadline--> dead (the parent kills the process group)
// Every read the parent does has a deadline. The nonce in DONE must match the RUN it answers,
// so a candidate that writes fake replies into the pipe is caught. The parent times RUN→DONE
// with its own clock; nothing the worker or the candidate says about time is used.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <cstring>

namespace kf::wire {

constexpr uint32_t kMagic = 0x6b666f72;  // "kfor"

// stage_times: the profiler's instrumented build only (codegen's stage timers). The worker asks
// the shared object's kf_stage_times for its per-stage nanoseconds and replies `done` with them
// in `values` and their count in `code` (-1: the object exports no stage timers). Profiling
// evidence, never a verdict: the judge's timing never uses it.
enum class Op : uint32_t { run = 1, ping = 2, exit = 3, stage_times = 4 };

constexpr int kMaxStageTimes = 32;

struct Command {
  uint32_t magic = kMagic;
  Op op = Op::ping;
  uint64_t nonce = 0;
  uint32_t first_set = 0;  // run: the first input set; rep j uses set (first_set + j) % sets
  uint32_t reps = 0;       // run: number of kernel calls
};

enum class ReplyKind : uint32_t { ready = 1, done = 2, pong = 3, fault = 4, error = 5 };

// What a fault report says happened (the parent maps it to a verdict).
enum class FaultKind : int32_t {
  none = 0,
  signal = 1,         // code = signal number; text has the details
  out_of_memory = 3,  // allocation failed at the address-space limit
  cpu_limit = 4,      // SIGXCPU
  load_failed = 5,    // dlopen/dlsym failed; text = dlerror()
  setup_failed = 6,   // the worker could not set up its sandbox
  input_write = 7,    // a write to a read-only input buffer; text names it
  guard_write = 8,    // a write into a guard page after a buffer; text names the buffer
};

struct Reply {
  uint32_t magic = kMagic;
  ReplyKind kind = ReplyKind::ready;
  uint64_t nonce = 0;
  FaultKind fault = FaultKind::none;
  int32_t code = 0;
  char text[200] = {};
  int64_t values[kMaxStageTimes] = {};  // stage_times: nanoseconds per stage
};

// Exit codes the worker uses after reporting.
constexpr int kExitFault = 97;
constexpr int kExitSetup = 96;

// File descriptors the worker inherits.
constexpr int kCommandFd = 3;  // parent -> worker
constexpr int kReplyFd = 4;    // worker -> parent
constexpr int kInputFd = 5;    // the inputs' shared file, sealed against writes
constexpr int kOutputFd = 6;   // the outputs' shared file
constexpr int kObjectFd = 7;   // the candidate's shared object, opened by the judge

// The one message that carries a file descriptor: the byte 'N' plus the seccomp listener as
// SCM_RIGHTS, sent by the worker once its filter is installed.
struct FdMessage {
  char byte = 'N';
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr msg = {};

  FdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;

  void set_fd(int fd) {
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  // The received descriptor, or -1 when the message carried none.
  int fd() {
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    if (byte != 'N' || !c || c->cmsg_type != SCM_RIGHTS) return -1;
    int fd;
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
  }
};

}  // namespace kf::wire
