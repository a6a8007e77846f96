#include "ir/ir_printer.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "ir/ir_visitor.h"

namespace kf::ir {
namespace {

// Binding strength of an expression at its top, for parenthesization (higher binds tighter).
int precedence(BinOp op) {
  switch (op) {
    case BinOp::mul:
    case BinOp::div:
    case BinOp::mod:
      return 5;
    case BinOp::add:
    case BinOp::sub:
      return 4;
    case BinOp::lt:
    case BinOp::le:
    case BinOp::gt:
    case BinOp::ge:
      return 3;
    case BinOp::eq:
    case BinOp::ne:
      return 2;
    case BinOp::logical_and:
      return 1;
    case BinOp::logical_or:
      return 0;
    case BinOp::min:
    case BinOp::max:
      return 10;
  }
  return 10;
}

int precedence(const Expr& e) {
  const Binary* b = e.as<Binary>();
  return b ? precedence(b->op) : 10;  // atoms, calls, loads bind tightest
}

std::string binop_symbol(BinOp op) {
  switch (op) {
    case BinOp::add:
      return " + ";
    case BinOp::sub:
      return " - ";
    case BinOp::mul:
      return "*";
    case BinOp::div:
      return "/";
    case BinOp::mod:
      return " % ";
    case BinOp::min:
      return "min";
    case BinOp::max:
      return "max";
    case BinOp::eq:
      return " == ";
    case BinOp::ne:
      return " != ";
    case BinOp::lt:
      return " < ";
    case BinOp::le:
      return " <= ";
    case BinOp::gt:
      return " > ";
    case BinOp::ge:
      return " >= ";
    case BinOp::logical_and:
      return " && ";
    case BinOp::logical_or:
      return " || ";
  }
  return "?";
}

std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (static_cast<double>(std::strtod(buf, nullptr)) != v) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    s = buf;
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

class Printer : public IRVisitor {
 public:
  explicit Printer(int indent) : indent_(indent) {}
  std::string str() const { return os_.str(); }

  void print_child(const Expr& child, int parent_prec, bool right) {
    int p = precedence(child);
    bool parens = p < parent_prec || (right && p == parent_prec);
    if (parens) os_ << "(";
    visit(child);
    if (parens) os_ << ")";
  }

 protected:
  void visit_int_imm(const IntImm* op) override {
    switch (op->type.kind()) {
      case ScalarKind::i64:
        os_ << op->value;
        return;
      case ScalarKind::boolean:
        os_ << (op->value ? "true" : "false");
        return;
      case ScalarKind::i32:
      case ScalarKind::f32:
      case ScalarKind::f64:
      case ScalarKind::bf16:
        os_ << to_string(op->type) << "(" << op->value << ")";
        return;
    }
  }
  void visit_float_imm(const FloatImm* op) override {
    switch (op->type.kind()) {
      case ScalarKind::f32:
        os_ << float_text(op->value) << (std::isfinite(op->value) ? "f" : "");
        return;
      case ScalarKind::f64:
        os_ << float_text(op->value);
        return;
      case ScalarKind::bf16:
      case ScalarKind::i32:
      case ScalarKind::i64:
      case ScalarKind::boolean:
        os_ << to_string(op->type) << "(" << float_text(op->value) << ")";
        return;
    }
  }
  void visit_var(const Var* op) override { os_ << op->name; }
  void visit_cast(const Cast* op) override {
    os_ << to_string(op->type) << "(";
    visit(op->value);
    os_ << ")";
  }
  void visit_binary(const Binary* op) override {
    if (op->op == BinOp::min || op->op == BinOp::max) {
      os_ << binop_symbol(op->op) << "(";
      visit(op->a);
      os_ << ", ";
      visit(op->b);
      os_ << ")";
      return;
    }
    int p = precedence(op->op);
    print_child(op->a, p, false);
    os_ << binop_symbol(op->op);
    print_child(op->b, p, true);  // a - (b + c), a/(b*c): the right side keeps its parentheses
  }
  void visit_not(const Not* op) override {
    os_ << "!";
    print_child(op->a, 10, false);
  }
  void visit_select(const Select* op) override {
    os_ << "select(";
    visit(op->condition);
    os_ << ", ";
    visit(op->true_value);
    os_ << ", ";
    visit(op->false_value);
    os_ << ")";
  }
  void visit_load(const Load* op) override {
    os_ << op->buffer << "[";
    visit(op->index);
    os_ << "]";
    if (op->predicate.defined()) {
      os_ << " if ";
      print_child(op->predicate, 10, false);
    }
  }
  void visit_call(const Call* op) override {
    os_ << to_string(op->fn) << (op->approx ? "~(" : "(");
    for (size_t i = 0; i < op->args.size(); ++i) {
      if (i) os_ << ", ";
      visit(op->args[i]);
    }
    os_ << ")";
  }
  void visit_ramp(const Ramp* op) override {
    os_ << "ramp(";
    visit(op->base);
    os_ << ", ";
    visit(op->stride);
    os_ << ", " << op->lanes << ")";
  }
  void visit_broadcast(const Broadcast* op) override {
    os_ << "x" << op->lanes << "(";
    visit(op->value);
    os_ << ")";
  }
  void visit_vector_reduce(const VectorReduce* op) override {
    os_ << "reduce_" << to_string(op->op) << "(";
    visit(op->value);
    os_ << ")";
  }
  void visit_let(const Let* op) override {
    os_ << "(let " << op->name << " = ";
    visit(op->value);
    os_ << " in ";
    visit(op->body);
    os_ << ")";
  }

