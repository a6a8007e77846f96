// The online_softmax primitive (schedule/online_softmax.cpp): a row max becomes a logsumexp
// computed in one pass, its normalizer and the divisions by it go, and max + log(sum) becomes
// the logsumexp. The rewritten stages are checked as text, the kernels by the judge at every
// test shape; what would change a value is refused with a reason.
#include <gtest/gtest.h>

#include "lower_test_util.h"
#include "schedule/primitives.h"

namespace kf::sched {
namespace {

using testing::lower_and_judge;
using testing::pipeline_of;
using testing::schedule_error;
using testing::schedule_of;
using testing::task_at;

Task with_spec(const std::string& dir, const std::string& spec) {
  Task t = task_at(dir);
  t.te_spec = spec;
  return t;
}

// A stage's definition as text, reductions with their ranges.
std::string body_of(const Pipeline& p, const std::string& stage) {
  const Stage& s = p.stages[static_cast<size_t>(p.find(stage))];
  te::Stage view;
  view.reduce_vars = s.reduce_vars;
  return te::to_string(s.body, &view);
}

TEST(OnlineSoftmax, TheRowMaxBecomesALogsumexpAndTheNormalizerGoes) {
  Task task = task_at("bench/jaxbench/01_flash_attention");
  Pipeline p = pipeline_of(task);
  const size_t before = p.stages.size();
  ASSERT_TRUE(apply_schedule(p, schedule_of("online_softmax m\n")).ok());
  EXPECT_EQ(p.stages.size(), before - 1);
  EXPECT_LT(p.find("den"), 0);
  const Stage& m = p.stages[static_cast<size_t>(p.find("m"))];
  EXPECT_EQ(m.body.reduce_op, te::ReduceOp::logsumexp);
  EXPECT_FALSE(m.reduction) << "a pair of running values: it runs inline";
  std::vector<std::string> loops;
  for (const Loop& l : m.loops) loops.push_back(l.name);
  EXPECT_EQ(loops, (std::vector<std::string>{"b", "h", "i"}));
  EXPECT_EQ(body_of(p, "pe"), "exp((s[b, h, i, j] - m[b, h, i]))");
  EXPECT_EQ(body_of(p, "o"), "sum(j in 0..(i + 1): (pe[b, h, i, j] * v[b, h, j, d]))");
  // Stage refs after the removed one still point where they did.
  EXPECT_EQ(p.stages[static_cast<size_t>(p.find("o"))].body.args[0].args[0].ref.index,
            p.find("pe"));
}

TEST(OnlineSoftmax, MaxPlusLogOfTheSumIsTheLogsumexpInEitherOrder) {
  const std::string dir = "bench/jaxbench/13_cross_entropy";
  for (const char* loss :
       {"m[t] + log(sum(v: exp(lg[t, v] - m[t])))", "log(sum(v: exp(lg[t, v] - m[t]))) + m[t]"}) {
    Task task = with_spec(dir, std::string("lg[t, v] = sum(d: h[t, d] * W[d, v])\n"
                                           "m[t] = max(v: lg[t, v])\n"
                                           "loss[t] = ") +
                                   loss + " - lg[t, labels[t]]\n");
    Pipeline p = pipeline_of(task);
    ASSERT_TRUE(apply_schedule(p, schedule_of("online_softmax m\n")).ok()) << loss;
    EXPECT_EQ(body_of(p, "loss"), "(m[t] - lg[t, labels[t]])") << loss;
    EXPECT_EQ(lower_and_judge(task, "online_softmax m\nvectorize_reductions m 8\n"), "ok") << loss;
  }
}

TEST(OnlineSoftmax, ANumeratorLinearInTheProbabilitiesKeepsItsFactors) {
  // A select with a free condition and a zero branch, a constant factor and a constant divisor:
  // all scale with e, so dropping the division by the sum keeps the value.
  Task task = with_spec("tests/golden/tasks/bf16_softmax",
                        "m[n]    = max(d: x[n, d])\n"
                        "e[n, d] = exp(x[n, d] - m[n])\n"
                        "y[n, d] = select(d >= 0, 2 * e[n, d] / 2, 0) / sum(d2: e[n, d2])\n");
  Pipeline p = pipeline_of(task);
  ASSERT_TRUE(apply_schedule(p, schedule_of("online_softmax m\n")).ok());
  EXPECT_EQ(body_of(p, "y"), "select((d >= 0), ((2 * e[n, d]) / 2), 0)");
  EXPECT_EQ(lower_and_judge(task, "online_softmax m\ncompute_inline e\nvectorize y.d 16\n"), "ok");
}

TEST(OnlineSoftmax, RefusesWhatWouldChangeAValue) {
  // The normalizer or the max is an output: its value would change or it would vanish.
  Task den_out = with_spec("tests/golden/tasks/argmax_rows",
                           "m[n]   = max(d: x[n, d])\n"
                           "mx[n]  = sum(d: exp(x[n, d] - m[n]))\n"
                           "idx[n] = i32(argmax(d: x[n, d]))\n");
  EXPECT_EQ(schedule_error(den_out, "online_softmax m\n"),
            "test.sched:1: mx is a task output: online_softmax would remove it");
  Task max_out = with_spec("tests/golden/tasks/argmax_rows",
                           "mx[n]  = max(d: x[n, d])\n"
                           "idx[n] = i32(sum(d: exp(x[n, d] - mx[n])))\n");
  EXPECT_EQ(schedule_error(max_out, "online_softmax mx\n"),
            "test.sched:1: mx is a task output: it would hold the logsumexp instead");
  // The max's reduction loop already split: the rewrite removes that loop.
  Task ce = task_at("bench/jaxbench/13_cross_entropy");
  EXPECT_EQ(schedule_error(ce, "split m.v v.o v.i 16\nonline_softmax m\n"),
            "test.sched:2: m's reduction loop is split or fused (v.o): apply online_softmax "
            "before scheduling it");
  // A sum stage that is not a row max: nothing to rewrite.
  EXPECT_EQ(schedule_error(ce, "online_softmax loss_r\n"),
            "test.sched:1: loss_r is not a row maximum: online_softmax needs a stage whose whole "
            "definition is a float max over one variable, got `sum(v in 0..V: exp((lg[t, v] - "
            "m[t])))`");
  // Once is enough: the logsumexp is no max any more.
  EXPECT_NE(schedule_error(ce, "online_softmax m\nonline_softmax m\n").find("is not a row maximum"),
            std::string::npos);
}

}  // namespace
}  // namespace kf::sched
