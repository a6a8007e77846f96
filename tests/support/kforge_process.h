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

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite_store.h"
#include "support/check.h"
#include "support/fs.h"
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

// Runs `kforge ARGS...` to completion with `input` on its stdin (a script of chat commands).
inline ProcessResult run_kforge_with_input(const std::vector<std::string>& args,
                                           const std::string& input, double timeout_s = 300) {
  TempDir dir("kforge-input");
  const std::filesystem::path in = dir.path() / "stdin.txt";
  KF_CHECK(write_file_atomic(in, input).ok());
  std::vector<std::string> argv = {"sh", "-c", "f=$1; shift; exec \"$0\" \"$@\" < \"$f\"",
                                   kforge_bin(), in.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_process({.argv = argv, .timeout_s = timeout_s});
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
  // Sends `sig` (SIGINT: as Ctrl-C would) while it runs.
  void signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // The wait status, once ended() said so.
  int status() const { return status_; }
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

// The store at `db`, opened for a test's checks (the test binary stops when it does not open).
inline std::unique_ptr<SqliteStore> open_store_at(const std::filesystem::path& db) {
  auto s = SqliteStore::open(db);
  KF_CHECK(s.has_value()) << s.error().message();
  return std::move(*s);
}

// The id of the store's only run (the test binary stops when there is not exactly one).
inline std::string only_run_in(Store& store) {
  auto runs = store.list_runs();
  KF_CHECK(runs && runs->size() == 1);
  return runs->front().id;
}

// The log's text ("" when it cannot be read).
inline std::string log_text(const std::filesystem::path& log) {
  auto t = read_file(log);
  return t ? *t : std::string();
}

// Waits until `child`'s run has committed `attempts` attempts to the store `db` (opened once its
// log shows the first judged attempt), then kills it with SIGKILL and reaps it. Returns the run's
// id; an error says why when the run ended first, made no progress within `timeout_s`, or did not
// die by SIGKILL.
inline Expected<std::string> kill_after_attempts(KforgeChild& child,
                                                 const std::filesystem::path& log,
                                                 const std::filesystem::path& db, size_t attempts,
                                                 double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::unique_ptr<SqliteStore> watch;
  std::string run;
  size_t seen = 0;
  while (seen < attempts && std::chrono::steady_clock::now() < deadline) {
    if (child.ended())
      return Status::error("the run ended before it could be killed:\n" + log_text(log));
    if (!watch) {
      auto text = read_file(log);
      if (text && text->find("[  1/") != std::string::npos) {
        auto s = SqliteStore::open(db);
        if (!s) return s.error();
        auto runs = (*s)->list_runs();
        if (!runs || runs->size() != 1) return Status::error("expected one run in the store");
        run = runs->front().id;
        watch = std::move(*s);
      }
    }
    if (watch) {
      auto a = watch->attempts(run);
      if (!a) return a.error();
      seen = a->size();
    }
    if (seen < attempts) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (seen < attempts) return Status::error("no progress within the time limit:\n" + log_text(log));
  const int status = child.kill();
  if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
    return Status::error("the run was not killed by SIGKILL: status " + std::to_string(status));
  return run;
}

}  // namespace kf::testing
