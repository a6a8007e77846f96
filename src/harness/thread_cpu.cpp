#include "harness/thread_cpu.h"

#include <dirent.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace kf {
namespace {

// The first field of a schedstat file: nanoseconds on a CPU. Negative when unreadable.
double schedstat_s(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return -1;
  unsigned long long ns = 0;
  const int got = std::fscanf(f, "%llu", &ns);
  std::fclose(f);
  return got == 1 ? static_cast<double>(ns) * 1e-9 : -1;
}

}  // namespace

CpuSnapshot read_cpu(pid_t pid) {
  CpuSnapshot s;
  if (pid <= 0) return s;
  clockid_t clock;
  struct timespec ts;
  if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0) return s;
  s.process_s = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  const std::string dir = fmt::format("/proc/{}/task", pid);
  DIR* d = opendir(dir.c_str());
  if (!d) return s;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const double t = schedstat_s(fmt::format("{}/{}/schedstat", dir, e->d_name));
    if (t >= 0) s.threads_s[static_cast<pid_t>(std::atol(e->d_name))] = t;
  }
  closedir(d);
  s.ok = !s.threads_s.empty();
  return s;
}

bool reaches_beyond(pid_t tid, const std::vector<int>& granted) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (granted.empty() || sched_getaffinity(tid, sizeof mask, &mask) != 0) return false;
  for (int c : granted)
    if (c >= 0 && c < CPU_SETSIZE) CPU_CLR(c, &mask);
  return CPU_COUNT(&mask) > 0;
}

void EscapeLog::scan(pid_t pid, bool record) {
  if (granted_.empty() || pid <= 0) return;
  const std::string dir = fmt::format("/proc/{}/task", pid);
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const auto tid = static_cast<pid_t>(std::atol(e->d_name));
    if (!reaches_beyond(tid, granted_)) continue;
    const double t = schedstat_s(fmt::format("{}/{}/schedstat", dir, e->d_name));
    if (!record) continue;
    std::lock_guard lock(m_);
    double& seen = escaped_[tid];
    seen = std::max(seen, t);
  }
  closedir(d);
}

double EscapeLog::seconds() const {
  std::lock_guard lock(m_);
  double s = 0;
  for (const auto& [tid, t] : escaped_) s += t;
  return s;
}

int EscapeLog::threads() const {
  std::lock_guard lock(m_);
  return static_cast<int>(escaped_.size());
}

EscapeWatcher::EscapeWatcher(EscapeLog& log, const std::vector<int>& granted) : log_(log) {
  if (granted.empty()) return;
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return;
  std::vector<int> others;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine) && std::find(granted.begin(), granted.end(), c) == granted.end())
      others.push_back(c);
  if (others.empty()) return;  // no CPU to watch from without taking the grant's
  thread_ = std::thread(&EscapeWatcher::loop, this, std::move(others));
}

EscapeWatcher::~EscapeWatcher() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void EscapeWatcher::arm(pid_t pid, bool record) {
  {
    std::lock_guard lock(m_);
    pid_ = pid;
    record_ = record;
  }
  cv_.notify_all();
}

void EscapeWatcher::disarm() {
  std::unique_lock lock(m_);
  pid_ = 0;
  cv_.wait(lock, [&] { return !scanning_; });
}

void EscapeWatcher::loop(std::vector<int> cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  std::unique_lock lock(m_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || pid_ > 0; });
    if (stop_) return;
    const pid_t pid = pid_;
    const bool record = record_;
    scanning_ = true;
    lock.unlock();
    log_.scan(pid, record);
    lock.lock();
    scanning_ = false;
    cv_.notify_all();
    cv_.wait_for(lock, std::chrono::microseconds(500), [&] { return stop_ || pid_ != pid; });
  }
}

void CpuLedger::watch(pid_t pid) {
  const CpuSnapshot now = read_cpu(pid);
  if (last_.ok && now.ok) stopped_s_ += std::max(now.process_s - last_.process_s, 0.0);
  last_ = now;
}

void CpuLedger::begin(pid_t pid) {
  before_ = read_cpu(pid);
  if (last_.ok && before_.ok) stopped_s_ += std::max(before_.process_s - last_.process_s, 0.0);
  begun_ = std::chrono::steady_clock::now();
  watcher_.arm(pid, true);
}

void CpuLedger::end(pid_t pid, double wall_s) {
  watcher_.disarm();
  escapes_.scan(pid);  // the worker is stopped: every live thread, as the batch left it
  const CpuSnapshot after = read_cpu(pid);
  const double span =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begun_).count();
  last_ = after;
  if (!before_.ok || !after.ok) {
    ok_ = false;
    return;
  }
  const double process = std::max(after.process_s - before_.process_s, 0.0);
  beyond_s_ += std::max(process - threads_ * span, 0.0);
  process_s_ += process;
  wall_s_ += wall_s;
}

}  // namespace kf
