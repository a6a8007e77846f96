// The TE recursive-descent parser (see parser.h for the grammar).
#include "te/parser.h"

#include <limits>
#include <optional>

#include "te/lexer.h"

namespace kf::te {
namespace {

struct FuncInfo {
  std::string_view name;
  Op op;
  DType cast_to;
};

constexpr FuncInfo kFuncs[] = {
    {"exp", Op::exp, DType::f64},         {"log", Op::log, DType::f64},
    {"sqrt", Op::sqrt, DType::f64},       {"rsqrt", Op::rsqrt, DType::f64},
    {"tanh", Op::tanh, DType::f64},       {"erf", Op::erf, DType::f64},
    {"sigmoid", Op::sigmoid, DType::f64}, {"abs", Op::abs, DType::f64},
    {"floor", Op::floor, DType::f64},     {"ceil", Op::ceil, DType::f64},
    {"min", Op::min, DType::f64},         {"max", Op::max, DType::f64},
    {"pow", Op::pow, DType::f64},         {"ceildiv", Op::ceildiv, DType::f64},
    {"select", Op::select, DType::f64},   {"f32", Op::cast, DType::f32},
    {"f64", Op::cast, DType::f64},        {"bf16", Op::cast, DType::bf16},
    {"i32", Op::cast, DType::i32},        {"i64", Op::cast, DType::i64},
};

std::optional<FuncInfo> find_func(std::string_view name) {
  for (const FuncInfo& f : kFuncs)
    if (f.name == name) return f;
  return std::nullopt;
}

std::optional<ReduceOp> find_reduce(std::string_view name) {
  if (name == "sum") return ReduceOp::sum;
  if (name == "prod") return ReduceOp::prod;
  if (name == "max") return ReduceOp::max;
  if (name == "min") return ReduceOp::min;
  if (name == "argmax") return ReduceOp::argmax;
  if (name == "argmin") return ReduceOp::argmin;
  if (name == "logsumexp") return ReduceOp::logsumexp;
  return std::nullopt;
}

bool reserved(std::string_view name) {
  return name == "in" || name == "else" || name == "inf";
}

// Recursion and tree height are bounded (kMaxExprHeight, parser.h): every recursive path goes
// through unary(), which counts its depth, and `height_` carries the height of the expression a
// parsing function just returned, checked as each node is built. A tree past the limit is never
// built, so nothing downstream (checks, interpreter, lowering, destruction) recurses deeper.
class Parser {
 public:
  Parser(std::vector<Token> toks, const std::string& file) : t_(std::move(toks)), file_(file) {}