  void visit_for(const For* op) override {
    line_start();
    if (op->for_kind != ForKind::serial) os_ << to_string(op->for_kind) << " ";
    os_ << "for (" << op->name << ", ";
    visit(op->min);
    os_ << ", ";
    visit(op->extent);
    os_ << ") {\n";
    nested(op->body);
    line_start();
    os_ << "}\n";
  }
  void visit_block(const Block* op) override {
    for (const Stmt& s : op->stmts) visit(s);
  }
  void visit_store(const Store* op) override {
    line_start();
    os_ << op->buffer << "[";
    visit(op->index);
    os_ << "] = ";
    visit(op->value);
    if (op->predicate.defined()) {
      os_ << " if ";
      print_child(op->predicate, 10, false);
    }
    os_ << "\n";
  }
  void visit_allocate(const Allocate* op) override {
    line_start();
    os_ << "allocate " << op->name << ": " << to_string(op->element_type) << "[";
    visit(op->extent);
    os_ << "] on " << to_string(op->memory) << " {\n";
    nested(op->body);
    line_start();
    os_ << "}\n";
  }
  void visit_if_then_else(const IfThenElse* op) override {
    line_start();
    os_ << "if (";
    visit(op->condition);
    os_ << ") {\n";
    nested(op->then_case);
    if (op->else_case.defined()) {
      line_start();
      os_ << "} else {\n";
      nested(op->else_case);
    }
    line_start();
    os_ << "}\n";
  }
  void visit_let_stmt(const LetStmt* op) override {
    line_start();
    os_ << "let " << op->name << " = ";
    visit(op->value);
    os_ << "\n";
    visit(op->body);
  }
  void visit_evaluate(const Evaluate* op) override {
    line_start();
    os_ << "evaluate(";
    visit(op->value);
    os_ << ")\n";
  }
  void visit_producer_consumer(const ProducerConsumer* op) override {
    line_start();
    os_ << (op->is_producer ? "produce " : "consume ") << op->name << " {\n";
    nested(op->body);
    line_start();
    os_ << "}\n";
  }
  void visit_comment(const Comment* op) override {
    line_start();
    os_ << "// " << op->text << "\n";
  }
  void visit_prefetch(const Prefetch* op) override {
    line_start();
    os_ << "prefetch " << op->buffer << "[";
    visit(op->index);
    os_ << "]\n";
  }
  void visit_transpose_block(const TransposeBlock* op) override {
    line_start();
    os_ << "transpose " << op->lanes << "x" << op->lanes << " " << to_string(op->type) << " "
        << op->dst << "[";
    visit(op->dst_index);
    os_ << " + r*";
    visit(op->dst_stride);
    os_ << " + c] = " << op->src << "[";
    visit(op->src_index);
    os_ << " + c*";
    visit(op->src_stride);
    os_ << " + r]\n";
  }

 private:
  void line_start() { os_ << std::string(static_cast<size_t>(indent_) * 2, ' '); }
  void nested(const Stmt& s) {
    ++indent_;
    visit(s);
    --indent_;
  }

  int indent_;
  std::ostringstream os_;
};

}  // namespace

std::string to_string(const Expr& e) {
  if (!e.defined()) return "<undefined>";
  Printer p(0);
  p.visit(e);
  return p.str();
}

std::string to_string(const Stmt& s, int indent) {
  if (!s.defined()) return "<undefined>\n";
  Printer p(indent);
  p.visit(s);
  return p.str();
}

std::string to_string(const LoweredFunc& f) {
  std::ostringstream os;
  os << "func " << f.name << "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    if (i) os << ", ";
    os << p.name << ": " << to_string(p.type);
    switch (p.kind) {
      case ParamKind::input:
        os << "* input";
        break;
      case ParamKind::output:
        os << "* output";
        break;
      case ParamKind::dim:
      case ParamKind::scalar:
        break;
    }
  }
  os << ") {\n" << to_string(f.body, 1) << "}\n";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  return os << to_string(e);
}
std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  return os << to_string(s);
}

}  // namespace kf::ir
