// Size and cost formulas: small integer/float expressions over a task's dims and scalars.
//
//   Expected<Formula> f = Formula::parse("(H + 2*P - R) / S + 1");
//   Expected<int64_t> oh = f->eval_int({{"H", 32}, {"P", 1}, {"R", 3}, {"S", 1}});
//
// Grammar: expr := term (('+'|'-') term)*; term := unary (('*'|'/'|'%') unary)*;
// unary := '-' unary | atom; atom := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'.
// Functions: min, max, ceildiv. Integer division truncates toward zero. Numbers are decimal
// (`12`, `2.5`, `1e-6`).
//
// Formulas come from task.toml, which kforge treats as untrusted text: parsing refuses nesting
// or operator chains deeper than kMaxFormulaHeight and numbers beyond double's range, and
// evaluation fails (never returns inf or NaN) when a value overflows, so a size or cost computed
// from a formula is always a finite number or an error.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "support/status.h"

namespace kf {

using Bindings = std::map<std::string, double>;

// The deepest expression tree a formula may have (parentheses, unary minus and each operator of
// a chain such as `1 + 1 + ... + 1` add a level).
inline constexpr int kMaxFormulaHeight = 100;

class Formula {
 public:
  struct Node;

  // On error the message starts with "column N: " (1-based, within `text`): a syntax error, a
  // malformed or out-of-range number, or nesting deeper than kMaxFormulaHeight.
  static Expected<Formula> parse(const std::string& text);
  static Formula constant(int64_t v);

  const std::string& text() const { return text_; }
  // Every name the formula reads.
  std::set<std::string> names() const;

  // Integer evaluation; fails on unknown names, division by zero, non-integer values, and any
  // value (intermediate or final) beyond 2^53, where double stops being exact.
  Expected<int64_t> eval_int(const Bindings& env) const;
  // Floating evaluation (FLOP and byte counts); fails on unknown names, division by zero, a
  // binding that is not finite, and overflow.
  Expected<double> eval(const Bindings& env) const;

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

}  // namespace kf
