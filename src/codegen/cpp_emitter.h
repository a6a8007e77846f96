// The C++ emitter behind codegen_cpp (internal to src/codegen): one instance per function.
// Expressions are printed as C++ expressions with the fewest parentheses C++ precedence allows
// (cpp_emitter_expr.cpp); statements as indented lines (codegen_cpp.cpp). Helpers and vector
// typedefs come from CppPrelude.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/codegen_cpp.h"
#include "codegen/cpp_prelude.h"

namespace kf {

class CppEmitter {
 public:
  CppEmitter(const ir::LoweredFunc& f, CodegenTarget target, const CodegenOptions& options = {});
  std::string run();
  // Stages timed by the stage timers (CodegenOptions), in slot order; filled by run().
  const std::vector<std::string>& timed_stages() const { return timed_stages_; }

 private:
  // How a buffer is stored: its storage kind, element type (a vector for vector-element
  // allocations), and for register-promoted stack buffers the promoted lane count.
  struct BufferInfo {
    ir::ScalarKind storage = ir::ScalarKind::f32;
    ir::Type element;
    int promoted_lanes = 0;
  };

  // --- expressions (cpp_emitter_expr.cpp) ---
  // `e` as C++; parenthesized when its precedence is below min_prec.
  std::string expr(const ir::Expr& e, int min_prec = 0);
  std::string expr_node(const ir::Expr& e, int* prec);
  std::string int_imm(const ir::IntImm* op);
  std::string float_imm(const ir::FloatImm* op);
  std::string cast(const ir::Cast* op, int* prec);
  std::string binary(const ir::Binary* op, int* prec);
  std::string arith_operand(const ir::Expr& e, int min_prec, bool vector);
  std::string select(const ir::Select* op, int* prec);
  std::string load(const ir::Load* op, int* prec);
  std::string call(const ir::Call* op);
  std::string let(const ir::Let* op);
  std::string mask_for(const ir::Expr& mask, ir::Type value_type);
  const BufferInfo& buffer(const std::string& name) const;

  // --- statements (codegen_cpp.cpp) ---
  void stmt(const ir::Stmt& s);
  void for_loop(const ir::For* op);
  void store(const ir::Store* op);
  void prefetch(const ir::Prefetch* op);
  void transpose_block(const ir::TransposeBlock* op);
  void allocate(const ir::Allocate* op, const ir::Stmt& s);
  void if_then_else(const ir::IfThenElse* op);
  void let_stmt(const ir::LetStmt* op, const ir::Stmt& s);
  void producer_consumer(const ir::ProducerConsumer* op);
  std::string stage_timer_helpers() const;
  void line(const std::string& text);
  void nested(const ir::Stmt& s);  // one level deeper, in a new C++ scope
  std::string signature();
  // Declares `name` in the current C++ scope; false when it is already declared there.
  bool declare(const std::string& name);

  const ir::LoweredFunc& f_;
  CodegenTarget target_;
  CodegenOptions options_;
  CppPrelude prelude_;
  std::ostringstream body_;
  int indent_ = 1;
  bool in_parallel_ = false;
  int streamed_stores_ = 0;  // non-temporal stores emitted so far (each needs a fence after it)
  int scratch_slots_ = 0;    // kf_scratch slots used by this function
  int loop_depth_ = 0;       // loops enclosing the statement being emitted
  bool in_timed_stage_ = false;
  std::vector<std::string> timed_stages_;
  std::map<std::string, BufferInfo> buffers_;
  std::vector<std::set<std::string>> scopes_;
};

}  // namespace kf
