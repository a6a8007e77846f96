// Size and cost formulas: small integer/float expressions over a task's dims and scalars.
//
//   Expected<Formula> f = Formula::parse("(H + 2*P - R) / S + 1");
//   Expected<int64_t> oh = f->eval_int({{"H", 32}, {"P", 1}, {"R", 3}, {"S", 1}});
//
// Grammar: expr := term (('+'|'-') term)*; term := unary (('*'|'/'|'%') unary)*;
// unary := '-' unary | atom; atom := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'.
// Functions: min, max, ceildiv. Integer division truncates toward zero.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "support/status.h"

namespace kf {

using Bindings = std::map<std::string, double>;

class Formula {
 public:
  struct Node;

  // On error the message starts with "column N: " (1-based, within `text`).
  static Expected<Formula> parse(const std::string& text);
  static Formula constant(int64_t v);

  const std::string& text() const { return text_; }
  // Every name the formula reads.
  std::set<std::string> names() const;

  // Integer evaluation; fails on unknown names, division by zero, non-integer values.
  Expected<int64_t> eval_int(const Bindings& env) const;
  // Floating evaluation (FLOP and byte counts).
  Expected<double> eval(const Bindings& env) const;

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

}  // namespace kf
