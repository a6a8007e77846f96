// Helpers of the mechanical forms' tests (agents_builtin_moves_*_test.cpp): a form's proposal as
// text, schedules as text, and the suite tasks they run on.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agents/builtin/brain.h"
#include "agents/builtin/moves.h"
#include "lower_test_util.h"

namespace kf::agents::builtin::moves_test {

// A form's proposal as text: one string per group, "TARGET: move | move | ...".
inline std::vector<std::string> propose(const std::string& strategy, const sched::Pipeline& p,
                                        int threads = 1, Knobs knobs = {}) {
  const Strategy* s = find_strategy(strategy);
  KF_CHECK(s && s->moves) << strategy;
  Knobs k = s->default_knobs();
  for (const auto& [n, v] : knobs) k[n] = v;
  auto groups = s->moves(p, k, {.machine = nullptr, .threads = threads});
  KF_CHECK(groups.has_value()) << strategy << ": " << groups.error().message();
  std::vector<std::string> out;
  for (const MoveGroup& g : *groups) {
    std::string line = g.target + ":";
    for (size_t i = 0; i < g.moves.size(); ++i) line += (i ? " | " : " ") + g.moves[i].to_string();
    out.push_back(line);
  }
  return out;
}

using Lines = std::vector<std::string>;

// Proposed groups ("TARGET: move | move") as schedule text, one move per line.
inline std::string schedule_text(const Lines& groups) {
  std::string text;
  for (const std::string& line : groups) {
    std::string moves = line.substr(line.find(':') + 2);
    for (size_t at; (at = moves.find(" | ")) != std::string::npos;) moves.replace(at, 3, "\n");
    text += moves + "\n";
  }
  return text;
}

inline sched::Pipeline default_pipeline(const Task& task) {
  return testing::pipeline_of(task);
}

// The pipeline after a schedule given as text.
inline sched::Pipeline scheduled(const Task& task, const std::string& text) {
  sched::Pipeline p = default_pipeline(task);
  Status s = sched::apply_schedule(p, testing::schedule_of(text));
  KF_CHECK(s.ok()) << s.message();
  return p;
}

// The moves of a strategy's one group (default knobs) on a task's default pipeline, as text.
inline std::string register_block_text(const Task& task,
                                       const std::string& strategy = "register_block") {
  const Strategy* s = find_strategy(strategy);
  auto g = s->moves(testing::pipeline_of(task), s->default_knobs(), {});
  KF_CHECK(g.has_value() && g->size() == 1);
  std::string text;
  for (const auto& m : (*g)[0].moves) text += m.to_string() + "\n";
  return text;
}

class Tasks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    rmsnorm_ = new Task(testing::task_at("bench/jaxbench/12_rmsnorm"));
    gemm_ = new Task(testing::task_at("bench/jaxbench/08_gemm"));
    gemm_relu_ = new Task(testing::task_at("bench/jaxbench/41_gemm_add_relu"));
    softmax_ = new Task(testing::task_at("bench/jaxbench/50_matmul_gelu_softmax"));
    conv_ = new Task(testing::task_at("bench/jaxbench/18_conv2d_relu_biasadd"));
    swiglu_ = new Task(testing::task_at("bench/jaxbench/09_swiglu_mlp"));
  }
  static void TearDownTestSuite() {
    delete rmsnorm_;
    delete gemm_;
    delete gemm_relu_;
    delete softmax_;
    delete conv_;
    delete swiglu_;
  }
  static inline Task *rmsnorm_ = nullptr, *gemm_ = nullptr, *gemm_relu_ = nullptr,
                     *softmax_ = nullptr, *conv_ = nullptr, *swiglu_ = nullptr;
};

}  // namespace kf::agents::builtin::moves_test
