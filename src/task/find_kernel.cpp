// find_kernel (signature_parse.h): the kernel function in a user's C++ file. Functions are found
// at global scope only (the judge calls the reference by its unqualified name); a block that is
// not a function (a namespace, a class, an extern "C" block) is skipped whole.
#include <fmt/format.h>

#include <optional>
#include <string>

#include "support/text_scan.h"
#include "task/signature_internal.h"

namespace kf {
namespace {

using Tokens = std::vector<CppToken>;

// The index of the name of the function whose definition's '{' is at `brace`, when tokens
// [decl, brace) are a function head: "... NAME ( ... ) [noexcept[(...)]]" with no '=' (a lambda,
// an initializer) and no namespace, class or enum keyword. nullopt for any other block.
std::optional<size_t> function_name_at(const Tokens& t, size_t decl, size_t brace) {
  if (brace == 0 || decl + 2 >= brace + 1) return std::nullopt;
  // The '(' matching the ')' at `close`, scanning back no further than `decl`.
  auto open_of = [&](size_t close) -> std::optional<size_t> {
    int depth = 0;
    for (size_t k = close + 1; k-- > decl;) {
      if (t[k].is(")")) ++depth;
      if (t[k].is("(") && --depth == 0) return k;
    }
    return std::nullopt;
  };
  size_t c = brace - 1;
  if (t[c].is("noexcept")) {
    if (c == decl) return std::nullopt;
    --c;
  } else if (t[c].is(")")) {
    auto o = open_of(c);
    if (o && *o >= decl + 2 && t[*o - 1].is("noexcept")) c = *o - 2;
  }
  if (!t[c].is(")")) return std::nullopt;
  auto o = open_of(c);
  if (!o || *o <= decl || !t[*o - 1].is_identifier()) return std::nullopt;
  size_t k = decl;
  if (t[k].is("template")) {  // skip "template <...>": its `class` is not a class
    int depth = 0;
    for (++k; k < *o; ++k) {
      if (t[k].is("<")) ++depth;
      if (t[k].is(">") && --depth == 0) break;
    }
  }
  for (; k + 1 < *o; ++k)
    for (std::string_view w : {"=", "namespace", "struct", "class", "union", "enum", "operator"})
      if (t[k].is(w)) return std::nullopt;
  return *o - 1;
}

// What a block at global scope that is not a function is, for messages: "namespace ops (line 3)".
std::string block_name(const Tokens& t, size_t decl, size_t brace) {
  std::string what = "a block";
  if (decl < brace && t[decl].is("namespace"))
    what = decl + 1 < brace ? "namespace " + excerpt(t[decl + 1].text, 40) : "a namespace";
  if (decl < brace && t[decl].is("extern")) what = "an extern \"C\" block";
  if (decl < brace && (t[decl].is("struct") || t[decl].is("class"))) what = "a class";
  return fmt::format("{} (line {})", what, t[brace].line);
}

struct SeenFunction {
  std::string name;
  int line = 0;
  Expected<ParsedSignature> sig = Status::error("not parsed");
  FunctionSite site;
};

std::string list_functions(const std::vector<SeenFunction>& seen, bool with_reason) {
  std::string s;
  for (size_t i = 0; i < seen.size() && i < 8; ++i) {
    s += fmt::format("{}{} (line {}", i ? ", " : "", excerpt(seen[i].name, 40), seen[i].line);
    if (with_reason && !seen[i].sig) {
      std::string why = seen[i].sig.error().message();
      if (const size_t colon = why.find(": "); why.rfind("line ", 0) == 0 && colon != why.npos)
        why = why.substr(colon + 2);
      s += ": " + excerpt(why, 100);
    }
    s += ")";
  }
  if (seen.size() > 8) s += fmt::format(" and {} more", seen.size() - 8);
  return s;
}

// The index of the token closing the '{' at `open`, or t.size().
size_t closing_brace(const Tokens& t, size_t open) {
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i].kind != CppTokenKind::punct) continue;
    if (t[i].is("{")) ++depth;
    if (t[i].is("}") && --depth == 0) return i;
  }
  return t.size();
}

}  // namespace

Expected<FunctionSite> find_kernel(std::string_view source, std::string_view function) {
  auto toks = lex_cpp(source);
  if (!toks) return toks.error();
  const Tokens& t = *toks;
  std::vector<SeenFunction> seen;
  std::vector<std::string> blocks;
  size_t decl = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind == CppTokenKind::directive || t[i].is(";") || t[i].is("}")) {
      decl = i + 1;
      continue;
    }
    if (!t[i].is("{")) continue;
    const size_t close = closing_brace(t, i);
    if (close >= t.size())
      return Status::error(fmt::format("line {}: '{{' without a matching '}}'", t[i].line));
    if (const std::optional<size_t> name = function_name_at(t, decl, i)) {
      SeenFunction f{.name = std::string(t[*name].text), .line = t[*name].line};
      size_t open = 0, pclose = 0;
      f.sig = parse_function_head(t, source, decl, i, &open, &pclose);
      f.site = {.head_begin = t[decl].offset,
                .params_begin = t[open].end(),
                .params_end = t[pclose].offset,
                .body_begin = t[i].offset,
                .body_end = t[close].end(),
                .line = t[*name].line};
      seen.push_back(std::move(f));
    } else if (decl < i) {
      blocks.push_back(block_name(t, decl, i));
    }
    i = close;
    decl = close + 1;
  }
  const std::string not_looked =
      blocks.empty()
          ? ""
          : "; kforge looks at global scope only, not inside " + blocks.front() +
                (blocks.size() > 1 ? fmt::format(" and {} more", blocks.size() - 1) : "");
  std::vector<const SeenFunction*> kernels;
  for (const SeenFunction& f : seen) {
    if (!function.empty() && f.name != function) continue;
    if (!function.empty() || (f.sig && check_kernel_signature(*f.sig).ok())) kernels.push_back(&f);
  }
  if (kernels.empty() && !function.empty())
    return Status::error(
        fmt::format("no function '{}' defined at global scope (functions: {}){}", excerpt(function),
                    seen.empty() ? "none" : list_functions(seen, false), not_looked));
  if (kernels.empty())
    return Status::error(fmt::format(
        "no kernel found: a kernel is a void function at global scope with const pointer inputs "
        "and pointer outputs, e.g. void f(const float* x, float* y, int64_t n) (functions: {}){}",
        seen.empty() ? "none" : list_functions(seen, true), not_looked));
  if (kernels.size() > 1) {
    std::vector<SeenFunction> named;
    for (const SeenFunction* k : kernels) named.push_back(*k);
    return Status::error(
        fmt::format("{} functions could be the kernel: {}; choose one with --function",
                    kernels.size(), list_functions(named, false)));
  }
  const SeenFunction& k = *kernels.front();
  if (!k.sig) return k.sig.error();
  Status st = check_kernel_signature(*k.sig);
  if (!st.ok()) return Status::error(fmt::format("line {}: {}", k.line, st.message()));
  FunctionSite site = k.site;
  site.signature = *k.sig;
  return site;
}

}  // namespace kf
