#include "task/formula.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "support/text_scan.h"

namespace kf {

struct Formula::Node {
  enum class Kind { number, name, neg, add, sub, mul, div, mod, call };
  Kind kind;
  double number = 0;
  std::string name;  // variable or function name
  std::vector<std::shared_ptr<const Node>> args;
  int height = 1;  // of the tree below and including this node
};

namespace {

using Node = Formula::Node;
using NodePtr = std::shared_ptr<const Node>;

// Parses without unbounded recursion: every recursive call goes through a Depth guard, and the
// tree's height (which bounds the recursion of evaluation, names() and destruction) is checked
// as nodes are built, so a formula nested or chained past kMaxFormulaHeight is refused.
class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  Expected<NodePtr> parse_all() {
    auto e = expr();
    if (!e) return e;
    skip_ws();
    if (pos_ != s_.size()) return fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return e;
  }

 private:
  // Counts the parser's own recursion (parentheses, unary minus, call arguments).
  class Depth {
   public:
    explicit Depth(int& d) : d_(++d) {}
    ~Depth() { --d_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    bool too_deep() const { return d_ > kMaxFormulaHeight; }

   private:
    int& d_;
  };

  Status fail(const std::string& what) const {
    return Status::error("column " + std::to_string(pos_ + 1) + ": " + what);
  }
  Status too_deep() const {
    return fail("the formula nests deeper than " + std::to_string(kMaxFormulaHeight) + " levels");
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool digit_at(size_t i) const {
    return i < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i]));
  }
  Expected<NodePtr> make(Node::Kind k, std::vector<NodePtr> args) const {
    auto n = std::make_shared<Node>();
    n->kind = k;
    for (const auto& a : args) n->height = std::max(n->height, a->height + 1);
    n->args = std::move(args);
    if (n->height > kMaxFormulaHeight) return too_deep();
    return NodePtr(n);
  }

