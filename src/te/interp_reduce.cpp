// The interpreter's reduction node: sum, prod, max, min, argmax, argmin, logsumexp over one or
// more loops, the innermost evaluated a row at a time (see interp_exec.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "support/check.h"
#include "te/interp_exec.h"

namespace kf::te::detail {
namespace {

template <ReduceOp R>
class Reduce final : public Node {
 public:
  Reduce(std::vector<ReduceLoop> loops, NodePtr body)
      : loops_(std::move(loops)), body_(std::move(body)) {}

  double eval(Frame& f) override {
    acc_ = init();
    scaled_ = 0;
    best_ = -1;
    run(f, 0);
    if constexpr (R == ReduceOp::argmax || R == ReduceOp::argmin) return static_cast<double>(best_);
    if constexpr (R == ReduceOp::logsumexp) return acc_ + std::log(scaled_);  // -inf when empty
    return acc_;
  }

 private:
  static double init() {
    switch (R) {
      case ReduceOp::sum:
        return 0;
      case ReduceOp::prod:
        return 1;
      case ReduceOp::max:
      case ReduceOp::argmax:
      case ReduceOp::logsumexp:
        return -std::numeric_limits<double>::infinity();
      case ReduceOp::min:
      case ReduceOp::argmin:
        return std::numeric_limits<double>::infinity();
    }
    return 0;
  }

  void add(double v, int64_t at) {
    switch (R) {
      case ReduceOp::sum:
        acc_ += v;
        return;
      case ReduceOp::prod:
        acc_ *= v;
        return;
      case ReduceOp::max:
        acc_ = acc_ < v ? v : acc_;
        return;
      case ReduceOp::min:
        acc_ = v < acc_ ? v : acc_;
        return;
      case ReduceOp::argmax:
        if (best_ < 0 || v > acc_) acc_ = v, best_ = at;
        return;
      case ReduceOp::argmin:
        if (best_ < 0 || v < acc_) acc_ = v, best_ = at;
        return;
      case ReduceOp::logsumexp: {
        // acc_ is the largest value so far, scaled_ the sum of exp(value - acc_). A -inf value
        // adds nothing; a NaN makes the result NaN.
        if (v == -std::numeric_limits<double>::infinity()) return;
        if (std::isnan(v) || std::isnan(acc_)) {
          acc_ = std::numeric_limits<double>::quiet_NaN();
          return;
        }
        if (v == acc_) {
          scaled_ += 1;  // also +inf twice, where exp(v - acc_) would be NaN
        } else if (v > acc_) {
          scaled_ = scaled_ * std::exp(acc_ - v) + 1;
          acc_ = v;
        } else {
          scaled_ += std::exp(v - acc_);
        }
        return;
      }
    }
  }

  void run(Frame& f, size_t level) {
    const ReduceLoop& l = loops_[level];
    const auto lo = static_cast<int64_t>(l.lo->eval(f));
    const auto hi = static_cast<int64_t>(l.hi->eval(f));
    int64_t& s = f.slots[l.slot];
    if (level + 1 < loops_.size()) {
      for (s = lo; s < hi && !f.failed; ++s) run(f, level + 1);
      return;
    }
    for (int64_t start = lo; start < hi; start += kRowChunk) {
      const int64_t n = std::min(kRowChunk, hi - start);
      s = start;
      body_->eval_row(f, l.slot, n, buf_);
      if (f.failed) return;
      for (int64_t i = 0; i < n; ++i) add(buf_[i], start + i);
    }
  }

  std::vector<ReduceLoop> loops_;
  NodePtr body_;
  double acc_ = 0;
  double scaled_ = 0;  // logsumexp only
  int64_t best_ = -1;
  double buf_[kRowChunk];
};

}  // namespace

NodePtr make_reduce(ReduceOp op, std::vector<ReduceLoop> loops, NodePtr body) {
  switch (op) {
    case ReduceOp::sum:
      return NodePtr(new Reduce<ReduceOp::sum>(std::move(loops), std::move(body)));
    case ReduceOp::prod:
      return NodePtr(new Reduce<ReduceOp::prod>(std::move(loops), std::move(body)));
    case ReduceOp::max:
      return NodePtr(new Reduce<ReduceOp::max>(std::move(loops), std::move(body)));
    case ReduceOp::min:
      return NodePtr(new Reduce<ReduceOp::min>(std::move(loops), std::move(body)));
    case ReduceOp::argmax:
      return NodePtr(new Reduce<ReduceOp::argmax>(std::move(loops), std::move(body)));
    case ReduceOp::argmin:
      return NodePtr(new Reduce<ReduceOp::argmin>(std::move(loops), std::move(body)));
    case ReduceOp::logsumexp:
      return NodePtr(new Reduce<ReduceOp::logsumexp>(std::move(loops), std::move(body)));
  }
  KF_CHECK(false) << "unknown reduction";
  return nullptr;
}

}  // namespace kf::te::detail
