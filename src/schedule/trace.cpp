#include "schedule/trace.h"

#include <cctype>
#include <sstream>

#include "schedule/primitive_table.h"
#include "support/hash.h"
#include "support/text_scan.h"

namespace kf::sched {

namespace {

using Arg = PrimitiveArg;
using Syntax = PrimitiveInfo;

const std::vector<PrimitiveInfo>& syntaxes() {
  return primitive_table();
}

const PrimitiveInfo& syntax_of(PrimitiveKind k) {
  return primitive_info(k);
}

bool is_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return s.back() != '.' && s.find("..") == std::string::npos;
}

bool is_integer(const std::string& s) {
  size_t i = (s.size() > 1 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size() || s.size() - i > 12) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

std::string describe(Arg a) {
  switch (a) {
    case Arg::name:
      return "a name";
    case Arg::loop_ref:
      return "a loop reference STAGE.LOOP";
    case Arg::integer:
      return "an integer";
  }
  return "?";
}

}  // namespace

std::string to_string(PrimitiveKind k) {
  return syntax_of(k).word;
}

std::string Primitive::to_string() const {
  std::string s = sched::to_string(kind);
  for (const std::string& a : args) s += " " + a;
  return s;
}

std::string Schedule::to_string() const {
  std::string s;
  for (const Primitive& p : steps) s += p.to_string() + "\n";
  return s;
}

std::string Schedule::hash() const {
  return content_hash("kforge-schedule\n" + to_string());
}

LoopRef split_loop_ref(const std::string& ref) {
  size_t dot = ref.find('.');
  if (dot == std::string::npos) return {ref, ""};
  return {ref.substr(0, dot), ref.substr(dot + 1)};
}

Expected<Primitive> parse_primitive(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) return Status::error("expected a primitive");
  const Syntax* syn = nullptr;
  for (const Syntax& s : syntaxes())
    if (words[0] == s.word) syn = &s;
  if (!syn) {
    std::string known;
    for (const Syntax& s : syntaxes()) known += std::string(known.empty() ? "" : ", ") + s.word;
    return Status::error("expected a primitive (" + known + "), got '" + excerpt(words[0]) + "'");
  }
  const size_t got = words.size() - 1, max = syn->args.size(),
               min = syn->args.size() - static_cast<size_t>(syn->optional);
  if (got < min || (!syn->variadic && got > max))
    return Status::error(
        "expected '" + syn->usage() + "' (" + std::to_string(min) +
        (syn->variadic ? " or more" : (min == max ? "" : "-" + std::to_string(max))) +
        " arguments), got " + std::to_string(got));
  Primitive p;
  p.kind = syn->kind;
  for (size_t i = 1; i < words.size(); ++i) {
    const Arg want = syn->args[std::min(i - 1, max - 1)];
    const std::string& w = words[i];
    bool ok = false;
    switch (want) {
      case Arg::name:
        ok = is_name(w);
        break;
      case Arg::loop_ref:
        ok = is_name(w) && w.find('.') != std::string::npos;
        break;
      case Arg::integer:
        ok = is_integer(w);
        break;
    }
    if (!ok)
      return Status::error("expected " + describe(want) + " as argument " + std::to_string(i) +
                           " of '" + syn->usage() + "', got '" + excerpt(w) + "'");
    p.args.push_back(w);
  }
  return p;
}

Expected<Schedule> parse_schedule(std::string_view text, const std::string& file) {
  Schedule s;
  s.file = file;
  int line = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    ++line;
    pos = end + 1;
    if (size_t hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
    bool blank = true;
    for (char c : l) blank = blank && std::isspace(static_cast<unsigned char>(c));
    if (!blank) {
      auto p = parse_primitive(l);
      if (!p) return Status::error(file + ":" + std::to_string(line) + ": " + p.error().message());
      p->line = line;
      s.steps.push_back(std::move(*p));
    }
    if (end == text.size()) break;
  }
  return s;
}

}  // namespace kf::sched