  Expected<NodePtr> expr() {
    Depth depth(depth_);
    if (depth.too_deep()) return too_deep();
    auto lhs = term();
    if (!lhs) return lhs;
    NodePtr acc = *lhs;
    for (;;) {
      Node::Kind k;
      if (eat('+')) {
        k = Node::Kind::add;
      } else if (eat('-')) {
        k = Node::Kind::sub;
      } else {
        return acc;
      }
      auto rhs = term();
      if (!rhs) return rhs;
      auto n = make(k, {acc, *rhs});
      if (!n) return n;
      acc = *n;
    }
  }
  Expected<NodePtr> term() {
    auto lhs = unary();
    if (!lhs) return lhs;
    NodePtr acc = *lhs;
    for (;;) {
      Node::Kind k;
      if (eat('*')) {
        k = Node::Kind::mul;
      } else if (eat('/')) {
        k = Node::Kind::div;
      } else if (eat('%')) {
        k = Node::Kind::mod;
      } else {
        return acc;
      }
      auto rhs = unary();
      if (!rhs) return rhs;
      auto n = make(k, {acc, *rhs});
      if (!n) return n;
      acc = *n;
    }
  }
  Expected<NodePtr> unary() {
    if (eat('-')) {
      Depth depth(depth_);
      if (depth.too_deep()) return too_deep();
      auto a = unary();
      if (!a) return a;
      return make(Node::Kind::neg, {*a});
    }
    return atom();
  }
  // DIGITS ['.' DIGITS] [('e'|'E') ['+'|'-'] DIGITS], at least one mantissa digit; decimal only.
  Expected<NodePtr> number() {
    const size_t start = pos_;
    while (digit_at(pos_)) ++pos_;
    bool mantissa = pos_ > start;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      mantissa |= digit_at(pos_);
      while (digit_at(pos_)) ++pos_;
    }
    if (!mantissa) {
      pos_ = start;
      return fail("malformed number '" + s_.substr(start, 1) + "' (a number needs a digit)");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t e = pos_ + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
      if (digit_at(e)) {
        pos_ = e;
        while (digit_at(pos_)) ++pos_;
      }
    }
    const std::string text = s_.substr(start, pos_ - start);
    errno = 0;
    const double v = std::strtod(text.c_str(), nullptr);
    if (errno == ERANGE || !std::isfinite(v)) {
      pos_ = start;
      return fail("number '" + text + "' is out of range");
    }
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::number;
    n->number = v;
    return NodePtr(n);
  }
  Expected<NodePtr> atom() {
    skip_ws();
    if (pos_ >= s_.size()) return fail("expected a number, a name or '('");
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      auto e = expr();
      if (!e) return e;
      if (!eat(')')) return fail("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      auto n = std::make_shared<Node>();
      n->name = s_.substr(start, pos_ - start);
      if (!eat('(')) {
        n->kind = Node::Kind::name;
        return NodePtr(n);
      }
      if (n->name != "min" && n->name != "max" && n->name != "ceildiv") {
        pos_ = start;
        return fail("unknown function '" + n->name + "' (expected min, max or ceildiv)");
      }
      std::vector<NodePtr> args;
      do {
        auto a = expr();
        if (!a) return a;
        args.push_back(*a);
      } while (eat(','));
      if (!eat(')')) return fail("expected ')' or ','");
      if (args.size() != 2) return fail(n->name + " takes 2 arguments");
      auto call = make(Node::Kind::call, std::move(args));
      if (!call) return call;
      auto named = std::make_shared<Node>(**call);
      named->name = n->name;
      return NodePtr(named);
    }
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

void collect_names(const Node& n, std::set<std::string>& out) {
  if (n.kind == Node::Kind::name) out.insert(n.name);
  for (const auto& a : n.args) collect_names(*a, out);
}

// 2^53: integers up to this size are exact in double, so integer arithmetic stays exact.
constexpr double kMaxExactInteger = 9007199254740992.0;

double apply(const Node& n, const std::vector<double>& v, bool integer) {
  switch (n.kind) {
    case Node::Kind::number:
    case Node::Kind::name:
      return 0;  // leaves are handled by evaluate
    case Node::Kind::neg:
      return -v[0];
    case Node::Kind::add:
      return v[0] + v[1];
    case Node::Kind::sub:
      return v[0] - v[1];
    case Node::Kind::mul:
      return v[0] * v[1];
    case Node::Kind::div:
      return integer ? std::trunc(v[0] / v[1]) : v[0] / v[1];
    case Node::Kind::mod:
      return std::fmod(v[0], v[1]);
    case Node::Kind::call:
      if (n.name == "min") return std::min(v[0], v[1]);
      if (n.name == "max") return std::max(v[0], v[1]);
      return std::ceil(v[0] / v[1]);
  }
  return 0;
}

// Evaluates in double; `integer` makes division integral and keeps every intermediate value
// within 2^53 (where double is exact). Every value must stay finite: an overflow is an error,
// never an infinity that later passes a size check. Recursion is bounded by the tree's height
// (kMaxFormulaHeight, checked by the parser).
Expected<double> evaluate(const Node& n, const Bindings& env, bool integer,
                          const std::string& text) {
  if (n.kind == Node::Kind::number) return n.number;
  if (n.kind == Node::Kind::name) {
    auto it = env.find(n.name);
    if (it == env.end()) return Status::error("unknown name '" + n.name + "'");
    if (!std::isfinite(it->second)) return Status::error("'" + n.name + "' is not a finite number");
    return it->second;
  }
  std::vector<double> v;
  for (const auto& a : n.args) {
    auto r = evaluate(*a, env, integer, text);
    if (!r) return r;
    v.push_back(*r);
  }
  const bool divides = n.kind == Node::Kind::div || n.kind == Node::Kind::mod ||
                       (n.kind == Node::Kind::call && n.name == "ceildiv");
  if (divides && v[1] == 0) return Status::error("division by zero");
  const double r = apply(n, v, integer);
  if (!std::isfinite(r))
    return Status::error("'" + excerpt(text) + "' overflows (a value beyond 1e308)");
  if (integer && std::abs(r) > kMaxExactInteger)
    return Status::error("'" + excerpt(text) +
                         "' exceeds 2^53 (9007199254740992) in integer arithmetic");
  return r;
}

}  // namespace

Expected<Formula> Formula::parse(const std::string& text) {
  Parser p(text);
  auto root = p.parse_all();
  if (!root) return root.error();
  Formula f;
  f.text_ = text;
  f.root_ = *root;
  return f;
}

Formula Formula::constant(int64_t v) {
  return *parse(std::to_string(v));
}

std::set<std::string> Formula::names() const {
  std::set<std::string> out;
  collect_names(*root_, out);
  return out;
}

Expected<int64_t> Formula::eval_int(const Bindings& env) const {
  auto r = evaluate(*root_, env, true, text_);
  if (!r) return r.error();
  if (std::trunc(*r) != *r || std::abs(*r) > kMaxExactInteger)
    return Status::error("'" + excerpt(text_) + "' is not an integer (" + std::to_string(*r) + ")");
  return static_cast<int64_t>(*r);
}

Expected<double> Formula::eval(const Bindings& env) const {
  return evaluate(*root_, env, false, text_);
}

}  // namespace kf
