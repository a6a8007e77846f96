#include "schedule/trace.h"

#include <cctype>
#include <sstream>

#include "support/hash.h"
#include "support/text_scan.h"

namespace kf::sched {

namespace {

// The argument forms of a primitive.
enum class Arg {
  name,      // an identifier (dots allowed): a stage, a loop, a new name
  loop_ref,  // STAGE.LOOP
  integer,   // a (signed) integer
};

struct Syntax {
  PrimitiveKind kind;
  const char* word;
  std::vector<Arg> args;
  int optional = 0;       // how many trailing args may be left out
  bool variadic = false;  // the last arg may repeat
  const char* usage;
};

const std::vector<Syntax>& syntaxes() {
  using A = Arg;
  static const std::vector<Syntax> table = {
      {PrimitiveKind::split,
       "split",
       {A::loop_ref, A::name, A::name, A::integer},
       0,
       false,
       "split STAGE.LOOP OUTER INNER FACTOR"},
      {PrimitiveKind::tile,
       "tile",
       {A::name, A::name, A::name, A::integer, A::integer},
       0,
       false,
       "tile STAGE X Y FX FY"},
      {PrimitiveKind::reorder,
       "reorder",
       {A::name, A::name, A::name},
       0,
       true,
       "reorder STAGE LOOP LOOP..."},
      {PrimitiveKind::fuse,
       "fuse",
       {A::name, A::name, A::name, A::name},
       0,
       false,
       "fuse STAGE OUTER INNER FUSED"},
      {PrimitiveKind::vectorize,
       "vectorize",
       {A::loop_ref, A::integer},
       1,
       false,
       "vectorize STAGE.LOOP [LANES]"},
      {PrimitiveKind::unroll, "unroll", {A::loop_ref}, 0, false, "unroll STAGE.LOOP"},
      {PrimitiveKind::parallel, "parallel", {A::loop_ref}, 0, false, "parallel STAGE.LOOP"},
      {PrimitiveKind::compute_at,
       "compute_at",
       {A::name, A::loop_ref},
       0,
       false,
       "compute_at STAGE TARGET.LOOP"},
      {PrimitiveKind::compute_inline,
       "compute_inline",
       {A::name},
       0,
       false,
       "compute_inline STAGE"},
      {PrimitiveKind::compute_root, "compute_root", {A::name}, 0, false, "compute_root STAGE"},
      {PrimitiveKind::cache_read,
       "cache_read",
       {A::name, A::name, A::name},
       0,
       false,
       "cache_read TENSOR CONSUMER NEW"},
      {PrimitiveKind::cache_write,
       "cache_write",
       {A::name, A::name},
       0,
       false,
       "cache_write STAGE NEW"},
      {PrimitiveKind::rfactor,
       "rfactor",
       {A::loop_ref, A::name},
       0,
       false,
       "rfactor STAGE.LOOP NEW"},
      {PrimitiveKind::reorder_storage,
       "reorder_storage",
       {A::name, A::name, A::name},
       0,
       true,
       "reorder_storage STAGE DIM DIM..."},
      {PrimitiveKind::nontemporal, "nontemporal", {A::name}, 0, false, "nontemporal STAGE"},
      {PrimitiveKind::prefetch,
       "prefetch",
       {A::loop_ref, A::integer},
       0,
       false,
       "prefetch STAGE.LOOP DISTANCE"},
      {PrimitiveKind::double_buffer,
       "double_buffer",
       {A::name, A::loop_ref, A::integer},
       1,
       false,
       "double_buffer STAGE CONSUMER.LOOP [EVERY]"},
      {PrimitiveKind::reciprocal, "reciprocal", {A::name}, 0, false, "reciprocal STAGE"},
      {PrimitiveKind::hoist,
       "hoist",
       {A::name, A::name, A::name},
       0,
       true,
       "hoist STAGE NEW VAR VAR..."},
      {PrimitiveKind::vectorize_reductions,
       "vectorize_reductions",
       {A::name, A::integer},
       1,
       false,
       "vectorize_reductions STAGE [LANES]"},
      {PrimitiveKind::approximate, "approximate", {A::name}, 0, false, "approximate STAGE"},
      {PrimitiveKind::align_storage,
       "align_storage",
       {A::name, A::integer},
       1,
       false,
       "align_storage STAGE [ELEMENTS]"},
      {PrimitiveKind::hoist_gathers, "hoist_gathers", {A::name}, 0, false, "hoist_gathers STAGE"},
      {PrimitiveKind::phase_split,
       "phase_split",
       {A::name, A::name},
       0,
       false,
       "phase_split STAGE NEW"},
      {PrimitiveKind::online_softmax,
       "online_softmax",
       {A::name},
       0,
       false,
       "online_softmax MAX_STAGE"},
  };
  return table;
}

const Syntax& syntax_of(PrimitiveKind k) {
  for (const Syntax& s : syntaxes())
    if (s.kind == k) return s;
  return syntaxes().front();
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
        "expected '" + std::string(syn->usage) + "' (" + std::to_string(min) +
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
                           " of '" + syn->usage + "', got '" + excerpt(w) + "'");
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
