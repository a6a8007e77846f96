#include "support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "support/fs.h"
#include "support/interrupt.h"

namespace kf {
namespace {

using Clock = std::chrono::steady_clock;

void append_capped(std::string& s, const char* data, size_t n, size_t cap) {
  if (s.size() >= cap) return;
  s.append(data, std::min(n, cap - s.size()));
}

}  // namespace

Expected<ProcessResult> run_process(const ProcessOptions& o) {
  KF_CHECK(!o.argv.empty());
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    return Status::error(std::string("pipe: ") + std::strerror(errno));

  // Everything the child needs is prepared before fork: after it only async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : o.env_set) replaced |= kv.rfind(k + "=", 0) == 0;
    if (!replaced) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : o.env_set) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  auto start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) return Status::error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) _exit(126);
    if (o.address_space_limit > 0) {
      struct rlimit rl = {o.address_space_limit, o.address_space_limit};
      setrlimit(RLIMIT_AS, &rl);
    }
    execvpe(argv[0], argv.data(), envp.data());
    const char msg[] = "exec failed\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);

  ProcessResult r;
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  auto deadline = start + std::chrono::duration<double>(o.timeout_s);
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    // An interrupted run waits for nothing: the child is killed like one past its deadline
    // (which also keeps a compile cut short out of the compile cache).
    if (left.count() <= 0 || interrupted()) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      append_capped(i == 0 ? r.out : r.err, buf, static_cast<size_t>(got), o.max_output);
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r.timed_out) kill(-pid, SIGKILL);  // stragglers in the group
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string first_line_of(const std::vector<std::string>& argv) {
  auto r = run_process({.argv = argv, .timeout_s = 20});
  if (!r || !r->ok()) return "";
  std::string s = r->out;
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

Expected<std::string> unified_diff(const std::string& a, const std::string& b,
                                   const std::string& label_a, const std::string& label_b,
                                   size_t max_bytes) {
  if (a == b) return std::string();
  TempDir dir("kforge-diff");
  KF_RETURN_IF_ERROR(write_file_atomic(dir.path() / "a", a));
  KF_RETURN_IF_ERROR(write_file_atomic(dir.path() / "b", b));
  auto r = run_process({.argv = {"diff", "-u", "--label", label_a, "--label", label_b, "a", "b"},
                        .cwd = dir.path().string(),
                        .timeout_s = 30,
                        .max_output = max_bytes});
  if (!r) return r.error();
  if (r->exit_code != 1) return Status::error("diff failed: " + r->err.substr(0, 200));
  return r->out;
}

}  // namespace kf
