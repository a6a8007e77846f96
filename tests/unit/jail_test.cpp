// The jail confines real programs: ids, capabilities, namespaces, file system, network, limits.
#include "harness/jail.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace kf {
namespace {

const char* kSh = "/bin/sh";

ProcessResult sh(const std::string& script, JailSpec spec = {}, double timeout_s = 20) {
  spec.argv = {kSh, "-c", script};
  spec.env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  auto r = run_jailed(spec, timeout_s);
  EXPECT_TRUE(r) << r.error().message();
  return r ? *r : ProcessResult{};
}

class Jail : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sandbox_support().complete()) GTEST_SKIP() << "the sandbox is incomplete here";
  }
};

TEST_F(Jail, RunsUnprivilegedWithoutCapabilitiesOrNewPrivileges) {
  ProcessResult r =
      sh("id -u; grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status");
  ASSERT_TRUE(r.ok()) << r.err;
  if (geteuid() == 0) {
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "65534") << r.out;
  }
  for (const char* key :
       {"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000",
        "CapAmb:\t0000000000000000", "NoNewPrivs:\t1"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
}

TEST_F(Jail, HasItsOwnPidNamespaceSessionAndNoTerminal) {
  // $$ is the shell: PID 1 of its namespace, leader of its own session, no controlling tty.
  ProcessResult r = sh("echo $$; ls /proc | grep -c '^[0-9]'; cut -d' ' -f6,7 /proc/self/stat");
  ASSERT_TRUE(r.ok()) << r.err;
  std::istringstream in(r.out);
  int self = 0, processes = 0, session = 0, tty = -1;
  in >> self >> processes >> session >> tty;
  EXPECT_EQ(self, 1);
  EXPECT_LE(processes, 3) << "the judge's processes are visible:\n" << r.out;
  EXPECT_EQ(tty, 0) << "a controlling terminal";
  EXPECT_GT(session, 0);
}

TEST_F(Jail, CannotReadOutsideItsTrees) {
  // A file the judge can read, in a directory the jail was not given.
  auto dir = make_jail_dir("kforge-jail-test");
  ASSERT_TRUE(dir) << dir.error().message();
  const fs::path outside = fs::temp_directory_path() / fmt::format("kforge-secret-{}", getpid());
  std::ofstream(outside) << "secret-text\n";
  fs::permissions(outside, fs::perms::all);  // even a world-readable file stays out of reach
  ProcessResult r = sh(fmt::format("cat {}; cat /etc/hostname; ls /home /root", outside.string()));
  EXPECT_EQ(r.out.find("secret-text"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
  fs::remove(outside);
  fs::remove_all(*dir);
}

TEST_F(Jail, WritesOnlyWhereItWasGiven) {
  auto dir = make_jail_dir("kforge-jail-test");
  ASSERT_TRUE(dir) << dir.error().message();
  const fs::path outside = fs::temp_directory_path() / fmt::format("kforge-jail-out-{}", getpid());
  JailSpec spec{.cwd = *dir, .read_write = {*dir}};
  ProcessResult r =
      sh(fmt::format("echo in > inside.txt; echo out > {}; true", outside.string()), spec);
  EXPECT_TRUE(fs::exists(*dir / "inside.txt")) << r.err;
  EXPECT_FALSE(fs::exists(outside)) << "wrote outside its directory";
  fs::remove(outside);
  fs::remove_all(*dir);
}

TEST_F(Jail, HasNoNetwork) {
  // A listening socket on the host's loopback is out of reach from the jail's own network.
  int s = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(s, 1), 0);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  ProcessResult r = sh(fmt::format("exec 3<>/dev/tcp/127.0.0.1/{} && echo connected", port),
                       JailSpec{.argv = {}});
  // /bin/sh may be dash (no /dev/tcp); bash is the real probe where it exists.
  if (access("/bin/bash", X_OK) == 0) {
    JailSpec spec{.argv = {"/bin/bash", "-c",
                           fmt::format("exec 3<>/dev/tcp/127.0.0.1/{} && echo connected", port)},
                  .env = {"PATH=/usr/bin:/bin"}};
    auto b = run_jailed(spec, 20);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(b->out.find("connected"), std::string::npos) << b->out;
  }
  EXPECT_EQ(r.out.find("connected"), std::string::npos);
  close(s);
}

TEST_F(Jail, LimitsAndDeadlineHold) {
  // File size: a write past the cap fails; the wall clock ends a sleeper.
  auto dir = make_jail_dir("kforge-jail-test");
  ASSERT_TRUE(dir) << dir.error().message();
  JailSpec spec{.cwd = *dir, .read_write = {*dir}, .limits = {.file_size = 4096}};
  sh("head -c 100000 /dev/zero > big; true", spec);
  EXPECT_LE(fs::file_size(*dir / "big"), 4096u);
  ProcessResult slow = sh("sleep 100", {}, 0.5);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_LT(slow.seconds, 5);
  fs::remove_all(*dir);
}

TEST(JailSupport, NamesWhatIsMissing) {
  const SandboxSupport& s = sandbox_support();
  EXPECT_EQ(s.complete(), s.missing.empty());
  if (!s.complete()) {
    Status st = require_sandbox();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("--unsafe-sandbox"), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace kf
