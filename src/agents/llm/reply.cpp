#include "agents/llm/reply.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "agents/strategy.h"

namespace kf::agents::llm_brain {
namespace {

// The longest section or plan text kept (a plan is a paragraph, not a program).
constexpr size_t kMaxSectionBytes = 8192;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Calls f(line) for each line of `text` (without its '\n').
template <class F>
void for_each_line(std::string_view text, F f) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    f(text.substr(start, end - start));
    start = end + 1;
  }
}

bool is_cpp_language(const std::string& lang) {
  return lang.empty() || lang == "cpp" || lang == "c++" || lang == "cxx" || lang == "cc" ||
         lang == "c" || lang == "hpp" || lang == "h";
}

Status too_long(std::string_view reply) {
  return Status::error(
      fmt::format("the reply is {} bytes, over the {} read", reply.size(), kMaxReplyBytes));
}

}  // namespace

std::vector<FencedBlock> fenced_blocks(std::string_view reply) {
  std::vector<FencedBlock> out;
  bool open = false;
  for_each_line(reply, [&](std::string_view raw) {
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view t = trim(line);
    if (!open) {
      if (!t.starts_with("```")) return;
      std::string_view info = trim(t.substr(3));
      info = info.substr(0, std::min(info.find_first_of(" \t{"), info.size()));
      out.push_back({lower(info.substr(0, 32)), "", false});
      open = true;
      return;
    }
    if (t == "```") {
      out.back().closed = true;
      open = false;
      return;
    }
    out.back().text.append(line);
    out.back().text.push_back('\n');
  });
  return out;
}

Expected<std::string> single_cpp_block(std::string_view reply) {
  if (reply.size() > kMaxReplyBytes) return too_long(reply);
  std::vector<FencedBlock> blocks = fenced_blocks(reply);
  if (!blocks.empty() && !blocks.back().closed && is_cpp_language(blocks.back().language))
    return Status::error(
        "the reply ends inside a code block (its closing ``` is missing: cut short?)");
  std::vector<const FencedBlock*> cpp;
  for (const FencedBlock& b : blocks)
    if (b.closed && is_cpp_language(b.language)) cpp.push_back(&b);
  if (cpp.empty()) return Status::error("the reply has no ```cpp code block");
  if (cpp.size() > 1)
    return Status::error(fmt::format(
        "the reply has {} C++ code blocks; it must have exactly one, the whole translation unit",
        cpp.size()));
  return cpp.front()->text;
}

namespace {

// Which section a heading line names ("## Expected effect" -> 3), or -1.
int section_of(std::string_view line) {
  std::string_view t = trim(line);
  if (!t.starts_with("#")) return -1;
  while (t.starts_with("#")) t.remove_prefix(1);
  std::string h = lower(trim(t));
  while (!h.empty() && (h.back() == ':' || h.back() == '*')) h.pop_back();
  while (!h.empty() && h.front() == '*') h.erase(h.begin());
  if (h == "analysis") return 0;
  if (h == "bottleneck") return 1;
  if (h == "strategy" || h == "plan") return 2;
  if (h == "expected effect" || h == "expected speedup" || h == "expected") return 3;
  return -1;
}

}  // namespace

Expected<PlanSections> parse_plan_sections(std::string_view reply) {
  if (reply.size() > kMaxReplyBytes) return too_long(reply);
  std::string sections[4];
  bool seen[4] = {false, false, false, false};
  int current = -1;
  for_each_line(reply, [&](std::string_view line) {
    if (int s = section_of(line); s >= 0) {
      current = s;
      seen[s] = true;
      return;
    }
    if (current < 0 || sections[current].size() >= kMaxSectionBytes) return;
    sections[current].append(line.substr(0, kMaxSectionBytes - sections[current].size()));
    sections[current].push_back('\n');
  });
  static const char* const kNames[4] = {"Analysis", "Bottleneck", "Strategy", "Expected effect"};
  std::string missing;
  for (int i = 0; i < 4; ++i)
    if (!seen[i] || (i == 2 && trim(sections[i]).empty()))
      missing += fmt::format("{}## {}", missing.empty() ? "" : ", ", kNames[i]);
  if (!missing.empty())
    return Status::error("the reply lacks the section(s) " + missing +
                         " (each a Markdown heading, the Strategy one not empty)");
  return PlanSections{std::string(trim(sections[0])), std::string(trim(sections[1])),
                      std::string(trim(sections[2])), std::string(trim(sections[3]))};
}

namespace {

// The first word of `s` with backticks, asterisks and trailing punctuation taken off.
std::string first_word(std::string_view s, size_t* rest) {
  size_t i = 0;
  while (i < s.size() && (std::isspace(static_cast<unsigned char>(s[i])) || s[i] == '`' ||
                          s[i] == '*' || s[i] == '-'))
    ++i;
  size_t j = i;
  while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
  *rest = j;
  return lower(s.substr(i, j - i));
}

// name=value pairs after the strategy id, for the strategy's own knobs.
Knobs knobs_from(std::string_view text, const Strategy& s) {
  Knobs out;
  const std::string_view line = text.substr(0, std::min(text.find('\n'), text.size()));
  size_t i = 0;
  while (i < line.size()) {
    const size_t eq = line.find('=', i);
    if (eq == std::string_view::npos) break;
    size_t a = eq;
    while (a > i && (std::isalnum(static_cast<unsigned char>(line[a - 1])) || line[a - 1] == '_'))
      --a;
    const std::string name(line.substr(a, eq - a));
    int64_t v = 0;
    const char* first = line.data() + eq + 1;
    auto [end, ec] = std::from_chars(first, line.data() + line.size(), v);
    i = static_cast<size_t>(end - line.data()) + (ec == std::errc() ? 0 : 1);
    if (ec != std::errc() || v < 1 || v > (int64_t{1} << 20)) continue;
    for (const Knob& k : s.knobs)
      if (k.name == name) out[name] = v;
  }
  return out;
}

double speedup_from(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.'))
      ++j;
    if (j < text.size() && (text[j] == 'x' || text[j] == 'X')) {
      double v = 0;
      auto [end, ec] = std::from_chars(text.data() + i, text.data() + j, v);
      if (ec == std::errc() && end == text.data() + j) return std::clamp(v, 1.0, 100.0);
    }
    i = j;
  }
  return 1.0;
}

}  // namespace

Plan plan_from_sections(const PlanSections& s) {
  Plan p;
  p.analysis = s.analysis.substr(0, 2000);
  p.bottleneck = s.bottleneck.substr(0, 500);
  p.why = "the LLM planner: " + p.bottleneck.substr(0, 200);
  p.expected_speedup = speedup_from(s.expected_effect);
  size_t rest = 0;
  const std::string word = first_word(s.strategy, &rest);
  if (word == "stop") {
    p.strategy = "stop";
    p.why = "the LLM planner sees nothing more to gain: " + p.analysis.substr(0, 300);
    return p;
  }
  if (const Strategy* st = find_strategy(word)) {
    p.strategy = st->id;
    p.knobs = st->default_knobs();
    for (const auto& [k, v] : knobs_from(std::string_view(s.strategy).substr(rest), *st))
      p.knobs[k] = v;
    return p;
  }
  p.text = s.strategy.substr(0, 1000);
  return p;
}

}  // namespace kf::agents::llm_brain
