#include "export/export_source.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace kf {
namespace {

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool space_char(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

struct Span {
  size_t start = 0, end = 0;  // a directive's lines: its first character to after its newline
};

// What one pass over a translation unit finds (see the top of export_source.h).
struct Scan {
  SourceUse use;
  size_t lead_end = 0;         // end of the leading block, at a line where no #if is open
  std::vector<Span> includes;  // #include lines outside braces, in order
};

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s), n_(s.size()) {}

  Scan run() {
    size_t i = 0;
    while (i < n_) i = step(i);
    if (!seen_code_) scan_.lead_end = n_;
    return scan_;
  }

 private:
  // One token or character from i; returns where the next one starts.
  size_t step(size_t i) {
    const char c = s_[i];
    if (c == '\n') {
      new_line(i + 1);
      return i + 1;
    }
    if (space_char(c)) return i + 1;
    if (c == '/' && i + 1 < n_ && s_[i + 1] == '/') return line_comment_end(i);
    if (c == '/' && i + 1 < n_ && s_[i + 1] == '*') return block_comment_end(i);
    if (c == '#' && line_start_) return directive(i);
    seen_code_ = true;
    line_start_ = false;
    if (c == '"' || c == '\'') return quoted_end(i);
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) return number_end(i);
    if (ident_char(c)) return identifier(i);
    if (c == '{') ++depth_;
    if (c == '}') depth_ = std::max(0, depth_ - 1);
    return i + 1;
  }

  void new_line(size_t next) {
    line_start_ = true;
    line_begin_ = next;
    if (!seen_code_ && pp_depth_ == 0) scan_.lead_end = next;
  }

  size_t line_comment_end(size_t i) const {
    const size_t e = s_.find('\n', i);
    return e == std::string_view::npos ? n_ : e;  // the newline itself is the next step
  }
  size_t block_comment_end(size_t i) const {
    const size_t e = s_.find("*/", i + 2);
    return e == std::string_view::npos ? n_ : e + 2;
  }
  // A "..." or '...' literal from its opening quote; an unterminated one ends at its line.
  size_t quoted_end(size_t i) const {
    const char q = s_[i];
    for (size_t j = i + 1; j < n_; ++j) {
      if (s_[j] == '\\') {
        ++j;
        continue;
      }
      if (s_[j] == q) return j + 1;
      if (s_[j] == '\n') return j;
    }
    return n_;
  }
  // R"delim( ... )delim" from its opening quote.
  size_t raw_string_end(size_t i) const {
    const size_t paren = s_.find('(', i + 1);
    if (paren == std::string_view::npos || paren - i - 1 > 16) return quoted_end(i);
    const std::string close = ")" + std::string(s_.substr(i + 1, paren - i - 1)) + "\"";
    const size_t e = s_.find(close, paren + 1);
    return e == std::string_view::npos ? n_ : e + close.size();
  }
  // A pp-number: digits, letters, '.', digit separators and exponent signs (1'000, 0x1p-3f).
  size_t number_end(size_t i) const {
    size_t j = i + 1;
    while (j < n_) {
      const char c = s_[j];
      const char prev = s_[j - 1];
      const bool sign =
          (c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P');
      const bool separator = c == '\'' && j + 1 < n_ && ident_char(s_[j + 1]);
      if (!(ident_char(c) || c == '.' || sign || separator)) break;
      ++j;
    }
    return j;
  }

  size_t identifier(size_t i) {
    size_t j = i;
    while (j < n_ && ident_char(s_[j])) ++j;
    const std::string_view word = s_.substr(i, j - i);
    if (word.starts_with("omp_")) scan_.use.openmp_calls = true;
    if (word.starts_with("pthread_")) scan_.use.threads = true;
    if ((word == "thread" || word == "jthread") && i >= 2 && s_.substr(i - 2, 2) == "::")
      scan_.use.threads = true;
    static constexpr std::array<std::string_view, 5> kRawPrefixes = {"R", "LR", "uR", "UR", "u8R"};
    if (j < n_ && s_[j] == '"' &&
        std::find(kRawPrefixes.begin(), kRawPrefixes.end(), word) != kRawPrefixes.end())
      return raw_string_end(j);
    return j;
  }

  // A directive from its '#': its lines (continuations included) are read as one; comments
  // and literals in it are skipped so that a "*/" or quote in them does not end it early.
  size_t directive(size_t i) {
    size_t j = i + 1;
    while (j < n_ && space_char(s_[j])) ++j;
    size_t w = j;
    while (w < n_ && ident_char(s_[w])) ++w;
    const std::string_view name = s_.substr(j, w - j);
    size_t end = w;
    while (end < n_ && s_[end] != '\n') {
      if (s_[end] == '\\' && end + 1 < n_ && s_[end + 1] == '\n') {
        end += 2;
      } else if (s_[end] == '/' && end + 1 < n_ && s_[end + 1] == '*') {
        end = block_comment_end(end);
      } else if (s_[end] == '"' || s_[end] == '\'') {
        end = std::max(end + 1, quoted_end(end));
      } else {
        ++end;
      }
    }
    const std::string_view rest = s_.substr(w, end - w);
    note_directive(name, rest);
    if (name == "if" || name == "ifdef" || name == "ifndef") ++pp_depth_;
    if (name == "endif") pp_depth_ = std::max(0, pp_depth_ - 1);
    const size_t after = end < n_ ? end + 1 : n_;
    if (name == "include" && depth_ == 0) scan_.includes.push_back({line_begin_, after});
    if (end < n_) new_line(after);
    return after;
  }

  void note_directive(std::string_view name, std::string_view rest) {
    size_t k = 0;
    while (k < rest.size() && space_char(rest[k])) ++k;
    rest = rest.substr(k);
    if (name == "pragma" && rest.starts_with("omp") && (rest.size() == 3 || !ident_char(rest[3])))
      scan_.use.openmp_pragmas = true;
    if (name != "include") return;
    if (rest.find("omp.h") != std::string_view::npos) scan_.use.openmp_calls = true;
    if (rest.find("<thread>") != std::string_view::npos ||
        rest.find("pthread.h") != std::string_view::npos)
      scan_.use.threads = true;
    if (rest.find("kforge/kernel.h") != std::string_view::npos) scan_.use.kernel_header = true;
  }

  std::string_view s_;
  size_t n_;
  Scan scan_;
  int depth_ = 0, pp_depth_ = 0;
  bool line_start_ = true, seen_code_ = false;
  size_t line_begin_ = 0;
};

void end_line(std::string& out) {
  if (!out.empty() && out.back() != '\n') out += '\n';
}

}  // namespace

SourceUse scan_source_use(std::string_view source) {
  return Scanner(source).run().use;
}

std::string wrap_source(std::string_view source, const WrapSpec& spec) {
  const Scan scan = Scanner(source).run();
  std::string out(source.substr(0, scan.lead_end));
  end_line(out);
  out += spec.open;
  size_t pos = scan.lead_end;
  bool open = true;
  for (size_t k = 0; k < scan.includes.size(); ++k) {
    const Span& inc = scan.includes[k];
    if (inc.start < scan.lead_end) continue;
    out += source.substr(pos, inc.start - pos);
    if (open) {
      end_line(out);
      out += spec.close;
      open = false;
    }
    out += source.substr(inc.start, inc.end - inc.start);
    end_line(out);
    pos = inc.end;
    // Consecutive #include lines share one gap in the scope.
    const bool next_adjacent = k + 1 < scan.includes.size() && scan.includes[k + 1].start == pos;
    if (!next_adjacent) {
      out += spec.open;
      open = true;
    }
  }
  out += source.substr(pos);
  end_line(out);
  if (open) out += spec.close;
  return out;
}

}  // namespace kf
