#include "modes/progress_bar.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace kf {

std::string short_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string timing_bar_text(const TimingProgress& p, int width) {
  const double f = p.fraction();
  std::string bar(static_cast<size_t>(std::lround(f * width)), '#');
  bar.resize(static_cast<size_t>(width), '.');
  const double left = p.left_s();
  return fmt::format("timing [{}] {:>3.0f}%  {} elapsed  ETA {}", bar, 100 * f,
                     short_duration(p.elapsed_s), left < 0 ? "--" : "~" + short_duration(left));
}

std::string ProgressBar::text(const State& s, int width) {
  const int shown = s.budget > 0 ? std::min(s.evaluations, s.budget) : s.evaluations;
  const int filled = s.budget > 0 ? width * shown / s.budget : 0;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(static_cast<size_t>(width), '.');
  std::string eta = "ETA --";
  if (s.fresh > 0 && s.budget > 0) {
    double left = (s.budget - shown) * (s.fresh_s / s.fresh);
    if (s.time_left_s >= 0) left = std::min(left, s.time_left_s);
    eta = "ETA ~" + short_duration(left);
  }
  const std::string what = s.budget > 0 && s.evaluations >= s.budget
                               ? "finishing"
                               : fmt::format("evaluation {}", s.evaluations + 1);
  return fmt::format("[{}] {}/{} evaluations  {} elapsed  {}  ({} {})", bar, shown, s.budget,
                     short_duration(s.elapsed_s), eta, what, short_duration(s.current_s));
}

bool ProgressBar::wanted() {
  const char* term = std::getenv("TERM");
  return isatty(STDERR_FILENO) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

ProgressBar::ProgressBar(EventSink* next, bool draw) : next_(next), draw_(draw) {}

ProgressBar::~ProgressBar() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    clear_locked();
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

void ProgressBar::on(const Event& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    if (const auto* s = std::get_if<RunStarted>(&e)) {
      budget_ = s->budget_evals;
      budget_time_s_ = s->budget_time_s;
      started_ = current_started_ = now;
      running_ = true;
      if (draw_ && !ticker_.joinable()) ticker_ = std::thread([this] { tick(); });
    } else if (const auto* a = std::get_if<AttemptJudged>(&e)) {
      evaluations_ = a->evaluation;
      if (!a->reused) {
        ++fresh_;
        fresh_s_ += std::chrono::duration<double>(now - current_started_).count();
      }
      current_started_ = now;
    } else if (std::holds_alternative<RunEnded>(e)) {
      running_ = false;
      clear_locked();
    }
  }
  if (next_) next_->on(e);
}

void ProgressBar::print_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  clear_locked();
  fmt::print(stderr, "{}\n", line);
  draw_locked();
}

void ProgressBar::tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    draw_locked();
    cv_.wait_for(lock, std::chrono::milliseconds(250));
  }
}

void ProgressBar::draw_locked() {
  if (!draw_ || !running_ || stopping_) return;
  const auto now = Clock::now();
  State s{.evaluations = evaluations_,
          .budget = budget_,
          .fresh = fresh_,
          .elapsed_s = std::chrono::duration<double>(now - started_).count(),
          .fresh_s = fresh_s_,
          .current_s = std::chrono::duration<double>(now - current_started_).count()};
  if (budget_time_s_ > 0) s.time_left_s = std::max(0.0, budget_time_s_ - s.elapsed_s);
  fmt::print(stderr, "\r\x1b[K{}", text(s));
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear_locked() {
  if (!drawn_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace kf
