#include "agents/profile_vectorization.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "agents/profile_loops.h"
#include "support/text_scan.h"

namespace kf::agents {
namespace {

struct Message {
  int line = 0, column = 0;
  bool optimized = false;  // else missed
  std::string text;        // after "optimized: " / "missed: ", continuation lines appended
};

// -fopt-info lines about `file`: "FILE:LINE:COL: optimized|missed: TEXT", read by a linear
// scanner (support/text_scan.h says why not std::regex).
std::vector<Message> candidate_messages(const std::string& output, const std::string& file) {
  std::vector<Message> out;
  std::istringstream in(output);
  std::string line;
  bool last_kept = false;
  while (std::getline(in, line)) {
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {  // " scalar_type: float"
      const size_t b = line.find_first_not_of(" \t");
      if (last_kept && b != std::string::npos) out.back().text += " " + line.substr(b);
      continue;
    }
    const auto m = parse_located_message(line, {"optimized", "missed"});
    last_kept = m && m->file == file;
    if (!last_kept) continue;
    out.push_back({m->line, m->column, m->kind == "optimized", std::string(m->text)});
  }
  return out;
}

// One loop as the messages describe it.
struct LoopState {
  int loop = -1;  // index into the source loops, -1 if no loop encloses the message
  int line = 0;   // first line of the loop (or of the message, without a loop)
  bool vectorized = false, missed = false;
  int bytes = 0;
  std::string reason;
  int reason_line = 0;
};

// GCC's reason names a vector type: the loop already computes on vectors (GCC prints vector
// extension types as "vector(16) float" and 64-byte copies as uint512_t).
// (What `vector\(\d+\)|\buint(128|256|512)_t\b` found, in one pass.)
bool names_vector_type(std::string_view reason) {
  for (size_t p = reason.find("vector("); p != std::string_view::npos;
       p = reason.find("vector(", p + 1)) {
    const std::string_view rest = reason.substr(p + 7);
    const size_t digits = run_length(rest, [](char c) { return c >= '0' && c <= '9'; });
    if (digits > 0 && rest.substr(digits, 1) == ")") return true;
  }
  for (size_t p = reason.find("uint"); p != std::string_view::npos;
       p = reason.find("uint", p + 1)) {
    if (p > 0 && is_word_char(reason[p - 1])) continue;
    const std::string_view rest = reason.substr(p + 4);
    if (rest.substr(0, 3) != "128" && rest.substr(0, 3) != "256" && rest.substr(0, 3) != "512")
      continue;
    if (rest.substr(3, 2) != "_t") continue;
    if (rest.size() == 5 || !is_word_char(rest[5])) return true;
  }
  return false;
}

// `^loop vectorized(?: using (\d+) byte vectors)?` searched in `text`: whether it matches, and
// the byte count (0 when not given; saturated for an absurd one).
bool loop_vectorized(std::string_view text, int* bytes) {
  *bytes = 0;
  if (!text.starts_with("loop vectorized")) return false;
  std::string_view rest = text.substr(15);
  if (!rest.starts_with(" using ")) return true;
  rest.remove_prefix(7);
  const size_t digits = run_length(rest, [](char c) { return c >= '0' && c <= '9'; });
  if (digits > 0 && rest.substr(digits).starts_with(" byte vectors"))
    *bytes = *parse_decimal_saturating(rest.substr(0, digits));
  return true;
}

std::string tidy_reason(std::string r) {
  while (!r.empty() && (r.back() == '.' || r.back() == ' ' || r.back() == ';')) r.pop_back();
  const size_t cap = 200;
  if (r.size() > cap) r = r.substr(0, cap) + "...";
  return r;
}

}  // namespace

VectorizationReport parse_vectorization_report(const std::string& compiler_output,
                                               const std::string& source, const std::string& file) {
  VectorizationReport report;
  report.available = true;
  const std::vector<SourceLoop> loops = find_loops(source);
  // Messages whose location is in no source loop are dropped: GCC places some loops at a
  // statement of a function inlined into them (an allocation, a helper's memcpy), where the
  // loop cannot be recognized.
  std::map<int, LoopState> states;  // by index into `loops`
  auto state_for = [&](int idx) -> LoopState& {
    LoopState& s = states[idx];
    s.loop = idx;
    s.line = loops[idx].line;
    return s;
  };
  LoopState dropped;  // collects what belongs to a loop that was dropped

  LoopState* pending = nullptr;  // the loop of the last "couldn't vectorize loop"
  for (const Message& m : candidate_messages(compiler_output, file)) {
    const int idx = innermost_loop_at(loops, m.line, m.column);
    if (m.optimized) {
      pending = nullptr;
      int bytes = 0;
      if (idx < 0 || !loop_vectorized(m.text, &bytes)) continue;  // versioning, SLP
      LoopState& s = state_for(idx);
      s.vectorized = true;
      s.bytes = std::max(s.bytes, bytes);
      continue;
    }
    if (m.text.rfind("couldn't vectorize loop", 0) == 0) {
      pending = idx >= 0 ? &state_for(idx) : &dropped;
      pending->missed = true;
      continue;
    }
    if (m.text.rfind("not vectorized", 0) != 0) continue;  // e.g. "statement clobbers memory"
    // The reason follows the loop it is about, at the statement that stopped GCC: inside that
    // loop, or in a function inlined there. A reason inside an unrelated loop is that loop's.
    LoopState* s = pending;
    if (idx >= 0 && (!pending || (pending->loop >= 0 && idx != pending->loop &&
                                  !loop_contains(loops[pending->loop], loops[idx]) &&
                                  !loop_contains(loops[idx], loops[pending->loop]))))
      s = &state_for(idx);
    if (!s || s == &dropped) continue;
    s->missed = true;
    if (s->reason.empty()) {
      s->reason = tidy_reason(m.text);
      s->reason_line = m.line;
    }
  }

  const std::set<std::string> vector_types = vector_type_names(source);
  std::vector<const LoopState*> missed;
  for (const auto& [key, s] : states) {
    bool inner = true;  // no other reported loop inside it
    for (const auto& [other_key, o] : states)
      if (other_key != key && loop_contains(loops[s.loop], loops[o.loop])) inner = false;
    if (!inner) {
      if (!s.vectorized) ++report.outer_missed;
      continue;
    }
    ++report.hot_loops;
    if (s.vectorized) {
      ++report.vectorized;
      report.widest_bytes = std::max(report.widest_bytes, s.bytes);
      report.vectorized_lines.push_back(s.line);
      if (s.bytes > 0 && s.bytes <= 8 &&
          report.narrow_loops.size() < VectorizationReport::kMaxMissedLoops)
        report.narrow_loops.push_back(
            {s.line, source_line(source, s.line), fmt::format("{}-byte vectors", s.bytes), s.line});
      continue;
    }
    const std::string body = s.loop >= 0 ? loops[s.loop].header + loops[s.loop].body : "";
    if (uses_explicit_simd(body, vector_types) || names_vector_type(s.reason)) {
      ++report.explicit_simd;
      continue;
    }
    ++report.missed;
    missed.push_back(&s);
  }
  std::sort(missed.begin(), missed.end(),
            [](const LoopState* a, const LoopState* b) { return a->line < b->line; });
  std::sort(report.vectorized_lines.begin(), report.vectorized_lines.end());
  for (const LoopState* s : missed) {
    if (report.missed_loops.size() >= VectorizationReport::kMaxMissedLoops) break;
    report.missed_loops.push_back({s->line, source_line(source, s->line),
                                   s->reason.empty() ? "couldn't vectorize loop" : s->reason,
                                   s->reason_line ? s->reason_line : s->line});
  }
  return report;
}

}  // namespace kf::agents
