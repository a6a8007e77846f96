// Evaluation workers over Redis Streams, end to end: a real redis-server on loopback, `kforge
// worker` processes and `kforge search --broker`. A worker killed mid-job (its job is taken over
// by another, and every job lands in the store once, with the same best as a search without the
// kill); a coordinator killed with SIGKILL and resumed (no job lost, none judged twice); and the
// failures a user meets, each with its message: Redis unreachable, a malformed job, a result for
// a job no run published, and workers of another machine class.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "broker/protocol.h"
#include "broker/redis.h"
#include "harness/machine.h"
#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/test_env.h"
#include "support/text_count.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::KforgeChild;
using testing::log_text;
using testing::open_store_at;
using testing::run_kforge;

const fs::path kTask = testing::source_dir() / "tests/integration/written_source/task";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_broker");
}

bool wait_until(const std::function<bool()>& done, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// A redis-server of the test's own on a free loopback port, killed when the object goes.
class RedisServer {
 public:
  RedisServer() {
    port_ = free_port();
    pid_ = ::fork();
    KF_CHECK(pid_ >= 0) << "fork failed";
    if (pid_ == 0) {
      const std::string port = std::to_string(port_);
      const int fd = ::open((temp_root() / ("redis-" + port + ".log")).c_str(),
                            O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
               "--save", "", "--appendonly", "no", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ready_ = wait_until([&] { return connect().has_value(); }, 20);
  }
  ~RedisServer() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  bool ready() const { return ready_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  Expected<broker::Redis> connect() const {
    return broker::Redis::connect(*broker::RedisUrl::parse(url()), 2.0);
  }
  int64_t integer(const std::vector<std::string>& cmd) const {
    auto r = connect();
    if (!r) return -1;
    auto v = r->command(cmd);
    return v ? v->integer : -1;
  }

 private:
  static int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
  }
  pid_t pid_ = -1;
  int port_ = 0;
  bool ready_ = false;
};

// The files brain's candidates: one fast kernel and slower ones, each computing the sum of
// squares R times over (at least 2x slower), so the best does not depend on timing noise.
fs::path make_sources() {
  const fs::path dir = temp_root() / "sources";
  if (fs::exists(dir)) return dir;
  fs::create_directories(dir);
  fs::copy_file(kTask / "../sources/a_unrolled.cpp", dir / "a_fast.cpp");
  for (int r = 3; r <= 8; ++r)
    KF_CHECK(write_file_atomic(
                 dir / ("slow_" + std::to_string(r) + ".cpp"),
                 "#include <cmath>\n#include <cstdint>\n"
                 "void rmsnorm(const float* x, const float* w, float* y, int64_t N, int64_t D, "
                 "float eps) {\n"
                 "  for (int64_t n = 0; n < N; ++n) {\n"
                 "    const float* xr = x + n * D;\n    float* yr = y + n * D;\n"
                 "    float total = 0;\n"
                 "    for (int rep = 0; rep < " +
                     std::to_string(r) +
                     "; ++rep) {\n"
                     "      float ss = 0;\n"
                     "      for (int64_t d = 0; d < D; ++d) ss += xr[d] * xr[d] * float(rep + 1);\n"
                     "      total += ss / float(rep + 1);\n    }\n"
                     "    const float s = 1.0f / std::sqrt(total / float(" +
                     std::to_string(r) +
                     ") / float(D) + eps);\n"
                     "    for (int64_t e = 0; e < D; ++e) yr[e] = xr[e] * s * w[e];\n  }\n}\n")
                 .ok());
  return dir;
}

constexpr int kCandidates = 8;  // the reference and the seven files

std::unique_ptr<KforgeChild> start_worker(const RedisServer& redis, const std::string& name) {
  return std::make_unique<KforgeChild>(
      std::vector<std::string>{"worker", "--broker", redis.url(), "--name", name, "--reclaim-after",
                               "3", "--heartbeat", "0.5"},
      temp_root() / (name + ".log"));
}

std::vector<std::string> search_args(const RedisServer& redis, const std::string& tag) {
  return {"search",
          kTask.string(),
          "--brain",
          "files",
          "--sources",
          make_sources().string(),
          "--budget-evals",
          "12",
          "--jobs",
          "3",
          "--min-time",
          "0.2",
          "--no-final",
          "--store",
          (temp_root() / (tag + ".db")).string(),
          "--out",
          (temp_root() / (tag + "_out")).string(),
          "--broker",
          redis.url()};
}

nlohmann::json summary_of(const std::string& tag) {
  auto text = read_file(temp_root() / (tag + "_out") / "summary.json");
  return text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
}

// Every candidate judged exactly once in the run's attempts.
void expect_each_judged_once(const std::string& tag, int expected) {
  auto store = open_store_at(temp_root() / (tag + ".db"));
  const std::string run = testing::only_run_in(*store);
  auto attempts = store->attempts(run);
  ASSERT_TRUE(attempts.has_value());
  std::set<std::string> judged;
  for (const AttemptRecord& a : *attempts) {
    if (a.evaluation_key.empty() || a.detail.value("reused", false)) continue;
    EXPECT_TRUE(judged.insert(a.evaluation_key).second) << "judged twice: " << a.candidate_key;
    EXPECT_EQ(a.verdict, "ok") << a.to_json().dump();
  }
  EXPECT_EQ(static_cast<int>(judged.size()), expected);
}

int judged_lines(const std::vector<std::string>& names) {
  int n = 0;
  for (const std::string& w : names)
    n += static_cast<int>(testing::count(log_text(temp_root() / (w + ".log")), "judging job"));
  return n;
}

TEST(BrokerCli, AWorkerKilledMidJobLosesNothingAndTheBestIsTheSame) {
  RedisServer redis;
  ASSERT_TRUE(redis.ready()) << "redis-server did not start (scripts/install-deps.sh installs it)";
  auto w1 = start_worker(redis, "w1");
  auto w2 = start_worker(redis, "w2");
  auto w3 = start_worker(redis, "w3");

  // Without a kill.
  ProcessResult calm = run_kforge(search_args(redis, "calm"), 300);
  ASSERT_TRUE(calm.ok()) << describe(calm);
  expect_each_judged_once("calm", kCandidates);

  // With w1 killed while it judges a job, and w4 started.
  const int before = testing::count(log_text(temp_root() / "w1.log"), "judging job");
  KforgeChild search(search_args(redis, "kill"), temp_root() / "kill.log");
  ASSERT_TRUE(wait_until(
      [&] { return testing::count(log_text(temp_root() / "w1.log"), "judging job") > before; },
      120))
      << log_text(temp_root() / "kill.log");
  w1->kill();
  auto w4 = start_worker(redis, "w4");
  ASSERT_TRUE(wait_until([&] { return search.ended(); }, 300))
      << log_text(temp_root() / "kill.log");
  ASSERT_TRUE(WIFEXITED(search.status()) && WEXITSTATUS(search.status()) == 0)
      << log_text(temp_root() / "kill.log");
  expect_each_judged_once("kill", kCandidates);
  EXPECT_EQ(summary_of("kill")["best"]["origin"], summary_of("calm")["best"]["origin"]);
  EXPECT_EQ(summary_of("kill")["best"]["origin"], "files:a_fast.cpp");
  // The killed worker's job was taken over, and every job of both runs has its result.
  std::string logs;
  for (const char* w : {"w2", "w3", "w4"})
    logs += log_text(temp_root() / (std::string(w) + ".log"));
  EXPECT_NE(logs.find("took over job entry"), std::string::npos) << logs;
  EXPECT_NE(logs.find("(written_rmsnorm: files:slow_"), std::string::npos) << logs;
  for (const std::string tag : {"calm", "kill"}) {
    auto store = open_store_at(temp_root() / (tag + ".db"));
    const std::string run = testing::only_run_in(*store);
    EXPECT_EQ(redis.integer({"SCARD", broker::queued_key(run)}),
              redis.integer({"HLEN", broker::results_key(run)}))
        << tag;
  }
}

TEST(BrokerCli, ACoordinatorKilledAndResumedNeitherLosesNorRepeatsAJob) {
  RedisServer redis;
  ASSERT_TRUE(redis.ready());
  auto a = start_worker(redis, "ra");
  auto b = start_worker(redis, "rb");
  KforgeChild search(search_args(redis, "coord"), temp_root() / "coord.log");
  // Killed once jobs are out and being judged, before the search could end.
  ASSERT_TRUE(wait_until(
      [&] {
        return judged_lines({"ra", "rb"}) >= 3;
      },
      120))
      << log_text(temp_root() / "coord.log");
  search.kill();
  auto store = open_store_at(temp_root() / "coord.db");
  const std::string run = testing::only_run_in(*store);
  ASSERT_NE(store->get_run(run)->state, "finished");
  ASSERT_LT(store->attempts(run)->size(), static_cast<size_t>(kCandidates))
      << "killed before the search ended";
  // The broker's URL is the stored one.
  ProcessResult resumed =
      run_kforge({"search", "--resume", run, "--store", (temp_root() / "coord.db").string(),
                  "--out", (temp_root() / "coord_out").string()},
                 300);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  EXPECT_EQ(store->get_run(run)->state, "finished");
  expect_each_judged_once("coord", kCandidates);
  const int64_t jobs = redis.integer({"SCARD", broker::queued_key(run)});
  EXPECT_EQ(jobs, redis.integer({"HLEN", broker::results_key(run)}));
  // No job was judged twice: the workers judged exactly as many as were published.
  EXPECT_EQ(judged_lines({"ra", "rb"}), jobs);
  EXPECT_EQ(summary_of("coord")["best"]["origin"], "files:a_fast.cpp");
}

TEST(BrokerCli, OptimizeJudgesOnTheWorkersToo) {
  RedisServer redis;
  ASSERT_TRUE(redis.ready());
  auto w = start_worker(redis, "ow");
  const fs::path db = temp_root() / "opt.db", out = temp_root() / "opt_out";
  ProcessResult r =
      run_kforge({"optimize", kTask.string(), "--brain", "files", "--sources",
                  make_sources().string(), "--budget-evals", "4", "--min-time", "0.1", "--store",
                  db.string(), "--out", out.string(), "--broker", redis.url()},
                 300);
  ASSERT_TRUE(r.ok()) << describe(r);
  auto store = open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  // Every measurement of the run, the final one included, was a job the worker judged.
  const int64_t jobs = redis.integer({"SCARD", broker::queued_key(run)});
  EXPECT_GE(jobs, 4);
  EXPECT_EQ(judged_lines({"ow"}), jobs);
  EXPECT_EQ(redis.integer({"HLEN", broker::results_key(run)}), jobs);
  // A job carries where its candidate came from, for the worker's log.
  EXPECT_NE(log_text(temp_root() / "ow.log").find("(written_rmsnorm: files:"), std::string::npos)
      << log_text(temp_root() / "ow.log");
}

TEST(BrokerCli, RedisUnreachableIsAClearError) {
  ProcessResult r =
      run_kforge({"search", kTask.string(), "--budget-evals", "2", "--store",
                  (temp_root() / "unreachable.db").string(), "--broker", "redis://127.0.0.1:1"},
                 60);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot reach Redis at redis://127.0.0.1:1/0"), std::string::npos)
      << describe(r);
  ProcessResult w = run_kforge({"worker", "--broker", "redis://127.0.0.1:1"}, 60);
  EXPECT_EQ(w.exit_code, 1);
  EXPECT_NE(w.err.find("cannot reach Redis"), std::string::npos) << describe(w);
  ProcessResult bad = run_kforge({"worker", "--broker", "http://x"}, 60);
  EXPECT_NE(bad.err.find("expected redis://"), std::string::npos) << describe(bad);
}

TEST(BrokerCli, MalformedJobsAndUnknownResultsAreReportedAndTheSearchGoesOn) {
  RedisServer redis;
  ASSERT_TRUE(redis.ready());
  auto w = start_worker(redis, "mw");
  ASSERT_TRUE(wait_until(
      [&] { return log_text(temp_root() / "mw.log").find("joined") != std::string::npos; }, 60));
  const std::string log = log_text(temp_root() / "mw.log");
  const std::string cls = log.substr(log.find("class ") + 6, 16);
  auto r = redis.connect();
  ASSERT_TRUE(r.has_value());
  // Not JSON; JSON that is not a job; a job whose options a worker refuses (it is answered).
  ASSERT_TRUE(r->command({"XADD", broker::jobs_key(cls), "*", "job", "{not json"}));
  ASSERT_TRUE(r->command({"XADD", broker::jobs_key(cls), "*", "other", "x"}));
  const nlohmann::json bad = {{"v", 1},
                              {"id", "abc123"},
                              {"scope", "nobody"},
                              {"class", cls},
                              {"task", "0123abcd"},
                              {"source", ""},
                              {"options", {{"threads", 100000}}}};
  ASSERT_TRUE(r->command({"XADD", broker::jobs_key(cls), "*", "job", bad.dump()}));
  ASSERT_TRUE(wait_until(
      [&] {
        return redis.integer({"XLEN", broker::dead_key(cls)}) == 3;
      },
      60))
      << log_text(temp_root() / "mw.log");
  auto answer = r->command({"HGET", broker::results_key("nobody"), "abc123"});
  ASSERT_TRUE(answer && !answer->is_nil());
  EXPECT_NE(answer->str.find("'threads' = 100000 is outside [1, 256]"), std::string::npos)
      << answer->str;
  // The worker goes on: a search through it finishes, and a result for a job it never published
  // is named and ignored.
  KforgeChild search(search_args(redis, "odd"), temp_root() / "odd.log");
  ASSERT_TRUE(wait_until([&] { return judged_lines({"mw"}) >= 1; }, 120));
  auto store = open_store_at(temp_root() / "odd.db");
  const std::string run = testing::only_run_in(*store);
  ASSERT_TRUE(r->command({"XADD", broker::done_key(run), "*", "job", "feedbeef"}));
  ASSERT_TRUE(wait_until([&] { return search.ended(); }, 300));
  EXPECT_TRUE(WIFEXITED(search.status()) && WEXITSTATUS(search.status()) == 0)
      << log_text(temp_root() / "odd.log");
  EXPECT_NE(log_text(temp_root() / "odd.log")
                .find("a result for job 'feedbeef', which this run never published, is ignored"),
            std::string::npos)
      << log_text(temp_root() / "odd.log");
  expect_each_judged_once("odd", kCandidates);
}

TEST(BrokerCli, AJobWhoseWorkersKeepDyingIsRecordedFailed) {
  RedisServer redis;
  ASSERT_TRUE(redis.ready());
  // The class of this machine, from a worker that joins and leaves.
  auto probe = start_worker(redis, "probe");
  ASSERT_TRUE(wait_until(
      [&] { return log_text(temp_root() / "probe.log").find("joined") != std::string::npos; }, 60));
  ProcessResult listed = run_kforge({"workers", "--broker", redis.url()}, 30);
  ASSERT_TRUE(listed.ok()) << describe(listed);
  EXPECT_NE(listed.out.find("probe"), std::string::npos) << listed.out;
  const std::string log = log_text(temp_root() / "probe.log");
  const std::string cls = log.substr(log.find("class ") + 6, 16);
  EXPECT_NE(listed.out.find("class " + cls), std::string::npos) << listed.out;
  ProcessResult as_json = run_kforge({"workers", "--broker", redis.url(), "--json"}, 30);
  ASSERT_TRUE(as_json.ok()) << describe(as_json);
  const nlohmann::json doc = nlohmann::json::parse(as_json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << as_json.out;
  EXPECT_EQ(doc["classes"][0]["class"], cls);
  EXPECT_EQ(doc["classes"][0]["workers"][0]["name"], "probe");
  const fs::path doc_file = temp_root() / "workers.json";
  ASSERT_TRUE(write_file_atomic(doc_file, as_json.out).ok());
  const fs::path docs = testing::source_dir() / "docs";
  auto valid = run_process(
      {.argv = {"python3", (testing::source_dir() / "tests/support/validate_json.py").string(),
                (docs / "schemas/workers.schema.json").string(), doc_file.string(),
                (docs / "schemas").string()},
       .timeout_s = 60});
  ASSERT_TRUE(valid.has_value());
  EXPECT_TRUE(valid->ok()) << valid->out << valid->err;
  probe->kill();
  auto r = redis.connect();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->command({"DEL", broker::worker_key("probe")}));
  // A job delivered four times to a consumer that never answered (as four workers that died).
  broker::Job job{.id = "ab12",
                  .scope = "dying",
                  .hw_class = cls,
                  .task_hash = "cd34",
                  .source = "",
                  .options = {}};
  auto id = r->command({"XADD", broker::jobs_key(cls), "*", "job", job.to_json().dump()});
  ASSERT_TRUE(id.has_value());
  ASSERT_TRUE(r->command({"XREADGROUP", "GROUP", broker::kGroup, "ghost", "COUNT", "1", "STREAMS",
                          broker::jobs_key(cls), ">"}));
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(
        r->command({"XCLAIM", broker::jobs_key(cls), broker::kGroup, "ghost", "0", id->str}));
  auto w = start_worker(redis, "survivor");
  ASSERT_TRUE(wait_until(
      [&] {
        return redis.integer({"HLEN", broker::results_key("dying")}) == 1;
      },
      60))
      << log_text(temp_root() / "survivor.log");
  auto answer = r->command({"HGET", broker::results_key("dying"), "ab12"});
  ASSERT_TRUE(answer.has_value());
  auto res = broker::JobResult::from_json(nlohmann::json::parse(answer->str));
  ASSERT_TRUE(res.has_value()) << answer->str;
  EXPECT_EQ(res->result.verdict, Verdict::crash);
  EXPECT_NE(res->result.message.find("each stopped answering while judging it: recorded failed"),
            std::string::npos)
      << res->result.message;
  EXPECT_EQ(redis.integer({"XLEN", broker::jobs_key(cls)}), 0);  // acknowledged and dropped
}

TEST(BrokerCli, WorkersOfAnotherMachineAreNamedNotUsed) {
  RedisServer redis;
  ASSERT_TRUE(redis.ready());
  auto r = redis.connect();
  ASSERT_TRUE(r.has_value());
  // Two registrations of machines unlike this one (as a worker on another CPU writes them).
  for (const char* fp : {"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"}) {
    MachineInfo m;
    m.cpu_model = std::string("Other CPU ") + fp;
    m.isa = {"avx2", "fma"};
    m.cores = 4;
    m.fingerprint = fp;
    const nlohmann::json info = {
        {"name", std::string("far-") + fp}, {"fingerprint", fp}, {"machine", m.to_json()}};
    ASSERT_TRUE(r->command(
        {"SET", broker::worker_key(std::string("far-") + fp), info.dump(), "EX", "120"}));
  }
  ProcessResult two = run_kforge({"search", kTask.string(), "--budget-evals", "2", "--store",
                                  (temp_root() / "far.db").string(), "--broker", redis.url()},
                                 60);
  EXPECT_NE(two.exit_code, 0);
  EXPECT_NE(two.err.find("workers of several machine classes are alive"), std::string::npos)
      << describe(two);
  EXPECT_NE(
      two.err.find("class aaaaaaaaaaaaaaaa (Other CPU aaaaaaaaaaaaaaaa): far-aaaaaaaaaaaaaaaa"),
      std::string::npos)
      << describe(two);
  ProcessResult none = run_kforge({"search", kTask.string(), "--budget-evals", "2", "--store",
                                   (temp_root() / "far.db").string(), "--broker", redis.url(),
                                   "--hardware", "cccccccccccccccc", "--broker-wait", "2"},
                                  60);
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no worker of class cccccccccccccccc has joined"), std::string::npos)
      << describe(none);
}

}  // namespace
}  // namespace kf
