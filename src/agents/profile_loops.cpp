#include "agents/profile_loops.h"

#include <algorithm>
#include <cctype>

namespace kf::agents {
namespace {

bool is_ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// `source` with comments, string and character literals and preprocessor lines replaced by
// spaces; newlines and every other byte keep their offsets.
std::string blank(const std::string& s) {
  std::string out = s;
  const size_t n = s.size();
  bool line_start = true;
  for (size_t i = 0; i < n;) {
    const char c = s[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (line_start && c == '#') {  // a directive, with its continuation lines
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
          out[i] = ' ';
          i += 2;
          continue;
        }
        out[i++] = ' ';
      }
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) line_start = false;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') out[i++] = ' ';
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      out[i++] = ' ';
      out[i++] = ' ';
      while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
        if (s[i] != '\n') out[i] = ' ';
        ++i;
      }
      for (int k = 0; k < 2 && i < n; ++k) out[i++] = ' ';
      continue;
    }
    if (c == '"' || c == '\'') {
      ++i;
      while (i < n && s[i] != c && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n) out[i++] = ' ';
        out[i++] = ' ';
      }
      ++i;
      continue;
    }
    ++i;
  }
  return out;
}

class Scanner {
 public:
  explicit Scanner(const std::string& text) : s_(text), n_(text.size()) {}

  size_t skip_space(size_t p) const {
    while (p < n_ && std::isspace(static_cast<unsigned char>(s_[p]))) ++p;
    return p;
  }
  // The identifier starting at p ("" if none).
  std::string word_at(size_t p) const {
    if (p >= n_ || !is_ident(s_[p]) || (p > 0 && is_ident(s_[p - 1]))) return "";
    size_t e = p;
    while (e < n_ && is_ident(s_[e])) ++e;
    return s_.substr(p, e - p);
  }
  // Index of the bracket closing the one at p, or n_ if unbalanced.
  size_t match(size_t p) const {
    const char open = s_[p];
    const char close = open == '(' ? ')' : open == '{' ? '}' : ']';
    int depth = 0;
    for (size_t i = p; i < n_; ++i) {
      if (s_[i] == open) ++depth;
      if (s_[i] == close && --depth == 0) return i;
    }
    return n_;
  }
  // One past a parenthesized group starting at or after p (whitespace skipped); p if none.
  size_t skip_parens(size_t p) const {
    size_t q = skip_space(p);
    if (q >= n_ || s_[q] != '(') return p;
    return std::min(match(q) + 1, n_);
  }
  // One past the end of the statement starting at or after p.
  size_t statement_end(size_t p) {
    p = skip_space(p);
    if (p >= n_) return n_;
    if (s_[p] == '{') return std::min(match(p) + 1, n_);
    const std::string w = word_at(p);
    if (w == "for" || w == "while" || w == "switch" || w == "if") {
      size_t e = statement_end(skip_parens(p + w.size()));
      if (w != "if") return e;
      const size_t q = skip_space(e);
      if (word_at(q) == "else") return statement_end(q + 4);
      return e;
    }
    if (w == "do") {
      size_t e = skip_space(statement_end(p + 2));
      if (word_at(e) != "while") return e;
      do_tails_.push_back(e);
      e = skip_space(skip_parens(e + 5));
      return e < n_ && s_[e] == ';' ? e + 1 : e;
    }
    int depth = 0;
    for (size_t i = p; i < n_; ++i) {
      const char c = s_[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) return i;  // the enclosing block ends: unbalanced statement
        --depth;
      }
      if (c == ';' && depth == 0) return i + 1;
    }
    return n_;
  }
  bool is_do_tail(size_t p) const {
    return std::find(do_tails_.begin(), do_tails_.end(), p) != do_tails_.end();
  }

 private:
  const std::string& s_;
  size_t n_;
  std::vector<size_t> do_tails_;  // offsets of the `while` that ends a do-while loop
};

