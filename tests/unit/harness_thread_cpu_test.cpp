// The candidate's CPU ledger (harness/thread_cpu.h), on child processes that keep to one CPU,
// run a second thread beside it, or start short-lived threads that move themselves off it.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "harness/thread_cpu.h"
#include "support/status.h"

namespace kf {
namespace {

void spin_for(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}

void on_every_cpu() {
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
  pthread_setaffinity_np(pthread_self(), sizeof all, &all);
}

int cpus() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  sched_getaffinity(0, sizeof mine, &mine);
  return CPU_COUNT(&mine);
}

// A child confined to CPU 0 (as the judge starts timed workers) running `body` forever; returns
// once the child is confined.
template <typename Body>
pid_t child_on_cpu0(Body body) {
  int ready[2];
  KF_CHECK(pipe(ready) == 0);
  const pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t zero;
    CPU_ZERO(&zero);
    CPU_SET(0, &zero);
    sched_setaffinity(0, sizeof zero, &zero);
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(1);
    body();
    _exit(0);
  }
  char c;
  KF_CHECK(read(ready[0], &c, 1) == 1);
  close(ready[0]);
  close(ready[1]);
  return pid;
}

void end_child(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// `batches` batches of `seconds`, the child stopped in between like a paused worker.
void stop(pid_t pid) {
  kill(pid, SIGSTOP);
  siginfo_t info;
  waitid(P_PID, static_cast<id_t>(pid), &info, WSTOPPED);
}

void batches(CpuLedger& ledger, pid_t pid, int batches, double seconds) {
  stop(pid);
  ledger.watch(pid);
  for (int b = 0; b < batches; ++b) {
    ledger.begin(pid);
    kill(pid, SIGCONT);
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stop(pid);
    ledger.end(pid, wall);
  }
  ledger.watch(pid);
}

TEST(CpuLedger, OneThreadOnItsCpuIsWithinTheGrant) {
  const pid_t pid = child_on_cpu0([] {
    for (;;) spin_for(1);
  });
  CpuLedger ledger(1, {0});
  batches(ledger, pid, 10, 0.02);
  end_child(pid);
  ASSERT_TRUE(ledger.ok());
  EXPECT_GT(ledger.in_batches_s(), 0) << "it ran";
  EXPECT_LT(ledger.beyond_capacity_s(), 0.2 * ledger.wall_s());
  EXPECT_EQ(ledger.escaped_threads(), 0);
  EXPECT_LT(ledger.while_stopped_s(), 0.005) << "a stopped process uses no CPU";
}

TEST(CpuLedger, TwoThreadsSharingTheGrantedCpuAreNotAnEscape) {
  const pid_t pid = child_on_cpu0([] {
    std::thread t([] {
      for (;;) spin_for(1);
    });
    for (;;) spin_for(1);
  });
  CpuLedger ledger(1, {0});
  batches(ledger, pid, 10, 0.02);
  end_child(pid);
  EXPECT_EQ(ledger.escaped_threads(), 0);
  EXPECT_LT(ledger.beyond_capacity_s(), 0.2 * ledger.wall_s());
}

TEST(CpuLedger, AThreadThatMovesOffTheGrantedCpuIsSeen) {
  if (cpus() < 2) GTEST_SKIP() << "needs a second CPU";
  const pid_t pid = child_on_cpu0([] {
    std::thread t([] {
      on_every_cpu();
      for (;;) spin_for(1);
    });
    for (;;) spin_for(1);
  });
  CpuLedger ledger(1, {0});
  batches(ledger, pid, 10, 0.02);
  end_child(pid);
  EXPECT_EQ(ledger.escaped_threads(), 1);
  EXPECT_GT(ledger.escaped_s(), 0.0);
}

TEST(CpuLedger, ShortLivedThreadsThatMoveOffAreSeenWhileTheyRun) {
  if (cpus() < 2) GTEST_SKIP() << "needs a second CPU to watch from";
  const pid_t pid = child_on_cpu0([] {
    for (;;) {
      std::thread t([] {
        on_every_cpu();
        spin_for(0.002);
      });
      t.join();
    }
  });
  CpuLedger ledger(1, {0});
  batches(ledger, pid, 10, 0.02);
  end_child(pid);
  EXPECT_GE(ledger.escaped_threads(), 4) << "each lives 2 ms; the watcher looks every 0.5 ms";
}

TEST(CpuLedger, CpuTimeWhileNotInABatchIsCountedApart) {
  const pid_t pid = child_on_cpu0([] {
    for (;;) spin_for(1);
  });
  CpuLedger ledger(1, {});
  ledger.watch(pid);
  // Running, outside any batch, until it has used 10 ms of CPU time (a loaded machine may take
  // a while to give it that).
  const double start = read_cpu(pid).process_s;
  for (int i = 0; i < 1000 && read_cpu(pid).process_s < start + 0.01; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ledger.watch(pid);
  end_child(pid);
  EXPECT_GE(ledger.while_stopped_s(), 0.01);
  EXPECT_EQ(ledger.in_batches_s(), 0);
}

}  // namespace
}  // namespace kf
