// The live progress line of `optimize` and `search` on a terminal: a bar of the evaluations
// spent against the budget, the time elapsed, an estimate of the time left (the evaluations left
// times the mean time of those measured so far, not of those read back from the store) and how
// long the current evaluation has been running, redrawn on stderr every quarter second. The
// run's progress lines (on stderr too: stdout holds the result) print through it (print_line),
// so a line never lands inside the bar.
// Not drawn when stderr is not a terminal; events always pass on to `next`.
//
//   ProgressBar bar(o.events, ProgressBar::wanted());
//   o.events = &bar;
//   o.progress = [&](const std::string& line) { bar.print_line(line); };
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "harness/side_by_side.h"
#include "modes/events.h"

namespace kf {

class ProgressBar final : public EventSink {
 public:
  ProgressBar(EventSink* next, bool draw);
  ~ProgressBar() override;
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Whether stderr is a terminal (and TERM is not "dumb").
  static bool wanted();
  void on(const Event& e) override;
  // A progress line on stderr, with the bar cleared before it and drawn again after it.
  void print_line(const std::string& line);

  // The bar's text for a state (a pure function, for tests): `width` cells of bar.
  struct State {
    int evaluations = 0, budget = 0, fresh = 0;
    double elapsed_s = 0, fresh_s = 0, current_s = 0, time_left_s = -1;
  };
  static std::string text(const State& s, int width = 24);

 private:
  void tick();
  void draw_locked();
  void clear_locked();
  using Clock = std::chrono::steady_clock;
  EventSink* next_;
  bool draw_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false, stopping_ = false, drawn_ = false;
  int evaluations_ = 0, budget_ = 0, fresh_ = 0;
  double fresh_s_ = 0, budget_time_s_ = 0;
  Clock::time_point started_, current_started_;
  std::thread ticker_;
};

// "1m02s", "45s", "2h03m".
std::string short_duration(double seconds);

// The live line of a judge's timing loop (`kforge eval` on a terminal):
// "timing [##########..............] 42%  8s elapsed  ETA ~11s".
std::string timing_bar_text(const TimingProgress& p, int width = 24);

}  // namespace kf
