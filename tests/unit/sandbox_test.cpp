// The worker sandbox on its own: buffers shared with the parent, commands with deadlines,
// faults reported as verdicts, input rotation, canaries.
#include "harness/sandbox.h"

#include <gtest/gtest.h>

#include <cstring>

#include "harness/toolchain.h"

namespace kf {
namespace {

// out[i] = in[i] * 2 + dims[0]; `mode` (scalar 0) selects misbehaviour.
const char* kKernel = R"(
#include <cstdint>
#include <unistd.h>
#include <sys/socket.h>
extern "C" __attribute__((visibility("default")))
void kf_entry(void* const* buf, const int64_t* dims, const double* scalars) {
  const float* in = static_cast<const float*>(buf[0]);
  float* out = static_cast<float*>(buf[1]);
  int mode = static_cast<int>(scalars[0]);
  if (mode == 1) for (;;) {}
  if (mode == 2) socket(2, 1, 0);
  if (mode == 3) out[dims[1]] = 1.0f;  // one past the end: into the tail canary
  if (mode == 4) *(volatile int*)nullptr = 1;
  for (int64_t i = 0; i < dims[1]; ++i) out[i] = in[i] * 2 + static_cast<float>(dims[0]);
}
)";

std::unique_ptr<Worker> start(int mode, int64_t n = 5, int sets = 1) {
  CompiledObject o = compile_solution(kKernel, "", {});
  EXPECT_TRUE(o.info.ok) << o.info.log;
  WorkerSpec spec{.so = o.so_path,
                  .layout = {{"in", n * sizeof(float), true}, {"out", n * sizeof(float), false}},
                  .sets = sets,
                  .dims = {7, n},
                  .scalars = {static_cast<double>(mode)}};
  auto w = Worker::start(spec);
  EXPECT_TRUE(w) << w.error().message();
  return std::move(*w);
}

TEST(Sandbox, RunsOnSharedBuffers) {
  auto w = start(0, 5, 3);
  ASSERT_EQ(w->fault(), nullptr) << w->fault()->message;
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < 5; ++i)
      static_cast<float*>(w->buffer(s, 0))[i] = static_cast<float>(i + 10 * s);
  RunOutcome r = w->run(1, 2, 10);  // sets 1 and 2
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_GT(r.seconds, 0);
  EXPECT_EQ(static_cast<float*>(w->buffer(1, 1))[4], (4 + 10) * 2 + 7);
  EXPECT_EQ(static_cast<float*>(w->buffer(2, 1))[0], 20 * 2 + 7);
  EXPECT_EQ(static_cast<float*>(w->buffer(0, 1))[0], 0);  // set 0 untouched
  EXPECT_TRUE(w->canaries_intact(nullptr));
  RunOutcome p = w->ping();
  ASSERT_TRUE(p.ok);
  EXPECT_LT(p.seconds, 0.1);
}

TEST(Sandbox, BuffersAre64ByteAligned) {
  auto w = start(0, 3, 2);
  for (int s = 0; s < 2; ++s)
    for (size_t t = 0; t < 2; ++t) EXPECT_EQ(reinterpret_cast<uintptr_t>(w->buffer(s, t)) % 64, 0u);
}

TEST(Sandbox, DeadlineKillsASpinningKernel) {
  auto w = start(1);
  RunOutcome r = w->run(0, 1, 0.5);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.verdict, Verdict::timeout);
  EXPECT_NE(r.message.find("timed out"), std::string::npos);
  EXPECT_FALSE(w->run(0, 1, 0.5).ok);  // dead stays dead
}

TEST(Sandbox, ForbiddenCallIsNamed) {
  auto w = start(2);
  RunOutcome r = w->run(0, 1, 5);
  EXPECT_EQ(r.verdict, Verdict::forbidden);
  EXPECT_NE(r.message.find("socket"), std::string::npos) << r.message;
}

TEST(Sandbox, TailCanaryCatchesAnOverrun) {
  auto w = start(3, 5);
  ASSERT_TRUE(w->run(0, 1, 5).ok);
  std::string which;
  EXPECT_FALSE(w->canaries_intact(&which));
  EXPECT_EQ(which, "out");
}

TEST(Sandbox, CrashIsReportedWithTheSignal) {
  auto w = start(4);
  RunOutcome r = w->run(0, 1, 5);
  EXPECT_EQ(r.verdict, Verdict::crash);
  EXPECT_NE(r.message.find("SIGSEGV"), std::string::npos) << r.message;
}

TEST(Sandbox, ObjectThatDoesNotLoad) {
  WorkerSpec spec{.so = "/nonexistent.so", .layout = {{"x", 4, true}}};
  auto w = Worker::start(spec);
  ASSERT_TRUE(w);
  ASSERT_NE((*w)->fault(), nullptr);
  EXPECT_EQ((*w)->fault()->verdict, Verdict::compile_error);
}

}  // namespace
}  // namespace kf
