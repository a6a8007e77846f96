// The kforge binary as end-to-end tests run it: to completion, or in the background to be killed
// with SIGKILL part-way through a run.
//
//   ProcessResult r = run_kforge({"optimize", task, "--store", db}, 300);
//   KforgeChild c({"optimize", task, "--store", db}, log);  ...  c.kill();
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/check.h"
#include "support/subprocess.h"

namespace kf::testing {

inline std::string kforge_bin() {
  const char* bin = std::getenv("KFORGE_BIN");
  KF_CHECK(bin != nullptr) << "KFORGE_BIN is not set (the test main sets it)";
  return bin;
}

// Runs `kforge ARGS...` to completion.
inline ProcessResult run_kforge(std::vector<std::string> args, double timeout_s = 120) {
  args.insert(args.begin(), kforge_bin());
  auto r = run_process({.argv = args, .timeout_s = timeout_s});
  KF_CHECK(r.has_value()) << r.error().message();
  return *r;
}

inline std::string describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + " signal " + std::to_string(r.signal) +
         (r.timed_out ? " (timed out)" : "") + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// A kforge process running in the background (stdout and stderr to `log`), killed (SIGKILL) when
// the object goes.
class KforgeChild {
 public:
  KforgeChild(std::vector<std::string> args, const std::filesystem::path& log) {
    args.insert(args.begin(), kforge_bin());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log_path = log.string();
    pid_ = ::fork();
    KF_CHECK(pid_ >= 0) << "fork failed";
    if (pid_ == 0) {
      const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  KforgeChild(const KforgeChild&) = delete;
  KforgeChild& operator=(const KforgeChild&) = delete;
  ~KforgeChild() {
    if (pid_ > 0) kill();
  }

  // True once the process has ended (it is reaped then).
  bool ended() {
    if (pid_ <= 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    status_ = status;
    pid_ = -1;
    return true;
  }
  // SIGKILL and reap; returns the wait status.
  int kill() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      pid_ = -1;
    }
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
};

}  // namespace kf::testing