  Expected<Ast> spec() {
    Ast ast;
    ast.file = file_;
    ast.start = peek().loc;
    while (peek().kind != TokenKind::end) {
      if (ast.statements.size() == kMaxStatements)
        return error_at(file_, peek().loc,
                        "a spec has at most " + std::to_string(kMaxStatements) + " statements");
      auto st = statement();
      if (!st) return st.error();
      ast.statements.push_back(std::move(*st));
    }
    return ast;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  const Token& take() {
    const Token& t = t_[pos_];
    if (pos_ + 1 < t_.size()) ++pos_;
    return t;
  }
  bool at(TokenKind k) const { return peek().kind == k; }
  bool at_word(std::string_view w) const { return at(TokenKind::ident) && peek().text == w; }
  bool eat(TokenKind k) {
    if (!at(k)) return false;
    take();
    return true;
  }
  Status fail(const std::string& expected) const {
    return error_at(file_, peek().loc, "expected " + expected + ", got " + describe(peek()));
  }
  Status expect(TokenKind k, const std::string& what) {
    if (eat(k)) return ok_status();
    return fail(what);
  }
  Status too_many(const std::string& what) const {
    return error_at(file_, peek().loc,
                    "at most " + std::to_string(kMaxRank) + " " + what + " are allowed");
  }
  Status too_deep() const {
    return error_at(file_, peek().loc,
                    "the expression nests deeper than " + std::to_string(kMaxExprHeight) +
                        " levels (parentheses, operators, calls)");
  }
  // Sets height_ to that of a new node over children of height `children`; false past the limit.
  bool grow(int children) {
    height_ = children + 1;
    return height_ <= kMaxExprHeight;
  }
  class Depth {
   public:
    explicit Depth(int& d) : d_(++d) {}
    ~Depth() { --d_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    bool too_deep() const { return d_ > kMaxExprHeight; }

   private:
    int& d_;
  };

  Expected<Statement> statement() {
    Statement st;
    if (!at(TokenKind::ident) || reserved(peek().text))
      return fail("a tensor name starting a statement such as 'C[i, j] = ...'");
    st.loc = peek().loc;
    st.target = take().text;
    KF_RETURN_IF_ERROR(
        expect(TokenKind::lbracket, "'[' after the tensor name '" + st.target + "'"));
    if (!at(TokenKind::rbracket)) {
      for (;;) {
        auto d = var_decl("an index variable name");
        if (!d) return d.error();
        st.lhs.push_back(std::move(*d));
        if (st.lhs.size() > kMaxRank) return too_many("index variables on a left-hand side");
        if (eat(TokenKind::comma)) continue;
        break;
      }
    }
    KF_RETURN_IF_ERROR(expect(TokenKind::rbracket, "',' or ']' in the left-hand side"));
    KF_RETURN_IF_ERROR(expect(TokenKind::assign, "'=' after the left-hand side"));
    auto body = expr();
    if (!body) return body.error();
    st.body = std::move(*body);
    const int last_line = t_[pos_ - 1].loc.line;
    if (!at(TokenKind::end) && peek().loc.line == last_line)
      return fail("an operator or the end of the line");
    return st;
  }

  // IDENT ['in' add '..' add]
  Expected<VarDecl> var_decl(const std::string& what) {
    if (!at(TokenKind::ident) || reserved(peek().text)) return fail(what);
    VarDecl d;
    d.loc = peek().loc;
    d.name = take().text;
    if (!at_word("in")) return d;
    take();
    auto lo = add();
    if (!lo) return lo.error();
    const int lo_height = height_;
    KF_RETURN_IF_ERROR(expect(TokenKind::dotdot, "'..' in the range 'LO..HI' of '" + d.name + "'"));
    auto hi = add();
    if (!hi) return hi.error();
    height_ = std::max(lo_height, height_);
    d.bounds.push_back(std::move(*lo));
    d.bounds.push_back(std::move(*hi));
    return d;
  }

  static Expr call(Op op, SourceLoc loc, std::vector<Expr> args) {
    Expr e;
    e.kind = ExprKind::call;
    e.op = op;
    e.loc = loc;
    e.name = op_name(op);
    e.args = std::move(args);
    return e;
  }

  using Level = Expected<Expr> (Parser::*)();
  // One left-associative binary level: next (OP next)*.
  Expected<Expr> binary(Level next, std::initializer_list<std::pair<TokenKind, Op>> ops,
                        bool chain) {
    auto lhs = (this->*next)();
    if (!lhs) return lhs;
    Expr acc = std::move(*lhs);
    for (;;) {
      std::optional<Op> op;
      for (const auto& [k, o] : ops)
        if (at(k)) op = o;
      if (!op) return acc;
      const SourceLoc loc = take().loc;
      const int acc_height = height_;
      auto rhs = (this->*next)();
      if (!rhs) return rhs;
      if (!grow(std::max(acc_height, height_))) return too_deep();
      acc = call(*op, loc, {std::move(acc), std::move(*rhs)});
      if (!chain) {
        for (const auto& [k, o] : ops)
          if (at(k)) return fail("parentheses: comparisons do not chain");
        return acc;
      }
    }
  }

  // (public for parse_expression)
 public:
  // A whole text that is one expression.
  Expected<Expr> lone_expr() {
    auto e = expr();
    if (!e) return e;
    if (!at(TokenKind::end)) return fail("an operator or the end of the expression");
    return e;
  }

 private:
  Expected<Expr> expr() {
    return binary(&Parser::logic_and, {{TokenKind::or_, Op::logical_or}}, true);
  }
  Expected<Expr> logic_and() {
    return binary(&Parser::compare, {{TokenKind::and_, Op::logical_and}}, true);
  }
  Expected<Expr> compare() {
    return binary(&Parser::add,
                  {{TokenKind::lt, Op::lt},
                   {TokenKind::le, Op::le},
                   {TokenKind::gt, Op::gt},
                   {TokenKind::ge, Op::ge},
                   {TokenKind::eq, Op::eq},
                   {TokenKind::ne, Op::ne}},
                  false);
  }
  Expected<Expr> add() {
    return binary(&Parser::mul, {{TokenKind::plus, Op::add}, {TokenKind::minus, Op::sub}}, true);
  }
  Expected<Expr> mul() {
    return binary(
        &Parser::unary,
        {{TokenKind::star, Op::mul}, {TokenKind::slash, Op::div}, {TokenKind::percent, Op::mod}},
        true);
  }

  Expected<Expr> unary() {
    Depth depth(depth_);
    if (depth.too_deep()) return too_deep();
    if (at(TokenKind::minus) || at(TokenKind::not_)) {
      const Token op = take();
      auto operand = unary();
      if (!operand) return operand;
      if (op.kind == TokenKind::minus && operand->kind == ExprKind::number) {
        operand->number = -operand->number;  // fold "-2", "-inf" into a literal
        operand->loc = op.loc;
        return operand;
      }
      if (!grow(height_)) return too_deep();
      return call(op.kind == TokenKind::minus ? Op::neg : Op::logical_not, op.loc,
                  {std::move(*operand)});
    }
    return postfix();
  }

  Expected<Expr> postfix() {
    if (!(at(TokenKind::ident) && peek(1).kind == TokenKind::lbracket)) return primary();
    Expr e;
    e.kind = ExprKind::access;
    e.loc = peek().loc;
    e.name = take().text;
    take();  // '['
    int children = 0;
    if (!at(TokenKind::rbracket)) {
      for (;;) {
        auto idx = expr();
        if (!idx) return idx;
        children = std::max(children, height_);
        e.args.push_back(std::move(*idx));
        if (e.args.size() > kMaxRank) return too_many("indices in an access");
        if (!eat(TokenKind::comma)) break;
      }
    }
    KF_RETURN_IF_ERROR(
        expect(TokenKind::rbracket, "',' or ']' after an index of '" + e.name + "'"));
    if (at_word("else")) {
      take();
      auto v = unary();
      if (!v) return v;
      children = std::max(children, height_);
      e.args.push_back(std::move(*v));
      e.has_else = true;
    }
    if (!grow(children)) return too_deep();
    return e;
  }

  // True when the tokens after the '(' at peek(k) read "IDENT [in ...] (, IDENT [in ...])* :"
  // (a reduction).
  bool looks_like_reduction(size_t k) const {
    for (;;) {
      if (peek(k + 1).kind != TokenKind::ident) return false;
      const TokenKind next = peek(k + 2).kind;
      if (next == TokenKind::colon) return true;
      if (next == TokenKind::ident && peek(k + 2).text == "in") return true;
      if (next != TokenKind::comma) return false;
      k += 2;
    }
  }

  Expected<Expr> primary() {
    const Token& t = peek();
    height_ = 1;  // a leaf, unless a branch below says otherwise
    if (t.kind == TokenKind::integer || t.kind == TokenKind::floating) {
      Expr e;
      e.kind = ExprKind::number;
      e.loc = t.loc;
      e.number = t.value;
      e.type = t.kind == TokenKind::integer ? ValueType::i64 : ValueType::f64;
      take();
      return e;
    }
    if (t.kind == TokenKind::lparen) {
      take();
      auto e = expr();
      if (!e) return e;
      KF_RETURN_IF_ERROR(expect(TokenKind::rparen, "')'"));
      return e;
    }
    if (t.kind != TokenKind::ident || t.text == "in" || t.text == "else")
      return fail("an expression");
    if (t.text == "inf") {
      Expr e;
      e.kind = ExprKind::number;
      e.loc = take().loc;
      e.number = std::numeric_limits<double>::infinity();
      e.type = ValueType::f64;
      return e;
    }
    if (peek(1).kind != TokenKind::lparen) {
      Expr e;
      e.kind = ExprKind::name;
      e.loc = t.loc;
      e.name = take().text;
      return e;
    }
    const std::optional<ReduceOp> red = find_reduce(t.text);
    const std::optional<FuncInfo> fn = find_func(t.text);
    if (red && (!fn || looks_like_reduction(1))) return reduction(*red);
    if (!fn)
      return error_at(file_, t.loc,
                      "unknown function '" + t.text +
                          "'; expected one of "
                          "exp log sqrt rsqrt tanh erf sigmoid abs floor ceil min "
                          "max pow ceildiv select f32 f64 bf16 i32 i64, or a "
                          "reduction sum prod max min argmax argmin");
    const Token name = take();
    take();  // '('
    std::vector<Expr> args;
    int children = 0;
    if (!at(TokenKind::rparen)) {
      for (;;) {
        auto a = expr();
        if (!a) return a;
        children = std::max(children, height_);
        args.push_back(std::move(*a));
        if (!eat(TokenKind::comma)) break;
      }
    }
    KF_RETURN_IF_ERROR(
        expect(TokenKind::rparen, "',' or ')' in the arguments of '" + name.text + "'"));
    const int arity = op_arity(fn->op);
    if (static_cast<int>(args.size()) != arity)
      return error_at(file_, name.loc,
                      "'" + name.text + "' expects " + std::to_string(arity) + " argument" +
                          (arity == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
    if (!grow(children)) return too_deep();
    Expr e = call(fn->op, name.loc, std::move(args));
    e.name = name.text;
    e.cast_to = fn->cast_to;
    return e;
  }

  Expected<Expr> reduction(ReduceOp op) {
    Expr e;
    e.kind = ExprKind::reduce;
    e.reduce_op = op;
    e.loc = peek().loc;
    e.name = take().text;
    take();  // '('
    int children = 0;
    for (;;) {
      const std::string what = "a reduction variable name in '" + e.name + "(VARS: BODY)'";
      if (peek(1).kind == TokenKind::lbracket || peek(1).kind == TokenKind::lparen)
        return fail(what);
      height_ = 0;
      auto d = var_decl(what);
      if (!d) return d.error();
      children = std::max(children, height_);  // of its bounds
      e.decls.push_back(std::move(*d));
      if (e.decls.size() > kMaxRank) return too_many("variables in a reduction");
      if (!eat(TokenKind::comma)) break;
    }
    KF_RETURN_IF_ERROR(
        expect(TokenKind::colon, "',' or ':' after the reduction variables of '" + e.name + "'"));
    auto body = expr();
    if (!body) return body;
    children = std::max(children, height_);
    e.args.push_back(std::move(*body));
    KF_RETURN_IF_ERROR(expect(TokenKind::rparen, "')' closing '" + e.name + "('"));
    if (!grow(children)) return too_deep();
    return e;
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  const std::string& file_;
  int depth_ = 0;   // nesting of unary() calls
  int height_ = 0;  // of the expression the last parsing function returned
};

}  // namespace

Expected<Ast> parse(std::string_view text, const std::string& file, int first_line) {
  auto toks = lex(text, file, first_line);
  if (!toks) return toks.error();
  Parser p(std::move(*toks), file);
  auto ast = p.spec();
  if (ast) ast->start = {first_line, 1};
  return ast;
}

Expected<Expr> parse_expression(std::string_view text, const std::string& file, int first_line) {
  auto toks = lex(text, file, first_line);
  if (!toks) return toks.error();
  Parser p(std::move(*toks), file);
  return p.lone_expr();
}

}  // namespace kf::te
