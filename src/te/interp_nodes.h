// The interpreter's compiled form: a tree of small evaluator nodes, built once per shape by
// interp_compile.cpp and run by interpreter.cpp. Internal to src/te.
//
// Values are doubles (integers held exactly). Index and reduction variables live in integer
// slots of a Frame: a stage's LHS vars first, then its reduction vars. A node that fails (an
// out-of-range index without `else`, an integer division by zero) records the error in the Frame
// and returns 0; the stage loop stops at the first failed element.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "te/ast.h"

namespace kf::te::detail {

struct Frame {
  std::vector<int64_t> slots;
  bool failed = false;
  std::string error;

  void fail(std::string message) {
    if (failed) return;
    failed = true;
    error = std::move(message);
  }
};

// Rows are evaluated in chunks of at most this many elements.
inline constexpr int64_t kRowChunk = 512;

class Node {
 public:
  virtual ~Node() = default;
  // The value at the current slots.
  virtual double eval(Frame& f) = 0;
  // The values for slot `s` running f.slots[s], f.slots[s] + 1, ... (n <= kRowChunk values)
  // into out[0..n), the other slots fixed; f.slots[s] is unchanged on return. Nodes that can,
  // work on the whole row at once (this is what makes the interpreter fast); by default, one
  // element at a time.
  virtual void eval_row(Frame& f, int s, int64_t n, double* out) {
    const int64_t base = f.slots[s];
    for (int64_t i = 0; i < n && !f.failed; ++i) {
      f.slots[s] = base + i;
      out[i] = eval(f);
    }
    f.slots[s] = base;
  }
  // The value when the node is a constant (for folding).
  virtual const double* constant() const { return nullptr; }
};

using NodePtr = std::unique_ptr<Node>;

class Const final : public Node {
 public:
  explicit Const(double v) : v_(v) {}
  double eval(Frame&) override { return v_; }
  void eval_row(Frame&, int, int64_t n, double* out) override {
    for (int64_t i = 0; i < n; ++i) out[i] = v_;
  }
  const double* constant() const override { return &v_; }

 private:
  double v_;
};

class Slot final : public Node {
 public:
  explicit Slot(int s) : s_(s) {}
  double eval(Frame& f) override { return static_cast<double>(f.slots[s_]); }
  void eval_row(Frame& f, int s, int64_t n, double* out) override {
    const int64_t v = f.slots[s_];
    const int64_t step = s == s_ ? 1 : 0;
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(v + step * i);
  }

 private:
  int s_;
};

// An affine integer form c + sum(coef * slot).
struct Affine {
  int64_t c = 0;
  std::vector<std::pair<int, int64_t>> terms;  // (slot, coef)

  int64_t at(const int64_t* slots) const {
    int64_t v = c;
    for (const auto& [s, k] : terms) v += k * slots[s];
    return v;
  }
};

// Memoizes a subtree that does not depend on the innermost loop around it: it is re-evaluated
// only when one of the slots it reads changes (this hoists row reductions such as softmax's sum).
class Cached final : public Node {
 public:
  Cached(NodePtr inner, std::vector<int> deps)
      : inner_(std::move(inner)), deps_(std::move(deps)), key_(deps_.size()) {}
  double eval(Frame& f) override {
    if (valid_) {
      bool same = true;
      for (size_t i = 0; i < deps_.size(); ++i) same &= key_[i] == f.slots[deps_[i]];
      if (same) return value_;
    }
    value_ = inner_->eval(f);
    for (size_t i = 0; i < deps_.size(); ++i) key_[i] = f.slots[deps_[i]];
    valid_ = !f.failed;
    return value_;
  }
  void eval_row(Frame& f, int s, int64_t n, double* out) override {
    for (int d : deps_)
      if (d == s) return Node::eval_row(f, s, n, out);
    const double v = eval(f);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }

 private:
  NodePtr inner_;
  std::vector<int> deps_;
  std::vector<int64_t> key_;
  bool valid_ = false;
  double value_ = 0;
};

}  // namespace kf::te::detail
