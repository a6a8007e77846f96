// specialize_uniform (schedule/loop_primitives.cpp, lower/specialize_uniform.cpp): a loop's body
// gets a version for the iterations whose index reads agree. Its refusals and lowering are golden
// files (tests/golden/lower/*specialize_uniform*); here the kernels are judged: the grouped GEMM
// tiles it is for (whose test shapes have groups of 0, 1 and many rows, so tiles both agree and
// straddle), and every suite task where it changes the kernel under random schedules drawn after
// it (the differential test's coverage of the primitive).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "lower/lower.h"
#include "lower_test_util.h"
#include "schedule/random_schedule.h"

namespace kf {
namespace {

constexpr const char* kGroupedTile = R"(cache_write out out_acc
split out.m m.o m.i 6
split out.n n.o n.i 64
reorder out n.o m.o m.i n.i
unroll out.m.i
vectorize out.n.i 16
compute_at out_acc out.m.o
reorder out_acc k m n
unroll out_acc.m
vectorize out_acc.n 16
specialize_uniform out.m.o
)";

std::string source_of(const Task& t, const std::string& schedule) {
  auto src = generate_kernel(t, testing::schedule_of(schedule), {});
  return src ? *src : "lowering failed: " + src.error().message();
}

// The kernel without its header comments (which name the schedule).
std::string code_of(const Task& t, const std::string& schedule) {
  std::istringstream in(source_of(t, schedule));
  std::string out, line;
  while (std::getline(in, line))
    if (line.rfind("//", 0) != 0) out += line + "\n";
  return out;
}

TEST(SpecializeUniform, TheGroupedGemmTilesPassTheJudge) {
  for (const char* task : {"bench/jaxbench/14_ragged_dot", "bench/jaxbench/11_megablox_gmm"}) {
    const Task t = testing::task_at(task);
    EXPECT_NE(source_of(t, kGroupedTile).find("== grp[out_m_o * 6]"), std::string::npos) << task;
    EXPECT_EQ(testing::lower_and_judge(t, kGroupedTile), "ok") << task;
  }
}

TEST(SpecializeUniform, ARefusedMarkLeavesThePipelineAsItWas) {
  const Task t = testing::task_at("bench/jaxbench/08_gemm");
  sched::Pipeline p = testing::pipeline_of(t);
  const std::string before = p.to_string();
  EXPECT_FALSE(sched::apply_schedule(p, testing::schedule_of("specialize_uniform C.i")).ok());
  EXPECT_EQ(p.to_string(), before);
}

// A prefix that makes a loop of one of the task's stages carry an unrolled block of rows and
// specializes it, when the mark changes the kernel; "" when no stage of the task has one.
std::string specializing_prefix(const Task& t) {
  const sched::Pipeline p = testing::pipeline_of(t);
  for (const sched::Stage& s : p.stages)
    for (const sched::Loop& l : s.loops) {
      const std::string ref = s.name + "." + l.name;
      const std::string tile = "split " + ref + " r.o r.i 3\nunroll " + s.name + ".r.i\n";
      const std::string mark = tile + "specialize_uniform " + s.name + ".r.o\n";
      if (!testing::schedule_error(t, mark).empty()) continue;
      if (code_of(t, mark) != code_of(t, tile)) return mark;
    }
  return "";
}

TEST(SpecializeUniform, EverySuiteTaskItChangesPassesTheJudgeUnderRandomSchedules) {
  std::vector<std::string> covered;
  for (const std::string& path : testing::suite_task_paths()) {
    const Task t = testing::task_at(path);
    if (t.te_spec.empty()) continue;
    const std::string prefix = specializing_prefix(t);
    if (prefix.empty()) continue;
    covered.push_back(t.name);
    EXPECT_EQ(testing::lower_and_judge(t, prefix), "ok") << t.name;
    sched::Pipeline p = testing::pipeline_of(t);
    ASSERT_TRUE(sched::apply_schedule(p, testing::schedule_of(prefix)).ok()) << t.name;
    for (uint64_t i = 0; i < 2; ++i) {
      const sched::Schedule rest = sched::random_schedule(p, 0x756e6966ULL + 16 * i, {});
      EXPECT_EQ(testing::lower_and_judge(t, prefix + rest.to_string(), 7 + i), "ok") << t.name;
    }
  }
  // The grouped GEMMs, the paged attentions and the MoE gather through index tensors; the count
  // guards against a change that silently stops the mark from changing any kernel.
  EXPECT_GE(covered.size(), 3u) << ::testing::PrintToString(covered);
  RecordProperty("covered", ::testing::PrintToString(covered));
}

}  // namespace
}  // namespace kf
