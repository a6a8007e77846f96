#include "harness/compiler_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <iterator>
#include <map>
#include <mutex>

#include "support/json_text.h"
#include "support/subprocess.h"

namespace kf {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return c == ' ' || c == '\t';
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// Calls f(line) for every line of `text` (without its '\n'); linear.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    f(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

// Reads a run of digits at s[i...]; returns its end (== i when there is none). The value
// saturates instead of overflowing.
size_t read_number(std::string_view s, size_t i, int& value) {
  long v = 0;
  size_t j = i;
  while (j < s.size() && is_digit(s[j])) {
    v = std::min<long>(v * 10 + (s[j] - '0'), 1'000'000'000);
    ++j;
  }
  value = static_cast<int>(v);
  return j;
}

// "file:line[:col]: severity: message". Tries each ':' from the left (the file name is the
// shortest prefix that fits, as a lazy match would take); every character is looked at a
// bounded number of times.
std::optional<Diagnostic> parse_located(std::string_view line) {
  static constexpr std::array<std::string_view, 4> kSeverities = {"fatal error", "error", "warning",
                                                                  "note"};
  for (size_t colon = line.find(':', 1); colon != std::string_view::npos;
       colon = line.find(':', colon + 1)) {
    Diagnostic d;
    size_t i = read_number(line, colon + 1, d.line);
    if (i == colon + 1 || i >= line.size() || line[i] != ':') continue;
    if (i + 1 < line.size() && is_digit(line[i + 1])) {
      size_t j = read_number(line, i + 1, d.column);
      if (j >= line.size() || line[j] != ':') continue;
      i = j;
    }
    std::string_view rest = line.substr(i + 1);
    if (!starts_with(rest, " ")) continue;
    rest.remove_prefix(1);
    for (std::string_view sev : kSeverities) {
      if (!starts_with(rest, sev) || !starts_with(rest.substr(sev.size()), ": ")) continue;
      d.file = std::string(line.substr(0, colon));
      d.severity = sev == "fatal error" ? "error" : std::string(sev);
      d.message = std::string(rest.substr(sev.size() + 2));
      return d;
    }
  }
  return std::nullopt;
}

// The file a located line names: "f.cpp:12:3: error: ...", "f.cpp:12:3:   required from here",
// "f.cpp: In function 'int g()':", "f.cpp: At global scope:". Like parse_located, each ':' from the
// left is tried, so a file name holding ':' is still found whole.
std::optional<std::string_view> location_file(std::string_view line) {
  for (size_t colon = line.find(':', 1); colon != std::string_view::npos;
       colon = line.find(':', colon + 1)) {
    int n = 0;
    size_t i = read_number(line, colon + 1, n);
    if (i == colon + 1 || i >= line.size() || line[i] != ':') continue;
    if (i + 1 < line.size() && is_digit(line[i + 1])) i = read_number(line, i + 1, n);
    // "file:L:C: " is followed by a space; "name:x:1:1:rest", a line of some echoed file, is not.
    if (i + 1 < line.size() && line[i] == ':' && line[i + 1] == ' ') return line.substr(0, colon);
  }
  if (line.empty() || line.back() != ':') return std::nullopt;
  for (std::string_view marker : {": In ", ": At "}) {
    size_t p = line.find(marker);
    if (p != std::string_view::npos && p > 0) return line.substr(0, p);
  }
  return std::nullopt;
}

// Lines the driver and the linker print, which belong to no diagnostic.
bool is_tool_line(std::string_view line) {
  for (std::string_view p : {"collect2:", "/usr/bin/ld", "ld:", "ld.lld:", "g++:", "c++:", "clang",
                             "cc1plus:", "In file included from", "compilation terminated", "lto"})
    if (starts_with(line, p)) return true;
  size_t i = 0;
  while (i < line.size() && is_space(line[i])) ++i;
  if (i > 0 && starts_with(line.substr(i), "from ")) return true;  // the include chain goes on
  return line.find("undefined reference to") != std::string_view::npos ||
         line.find("multiple definition of") != std::string_view::npos;
}

bool is_link_error(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && is_space(line[i])) ++i;
  if (i > 0 && starts_with(line.substr(i), "from ")) return true;  // the include chain goes on
  return line.find("undefined reference to") != std::string_view::npos ||
         line.find("multiple definition of") != std::string_view::npos ||
         line.find("ld returned") != std::string_view::npos;
}

// A `-H` line: one dot per include depth, a space, the header's path.
std::optional<std::string_view> header_of(std::string_view line) {
  size_t dots = 0;
  while (dots < line.size() && line[dots] == '.') ++dots;
  if (dots == 0 || dots >= line.size() || line[dots] != ' ') return std::nullopt;
  return line.substr(dots + 1);
}

// One line of the log, capped, as terminal_text: the log is shown in terminals.
std::string printable(std::string_view line) {
  std::string s = terminal_text(line.substr(0, kMaxLineBytes));
  if (line.size() > kMaxLineBytes) s += " [...]";
  return s;
}

bool under(const fs::path& p, const fs::path& dir) {
  auto [d, q] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
  if (d == dir.end()) return true;
  return std::next(d) == dir.end() && d->empty();  // "dir/" ends in an empty element
}

}  // namespace

