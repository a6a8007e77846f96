#include "agents/llm/screen.h"

#include <fmt/format.h>

#include <array>
#include <cctype>

#include "harness/shim.h"
#include "support/text_scan.h"

namespace kf::agents::llm_brain {
namespace {

constexpr std::array<std::string_view, 58> kAllowedHeaders = {"algorithm",
                                                              "array",
                                                              "atomic",
                                                              "bit",
                                                              "cassert",
                                                              "cfloat",
                                                              "climits",
                                                              "cmath",
                                                              "cstddef",
                                                              "cstdint",
                                                              "cstdlib",
                                                              "cstring",
                                                              "functional",
                                                              "initializer_list",
                                                              "iterator",
                                                              "limits",
                                                              "memory",
                                                              "mutex",
                                                              "new",
                                                              "numeric",
                                                              "optional",
                                                              "span",
                                                              "thread",
                                                              "tuple",
                                                              "type_traits",
                                                              "utility",
                                                              "vector",
                                                              "assert.h",
                                                              "float.h",
                                                              "limits.h",
                                                              "math.h",
                                                              "stddef.h",
                                                              "stdint.h",
                                                              "stdlib.h",
                                                              "string.h",
                                                              "omp.h",
                                                              "immintrin.h",
                                                              "x86intrin.h",
                                                              "xmmintrin.h",
                                                              "emmintrin.h",
                                                              "pmmintrin.h",
                                                              "tmmintrin.h",
                                                              "smmintrin.h",
                                                              "nmmintrin.h",
                                                              "avxintrin.h",
                                                              "avx2intrin.h",
                                                              "fmaintrin.h",
                                                              "f16cintrin.h",
                                                              "avx512fintrin.h",
                                                              "avx512bwintrin.h",
                                                              "avx512vlintrin.h",
                                                              "avx512dqintrin.h",
                                                              "avx512bf16intrin.h",
                                                              "avx512vnniintrin.h",
                                                              "amxintrin.h",
                                                              "kforge/kernel.h",
                                                              "complex",
                                                              "condition_variable"};

constexpr std::array<std::string_view, 7> kLibraryNames = {"cblas_",   "dnnl",    "mkl_",  "MKL_",
                                                           "openblas", "Eigen::", "cublas"};
constexpr std::array<std::string_view, 2> kJudgeNames = {"kf_entry", "kforge_bind"};

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The header a preprocessor line includes ("" when it is not an #include).
std::string_view included(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#') return {};
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string_view::npos || line.substr(i, 7) != "include") return {};
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string_view::npos) return "?";
  const char close = line[i] == '<' ? '>' : (line[i] == '"' ? '"' : 0);
  if (!close) return line.substr(i);  // #include MACRO: not allowed
  const size_t end = line.find(close, i + 1);
  return end == std::string_view::npos ? line.substr(i) : line.substr(i + 1, end - i - 1);
}

// The number of parameters in `list` (between the parentheses): commas at depth 0, plus one;
// 0 for "" and "void".
int count_params(std::string_view list) {
  const size_t first = list.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return 0;
  const size_t last = list.find_last_not_of(" \t\n");
  if (list.substr(first, last - first + 1) == "void") return 0;
  int commas = 0, depth = 0;
  for (char c : list) {
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) ++commas;
  }
  return commas + 1;
}

// Whether `code` (normalized) defines `name(` with `params` parameters followed by a body.
bool defines(std::string_view code, const std::string& name, int params) {
  for (size_t at = code.find(name); at != std::string_view::npos; at = code.find(name, at + 1)) {
    if (at > 0 && ident_char(code[at - 1])) continue;
    size_t i = at + name.size();
    if (i < code.size() && code[i] == ' ') ++i;
    if (i >= code.size() || code[i] != '(') continue;
    int depth = 0;
    size_t j = i;
    for (; j < code.size(); ++j) {
      if (code[j] == '(') ++depth;
      if (code[j] == ')' && --depth == 0) break;
    }
    if (j >= code.size()) return false;
    size_t k = j + 1;
    while (k < code.size() && code[k] == ' ') ++k;
    // A body may follow qualifiers (noexcept, an attribute) but not a ';' first.
    const size_t brace = code.find_first_of("{;", k);
    if (brace == std::string_view::npos || code[brace] != '{' || brace - k > 64) continue;
    if (count_params(code.substr(i + 1, j - i - 1)) == params) return true;
  }
  return false;
}

int signature_params(const Task& task) {
  const std::string sig = candidate_signature(task);
  const size_t open = sig.find('('), close = sig.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close <= open) return -1;
  return count_params(std::string_view(sig).substr(open + 1, close - open - 1));
}

}  // namespace

bool allowed_header(std::string_view name) {
  for (std::string_view h : kAllowedHeaders)
    if (name == h) return true;
  return false;
}

Status screen_candidate(std::string_view source, const Task& task, const ScreenOptions& o) {
  if (source.size() > kMaxCandidateBytes)
    return Status::error(
        fmt::format("the source is {} bytes, over {}", source.size(), kMaxCandidateBytes));
  if (source.find('\0') != std::string_view::npos)
    return Status::error("the source holds a NUL byte");
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string_view::npos) end = source.size();
    const std::string_view h = included(source.substr(start, end - start));
    if (!h.empty() && !allowed_header(h))
      return Status::error(
          fmt::format("it includes {}, which is not on the allowed list (standard headers, the x86 "
                      "intrinsics headers, <omp.h>, \"kforge/kernel.h\")",
                      excerpt(h, 60)));
    start = end + 1;
  }
  const std::string code = normalized_source(source);
  for (std::string_view lib : kLibraryNames)
    if (!o.allow_libraries && code.find(lib) != std::string::npos)
      return Status::error(
          fmt::format("it names {} (a BLAS/DNN library), which this task does not allow", lib));
  for (std::string_view name : kJudgeNames)
    if (code.find(name) != std::string::npos)
      return Status::error(fmt::format("it names {}, the judge's own entry point", name));
  const int params = signature_params(task);
  if (!defines(code, task.function, params))
    return Status::error(fmt::format("it does not define the task's function {} ({} parameters)",
                                     candidate_signature(task), params));
  return ok_status();
}

std::string normalized_source(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      space = true;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      const size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 1;
      space = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    // A space matters only between two words ("int x"), not next to punctuation.
    if (space && !out.empty() && ident_char(out.back()) && ident_char(c)) out.push_back(' ');
    space = false;
    if (c == '"' || c == '\'') {  // a literal, kept as written
      size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      out.append(s.substr(i, std::min(j + 1, s.size()) - i));
      i = std::min(j, s.size());
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace kf::agents::llm_brain
