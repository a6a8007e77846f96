// mask_range (schedule/mask_range.cpp): a reduction whose range moves with its stage's variables
// runs over the static cover with the moving bounds as the stage's predicate. Its refusals and
// lowering are golden files (tests/golden/lower/*mask_range*); here the kernels are judged:
// the register tile it opens on causal attention, and every suite task it applies to under
// random schedules drawn after it (the differential test's coverage of the primitive).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lower_test_util.h"
#include "schedule/random_schedule.h"

namespace kf {
namespace {

// 01's P @ V with a row's output vectors accumulated in registers (docs/schedule.md).
constexpr const char* kRowTile = R"(compute_at den o.i
compute_at pe o.i
compute_at m o.i
compute_at s o.i
compute_at s_r o.i
vectorize pe.j 16
split o.d d.o d.i 64
vectorize o.d.i 16
mask_range o o_m
reorder o_m b h i j d
split o_m.d d.o d.i 16
vectorize o_m.d.i 16
unroll o_m.d.o
)";

TEST(MaskRange, TheCausalRowTileAndTheMaskedStatisticsPassTheJudge) {
  const Task t = testing::task_at("bench/jaxbench/01_flash_attention");
  EXPECT_EQ(testing::lower_and_judge(t, kRowTile), "ok");
  EXPECT_EQ(testing::lower_and_judge(t,
                                     "mask_range m\nmask_range den\nmask_range o\n"
                                     "compute_at o_m o.i\nreorder o_m b h i j d\n"),
            "ok");
}

TEST(MaskRange, ARangeReadFromATensorIsMaskedOverTheDimensionItIndexes) {
  // 06's t in 0..lens[n] and 07's t in 0..pos[r] + 1 (pos a stage computed per head).
  const Task paged = testing::task_at("bench/jaxbench/06_paged_attention");
  EXPECT_EQ(testing::lower_and_judge(paged,
                                     "compute_at den o.h\ncompute_at pe o.h\ncompute_at m o.h\n"
                                     "compute_at s o.h\ncompute_at s_r o.h\nmask_range o o_m\n"
                                     "reorder o_m n h t d\nvectorize o_m.d 16\n"),
            "ok");
  const Task ragged = testing::task_at("bench/jaxbench/07_ragged_paged_attention");
  EXPECT_EQ(testing::lower_and_judge(ragged,
                                     "compute_at den o.h\ncompute_at pe o.h\ncompute_at m o.h\n"
                                     "compute_at s o.h\ncompute_at s_r o.h\ncompute_at pos o.h\n"
                                     "mask_range o o_m\nreorder o_m r h t d\n"
                                     "vectorize o_m.d 16\nmask_range den\n"),
            "ok");
}

TEST(MaskRange, ASlidingWindowIsMaskedOnBothSides) {
  const Task flex = testing::task_at("bench/jaxbench/05_flex_attention");
  EXPECT_EQ(testing::lower_and_judge(flex,
                                     "split o.i i.o i.i 4\ncompute_at den o.i.o\n"
                                     "compute_at pe o.i.o\ncompute_at m o.i.o\n"
                                     "compute_at s o.i.o\ncompute_at s_r o.i.o\n"
                                     "mask_range o o_m\ncompute_at o_m o.i.o\n"
                                     "reorder o_m b h j i d\nunroll o_m.i\nmask_range m\n"),
            "ok");
}

TEST(MaskRange, ARefusedMaskLeavesThePipelineAsItWas) {
  const Task t = testing::task_at("bench/jaxbench/01_flash_attention");
  sched::Pipeline p = testing::pipeline_of(t);
  const std::string before = p.to_string();
  EXPECT_FALSE(sched::apply_schedule(p, testing::schedule_of("mask_range m m2")).ok());
  EXPECT_FALSE(sched::apply_schedule(p, testing::schedule_of("mask_range s_r")).ok());
  EXPECT_EQ(p.to_string(), before);
}

// The stages of a task's default pipeline that mask_range applies to, each masked in turn.
std::vector<std::string> masked_stages(sched::Pipeline& p) {
  std::vector<std::string> out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const std::string name = p.stages[i].name;
    if (sched::apply_schedule(p, testing::schedule_of("mask_range " + name)).ok())
      out.push_back(name);
  }
  return out;
}

TEST(MaskRange, EverySuiteTaskItAppliesToPassesTheJudgeUnderRandomSchedules) {
  std::vector<std::string> covered;
  for (const std::string& path : testing::suite_task_paths()) {
    const Task t = testing::task_at(path);
    if (t.te_spec.empty()) continue;
    sched::Pipeline p = testing::pipeline_of(t);
    const std::vector<std::string> masked = masked_stages(p);
    if (masked.empty()) continue;
    covered.push_back(t.name);
    std::string prefix;
    for (const std::string& s : masked) prefix += "mask_range " + s + "\n";
    for (uint64_t i = 0; i < 3; ++i) {
      const sched::Schedule rest = sched::random_schedule(p, 0x6d61736bULL + 16 * i, {});
      EXPECT_EQ(testing::lower_and_judge(t, prefix + rest.to_string(), 7 + i), "ok") << t.name;
    }
  }
  // The causal and prefix-scan tasks have such ranges; the count guards against a change that
  // silently stops the primitive from applying anywhere.
  EXPECT_GE(covered.size(), 3u) << ::testing::PrintToString(covered);
}

}  // namespace
}  // namespace kf
