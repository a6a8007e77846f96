#include "task/formula.h"

#include <cctype>
#include <cmath>
#include <vector>

namespace kf {

struct Formula::Node {
  enum class Kind { number, name, neg, add, sub, mul, div, mod, call };
  Kind kind;
  double number = 0;
  std::string name;  // variable or function name
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using Node = Formula::Node;
using NodePtr = std::shared_ptr<const Node>;

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
  Status fail(const std::string& what) const {
    return Status::error("column " + std::to_string(pos_ + 1) + ": " + what);
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
  static NodePtr make(Node::Kind k, std::vector<NodePtr> args) {
    auto n = std::make_shared<Node>();
    n->kind = k;
    n->args = std::move(args);
    return n;
  }

  Expected<NodePtr> expr() {
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
      acc = make(k, {acc, *rhs});
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
      acc = make(k, {acc, *rhs});
    }
  }
  Expected<NodePtr> unary() {
    if (eat('-')) {
      auto a = unary();
      if (!a) return a;
      return make(Node::Kind::neg, {*a});
    }
    return atom();
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
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t used = 0;
      double v = std::stod(s_.substr(pos_), &used);
      pos_ += used;
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::number;
      n->number = v;
      return NodePtr(n);
    }
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
      n->kind = Node::Kind::call;
      do {
        auto a = expr();
        if (!a) return a;
        n->args.push_back(*a);
      } while (eat(','));
      if (!eat(')')) return fail("expected ')' or ','");
      if (n->args.size() != 2) return fail(n->name + " takes 2 arguments");
      return NodePtr(n);
    }
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& s_;
  size_t pos_ = 0;
};

void collect_names(const Node& n, std::set<std::string>& out) {
  if (n.kind == Node::Kind::name) out.insert(n.name);
  for (const auto& a : n.args) collect_names(*a, out);
}

// Evaluates in double; `integer` makes division integral and checks operands are integers.
Expected<double> evaluate(const Node& n, const Bindings& env, bool integer) {
  std::vector<double> v;
  for (const auto& a : n.args) {
    auto r = evaluate(*a, env, integer);
    if (!r) return r;
    v.push_back(*r);
  }
  switch (n.kind) {
    case Node::Kind::number: return n.number;
    case Node::Kind::name: {
      auto it = env.find(n.name);
      if (it == env.end()) return Status::error("unknown name '" + n.name + "'");
      return it->second;
    }
    case Node::Kind::neg: return -v[0];
    case Node::Kind::add: return v[0] + v[1];
    case Node::Kind::sub: return v[0] - v[1];
    case Node::Kind::mul: return v[0] * v[1];
    case Node::Kind::div:
      if (v[1] == 0) return Status::error("division by zero");
      return integer ? std::trunc(v[0] / v[1]) : v[0] / v[1];
    case Node::Kind::mod:
      if (v[1] == 0) return Status::error("division by zero");
      return std::fmod(v[0], v[1]);
    case Node::Kind::call:
      if (n.name == "min") return std::min(v[0], v[1]);
      if (n.name == "max") return std::max(v[0], v[1]);
      if (v[1] == 0) return Status::error("division by zero");
      return std::ceil(v[0] / v[1]);
  }
  return Status::error("bad formula node");
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

Formula Formula::constant(int64_t v) { return *parse(std::to_string(v)); }

std::set<std::string> Formula::names() const {
  std::set<std::string> out;
  collect_names(*root_, out);
  return out;
}

Expected<int64_t> Formula::eval_int(const Bindings& env) const {
  auto r = evaluate(*root_, env, true);
  if (!r) return r.error();
  if (std::trunc(*r) != *r || std::abs(*r) > 9.0e15)
    return Status::error("'" + text_ + "' is not an integer (" + std::to_string(*r) + ")");
  return static_cast<int64_t>(*r);
}

Expected<double> Formula::eval(const Bindings& env) const { return evaluate(*root_, env, false); }

}  // namespace kf
