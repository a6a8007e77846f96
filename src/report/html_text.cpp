#include "report/html_text.h"

#include <cctype>
#include <set>

#include "support/json_text.h"

namespace kf::report {
namespace {

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

const std::set<std::string_view>& keywords() {
  static const std::set<std::string_view> k = {"alignas",
                                               "alignof",
                                               "auto",
                                               "bool",
                                               "break",
                                               "case",
                                               "char",
                                               "const",
                                               "constexpr",
                                               "continue",
                                               "default",
                                               "do",
                                               "double",
                                               "else",
                                               "enum",
                                               "extern",
                                               "false",
                                               "float",
                                               "for",
                                               "if",
                                               "inline",
                                               "int",
                                               "int32_t",
                                               "int64_t",
                                               "long",
                                               "namespace",
                                               "nullptr",
                                               "return",
                                               "short",
                                               "signed",
                                               "size_t",
                                               "static",
                                               "struct",
                                               "switch",
                                               "template",
                                               "true",
                                               "typename",
                                               "uint32_t",
                                               "uint64_t",
                                               "uint8_t",
                                               "unsigned",
                                               "using",
                                               "void",
                                               "volatile",
                                               "while",
                                               "__restrict",
                                               "restrict",
                                               "static_cast",
                                               "reinterpret_cast",
                                               "__m512",
                                               "__m256",
                                               "__m512i",
                                               "__m256i",
                                               "__m128"};
  return k;
}

std::string span(const char* cls, std::string_view text) {
  return std::string("<span class=\"") + cls + "\">" + html_escape(text) + "</span>";
}

// The length of the token of `kind` starting at `i` (a quoted literal ends at its unescaped
// closing quote or at the end of the line).
size_t quoted_end(std::string_view s, size_t i) {
  const char q = s[i];
  size_t j = i + 1;
  while (j < s.size() && s[j] != q && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
  return std::min(s.size(), j + 1);
}

}  // namespace

std::string html_escape(std::string_view text) {
  const std::string clean = sanitize_utf8(text);
  std::string out;
  out.reserve(clean.size() + clean.size() / 8);
  for (char c : clean) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') break;
        out += c;
    }
  }
  return out;
}

std::string highlight_cpp(std::string_view s) {
  std::string out;
  size_t i = 0, plain = 0;
  bool line_start = true;
  const auto flush = [&](size_t upto) {
    if (upto > plain) out += html_escape(s.substr(plain, upto - plain));
  };
  while (i < s.size()) {
    const char c = s[i];
    size_t end = i;
    const char* cls = nullptr;
    if (line_start && c == '#') {
      end = s.find('\n', i);
      cls = "p";
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      end = s.find('\n', i);
      cls = "c";
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      end = s.find("*/", i + 2);
      end = end == std::string_view::npos ? s.size() : end + 2;
      cls = "c";
    } else if (c == '"' || c == '\'') {
      end = quoted_end(s, i);
      cls = "s";
    } else if (std::isdigit(static_cast<unsigned char>(c)) && (i == 0 || !ident_char(s[i - 1]))) {
      end = i;
      while (end < s.size() && (ident_char(s[end]) || s[end] == '.')) ++end;
      cls = "n";
    } else if (ident_start(c) && (i == 0 || !ident_char(s[i - 1]))) {
      end = i;
      while (end < s.size() && ident_char(s[end])) ++end;
      if (keywords().contains(s.substr(i, end - i))) cls = "k";
      if (!cls) {  // a plain identifier: part of the plain run
        i = end;
        line_start = false;
        continue;
      }
    }
    if (end == std::string_view::npos) end = s.size();
    if (cls) {
      flush(i);
      out += span(cls, s.substr(i, end - i));
      i = plain = end;
      line_start = false;
      continue;
    }
    if (c == '\n')
      line_start = true;
    else if (c != ' ' && c != '\t')
      line_start = false;
    ++i;
  }
  flush(s.size());
  return out;
}

}  // namespace kf::report