bool include_allowed(std::string_view file, const IncludePolicy& policy) {
  if (file.empty()) return false;
  fs::path p{std::string(file)};
  if (p.is_relative()) p = policy.build_dir / p;
  p = p.lexically_normal();
  if (!policy.build_dir.empty() && under(p, policy.build_dir.lexically_normal())) return true;
  for (const auto& d : policy.allowed_dirs)
    if (under(p, d.lexically_normal())) return true;
  return false;
}

SanitizedLog sanitize_compiler_log(std::string_view raw, const IncludePolicy& policy) {
  SanitizedLog out;
  bool withholding = false, guard_list = false, full = false;
  size_t context = 0, withheld = 0;
  auto emit = [&](std::string_view line) {
    if (full) return;
    std::string text = printable(line);
    if (out.log.size() + text.size() + 1 > kMaxLogBytes) {
      out.log += fmt::format("[compiler output cut at {} KiB]\n", kMaxLogBytes / 1024);
      full = true;
      return;
    }
    out.log += text;
    out.log += '\n';
  };
  for_each_line(raw, [&](std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (auto h = header_of(line)) {
      if (!include_allowed(*h, policy)) out.refused_includes.push_back(printable(*h));
      return;
    }
    if (starts_with(line, "Multiple include guards may be useful for:")) {
      guard_list = true;
      return;
    }
    if (guard_list && line.find(": ") == std::string_view::npos && !line.empty()) return;
    guard_list = false;
    if (auto f = location_file(line)) {
      withholding = !include_allowed(*f, policy);
      context = 0;
      if (!withholding) return emit(line);
      if (withheld++ == 0)
        emit(
            fmt::format("{}: [diagnostics located in this file are withheld: it is outside the "
                        "allowed include directories]",
                        *f));
      return;
    }
    if (is_tool_line(line)) {
      withholding = false;
      context = kMaxContextLines;  // lines after a tool line are its continuation at most
      return emit(line);
    }
    if (withholding || context >= kMaxContextLines + kMaxContextLines) return;
    if (++context == kMaxContextLines + 1) {
      context = 2 * kMaxContextLines;
      return emit("  [... more lines of this diagnostic cut]");
    }
    emit(line);
  });
  out.log = valid_utf8(out.log);
  return out;
}

bool include_path_outside(std::string_view path) {
  bool climbs = false;
  for (const auto& part : fs::path(std::string(path))) climbs |= part == "..";
  return starts_with(path, "/") || climbs;
}

std::optional<std::string> literal_include_outside(std::string_view source) {
  std::optional<std::string> found;
  for_each_line(source, [&](std::string_view line) {
    if (found) return;
    size_t i = 0;
    while (i < line.size() && is_space(line[i])) ++i;
    if (starts_with(line.substr(i), "#"))
      i += 1;
    else if (starts_with(line.substr(i), "%:"))
      i += 2;  // the digraph for '#'
    else
      return;
    while (i < line.size() && is_space(line[i])) ++i;
    size_t w = i;
    while (i < line.size() && (std::isalpha(static_cast<unsigned char>(line[i])) || line[i] == '_'))
      ++i;
    std::string_view word = line.substr(w, i - w);
    if (word != "include" && word != "include_next" && word != "import" && word != "embed") return;
    while (i < line.size() && is_space(line[i])) ++i;
    if (i >= line.size() || (line[i] != '"' && line[i] != '<')) return;
    const char close = line[i] == '"' ? '"' : '>';
    size_t end = line.find(close, i + 1);
    std::string_view path =
        line.substr(i + 1, end == std::string_view::npos ? line.npos : end - i - 1);
    if (include_path_outside(path)) found = printable(path);
  });
  return found;
}

std::vector<Diagnostic> parse_diagnostics(std::string_view log) {
  std::vector<Diagnostic> out;
  for_each_line(log, [&](std::string_view line) {
    if (out.size() >= kMaxDiagnostics) return;
    if (auto d = parse_located(line)) {
      out.push_back(std::move(*d));
    } else if (is_link_error(line)) {
      out.push_back({"", 0, 0, "error", std::string(line)});
    }
  });
  return out;
}

std::string valid_utf8(std::string_view s) {
  std::string out = sanitize_utf8(s);
  std::erase(out, '\0');
  return out;
}

std::vector<fs::path> system_include_dirs(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, std::vector<fs::path>> memo;
  std::lock_guard lock(mu);
  if (auto it = memo.find(cxx); it != memo.end()) return it->second;
  std::vector<fs::path> dirs;
  auto r = run_process({.argv = {cxx, "-xc++", "-E", "-v", "/dev/null"}, .timeout_s = 30});
  if (r && r->ok()) {
    bool in_list = false;
    for_each_line(r->err, [&](std::string_view line) {
      if (line.find("search starts here:") != std::string_view::npos) {
        in_list = true;
      } else if (starts_with(line, "End of search list")) {
        in_list = false;
      } else if (in_list && starts_with(line, " /")) {
        std::string_view d = line.substr(1);
        if (size_t sp = d.find(' '); sp != std::string_view::npos)
          d = d.substr(0, sp);  // "(framework)"
        dirs.emplace_back(fs::path(std::string(d)).lexically_normal());
      }
    });
  }
  if (dirs.empty()) dirs = {"/usr/include", "/usr/local/include", "/usr/lib/gcc"};
  memo[cxx] = dirs;
  return dirs;
}

}  // namespace kf