std::string collapse_space(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::vector<SourceLoop> find_loops(const std::string& source) {
  const std::string text = blank(source);
  std::vector<size_t> line_starts = {0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts.push_back(i + 1);
  auto line_col = [&](size_t off, int* line, int* col) {
    auto it = std::upper_bound(line_starts.begin(), line_starts.end(), off);
    const size_t l = static_cast<size_t>(it - line_starts.begin());
    *line = static_cast<int>(l);
    *col = static_cast<int>(off - line_starts[l - 1]) + 1;
  };

  Scanner sc(text);
  std::vector<SourceLoop> loops;
  for (size_t p = 0; p < text.size(); ++p) {
    const std::string w = sc.word_at(p);
    if (w.empty()) continue;
    if (w != "for" && w != "while" && w != "do") {
      p += w.size() - 1;
      continue;
    }
    if (sc.is_do_tail(p)) {
      p += w.size() - 1;
      continue;
    }
    SourceLoop loop;
    loop.begin = p;
    size_t header_end = p + w.size();
    if (w != "do") {
      header_end = sc.skip_parens(header_end);
      if (header_end == p + w.size()) continue;  // not a loop: `for` without a header
    }
    // A do loop's statement runs through its `while (...);` tail, which is then skipped.
    loop.end = std::max(sc.statement_end(w == "do" ? p : header_end), header_end);
    loop.header = collapse_space(text.substr(p, header_end - p));
    loop.body = text.substr(header_end, loop.end - header_end);
    int end_col = 0;
    line_col(p, &loop.line, &loop.column);
    line_col(loop.end > 0 ? loop.end - 1 : 0, &loop.end_line, &end_col);
    loops.push_back(std::move(loop));
    p += w.size() - 1;
  }
  return loops;
}

int innermost_loop_at(const std::vector<SourceLoop>& loops, int line, int column) {
  int best = -1;
  for (size_t i = 0; i < loops.size(); ++i) {
    const SourceLoop& l = loops[i];
    const bool after_start = line > l.line || (line == l.line && column >= l.column);
    if (!after_start || line > l.end_line) continue;
    if (best < 0 || l.begin >= loops[best].begin) best = static_cast<int>(i);
  }
  return best;
}

bool loop_contains(const SourceLoop& outer, const SourceLoop& inner) {
  return outer.begin < inner.begin && inner.end <= outer.end;
}

std::set<std::string> vector_type_names(const std::string& source) {
  const std::string text = blank(source);
  std::set<std::string> names;
  Scanner sc(text);
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ';') continue;
    std::string stmt = text.substr(start, i - start);
    start = i + 1;
    if (stmt.find("vector_size") == std::string::npos) continue;
    const size_t first = stmt.find_first_not_of(" \t\r\n{}");
    if (first == std::string::npos) continue;
    Scanner st(stmt);
    const std::string lead = st.word_at(first);
    if (lead == "using") {
      const std::string name = st.word_at(st.skip_space(first + 5));
      if (!name.empty()) names.insert(name);
      continue;
    }
    if (lead != "typedef") continue;
    // Drop every __attribute__((...)); the declared name is then the last identifier.
    std::string plain;
    for (size_t k = 0; k < stmt.size(); ++k) {
      if (st.word_at(k) == "__attribute__") {
        const size_t after = st.skip_parens(k + 13);
        if (after != k + 13) {
          k = after - 1;
          plain += ' ';
          continue;
        }
      }
      plain += stmt[k];
    }
    size_t e = plain.size();
    while (e > 0 && !is_ident(plain[e - 1])) --e;
    size_t b = e;
    while (b > 0 && is_ident(plain[b - 1])) --b;
    if (b < e) names.insert(plain.substr(b, e - b));
  }
  for (const char* t : {"__m128", "__m128d", "__m128i", "__m256", "__m256d", "__m256i", "__m512",
                        "__m512d", "__m512i", "__m512bh"})
    if (uses_explicit_simd(text, {t})) names.insert(t);
  return names;
}

bool uses_explicit_simd(const std::string& text, const std::set<std::string>& names) {
  // A name counts inside identifiers too when '_' separates it: kf_load_f32x16, f32x16_zero.
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (const std::string& name : names) {
    for (size_t p = text.find(name); p != std::string::npos; p = text.find(name, p + 1)) {
      const bool left = p == 0 || !alnum(text[p - 1]);
      const size_t e = p + name.size();
      const bool right = e >= text.size() || !alnum(text[e]);
      if (left && right) return true;
    }
  }
  for (size_t p = text.find("_mm"); p != std::string::npos; p = text.find("_mm", p + 1)) {
    if (p > 0 && is_ident(text[p - 1])) continue;
    size_t e = p + 3;
    while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e]))) ++e;
    if (e + 1 < text.size() && text[e] == '_' && is_ident(text[e + 1])) return true;
  }
  return false;
}

std::string source_line(const std::string& source, int line) {
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    start = source.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  size_t end = source.find('\n', start);
  std::string s = source.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace kf::agents
