#include "agents/profile_disasm.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "support/text_scan.h"

namespace kf::agents {
namespace {

struct Instruction {
  uint64_t address = 0;
  std::string mnemonic;
  std::vector<std::string> operands;
  std::string target;  // "<sym>" of a call/jump, offset removed
};

struct Function {
  std::string name;
  std::vector<Instruction> code;
  std::set<std::string> references;  // symbols named by relocations and branch targets
};

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// "sym+0x13" / "sym-0x4" -> "sym".
std::string strip_offset(const std::string& s) {
  return std::string(strip_hex_offset(s));
}

// objdump's lines are parsed by linear scanners (support/text_scan.h says why: the candidate
// names its symbols, and a 1 MB name overflowed std::regex's stack). Each matches exactly what
// the regex in its comment matched.

// `^[0-9a-fA-F]+ <(.*)>:$` -> the symbol.
std::optional<std::string_view> function_header(std::string_view line) {
  const size_t hex = run_length(line, is_hex_digit);
  if (hex == 0 || line.substr(hex, 2) != " <") return std::nullopt;
  std::string_view rest = line.substr(hex + 2);
  if (rest.size() < 2 || rest.substr(rest.size() - 2) != ">:") return std::nullopt;
  rest.remove_suffix(2);
  if (!dot_matches_all(rest)) return std::nullopt;
  return rest;
}

// `^\s*[0-9a-fA-F]+: R_\S+\s+(.*)$` -> the relocation's symbol (with its addend).
std::optional<std::string_view> relocation(std::string_view line) {
  std::string_view s = line.substr(run_length(line, is_regex_space));
  const size_t hex = run_length(s, is_hex_digit);
  if (hex == 0 || s.substr(hex, 4) != ": R_") return std::nullopt;
  s.remove_prefix(hex + 4);
  const size_t type = run_length(s, [](char c) { return !is_regex_space(c); });
  if (type == 0) return std::nullopt;
  s.remove_prefix(type);
  const size_t space = run_length(s, is_regex_space);
  if (space == 0) return std::nullopt;
  s.remove_prefix(space);
  if (!dot_matches_all(s)) return std::nullopt;
  return s;
}

// `^\s*([0-9a-fA-F]+):\t(.*)$` -> the address and the instruction text.
std::optional<std::pair<std::string_view, std::string_view>> instruction_line(
    std::string_view line) {
  std::string_view s = line.substr(run_length(line, is_regex_space));
  const size_t hex = run_length(s, is_hex_digit);
  if (hex == 0 || s.substr(hex, 2) != ":\t") return std::nullopt;
  const std::string_view text = s.substr(hex + 2);
  if (!dot_matches_all(text)) return std::nullopt;
  return std::pair{s.substr(0, hex), text};
}

Instruction parse_instruction(std::string text) {
  Instruction ins;
  const size_t hash = text.find('#');  // "# 55 <sym+0x55>": objdump's comment
  if (hash != std::string::npos) text = text.substr(0, hash);
  std::istringstream in(text);
  static const std::set<std::string> prefixes = {
      "cs",   "ds",   "ss",    "es",    "fs",   "gs",      "data16", "rep",
      "repz", "repe", "repnz", "repne", "lock", "notrack", "bnd",    "addr32"};
  std::string word;
  while (in >> word && prefixes.count(word)) {
  }
  ins.mnemonic = word;
  std::string rest;
  std::getline(in, rest);
  rest = trim(rest);
  const size_t lt = rest.find('<');
  if (lt != std::string::npos && rest.back() == '>') {
    ins.target = strip_offset(rest.substr(lt + 1, rest.size() - lt - 2));
    rest = trim(rest.substr(0, lt));
  }
  int depth = 0;
  std::string cur;
  for (char c : rest) {
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      ins.operands.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!trim(cur).empty()) ins.operands.push_back(trim(cur));
  return ins;
}

// Functions of the disassembly by demangled name, in order of appearance.
std::map<std::string, Function> parse_functions(const std::string& text,
                                                std::vector<std::string>* order) {
  std::map<std::string, Function> fns;
  Function* cur = nullptr;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (const auto name = function_header(line)) {
      order->push_back(std::string(*name));
      cur = &fns[std::string(*name)];
      cur->name = std::string(*name);
      continue;
    }
    if (!cur) continue;
    if (const auto sym = relocation(line)) {
      cur->references.insert(strip_offset(trim(std::string(*sym))));
      continue;
    }
    const auto insn = instruction_line(line);
    if (!insn) continue;
    Instruction ins = parse_instruction(std::string(insn->second));
    if (ins.mnemonic.empty()) continue;
    ins.address = *parse_hex_saturating(insn->first);
    if (!ins.target.empty()) cur->references.insert(ins.target);
    cur->code.push_back(std::move(ins));
  }
  return fns;
}

bool has_memory(const std::string& operand) {
  return operand.find('[') != std::string::npos;
}

bool mentions(const std::vector<std::string>& operands, const char* reg) {
  for (const auto& o : operands)
    if (o.find(reg) != std::string::npos) return true;
  return false;
}

// Strips `word` from the front of `s` if it is there.
bool eat(std::string_view& s, std::string_view word) {
  if (s.substr(0, word.size()) != word) return false;
  s.remove_prefix(word.size());
  return true;
}

bool eat_one_of(std::string_view& s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words)
    if (eat(s, w)) return true;
  return false;
}

// `^v?f(n?)m(add|sub)(sub|add)?(132|213|231)(ps|pd|ss|sd)$`
bool is_fma_mnemonic(std::string_view m) {
  eat(m, "v");
  if (!eat(m, "f")) return false;
  eat(m, "n");
  if (!eat(m, "m") || !eat_one_of(m, {"add", "sub"})) return false;
  eat_one_of(m, {"sub", "add"});
  if (!eat_one_of(m, {"132", "213", "231"})) return false;
  return m == "ps" || m == "pd" || m == "ss" || m == "sd";
}

// `^v?(add|sub|...|range)(ps|pd|ss|sd)$` (no operation starts with 'v', so the 'v' is a prefix).
bool is_arith_mnemonic(std::string_view m) {
  static const std::set<std::string_view> ops = {
      "add",    "sub",   "mul",     "div",     "max",      "min",    "sqrt",   "rcp",
      "rsqrt",  "rcp14", "rsqrt14", "rcp28",   "rsqrt28",  "scalef", "hadd",   "hsub",
      "addsub", "dp",    "getexp",  "getmant", "rndscale", "round",  "reduce", "range"};
  eat(m, "v");
  if (m.size() < 3) return false;
  const std::string_view suffix = m.substr(m.size() - 2);
  if (suffix != "ps" && suffix != "pd" && suffix != "ss" && suffix != "sd") return false;
  return ops.count(m.substr(0, m.size() - 2)) > 0;
}

// `^v?(p?cmp|test|ptest|u?comis|bt).*`
bool is_compare_mnemonic(std::string_view m) {
  eat(m, "v");
  return (m.starts_with("cmp") || m.starts_with("pcmp") || m.starts_with("test") ||
          m.starts_with("ptest") || m.starts_with("comis") || m.starts_with("ucomis") ||
          m.starts_with("bt")) &&
         dot_matches_all(m);
}

void classify(const Instruction& ins, InstructionCounts& mix) {
  const std::string& m = ins.mnemonic;
  if (m.find("nop") != std::string::npos) return;
  ++mix.total;
  const bool is_fma = is_fma_mnemonic(m) || m == "vdpbf16ps";
  const std::string suffix = m.size() >= 2 ? m.substr(m.size() - 2) : "";
  const bool packed = suffix == "ps" || suffix == "pd";
  if (is_fma) {
    if (!packed)
      ++mix.fma_scalar;
    else if (mentions(ins.operands, "zmm"))
      ++mix.fma_zmm;
    else if (mentions(ins.operands, "ymm"))
      ++mix.fma_ymm;
    else
      ++mix.fma_xmm;
  } else if (is_arith_mnemonic(m)) {
    ++(packed ? mix.packed_arith : mix.scalar_arith);
  }
  if (m.find("gather") != std::string::npos) ++mix.gathers;
  if (m.find("scatter") != std::string::npos) ++mix.scatters;

  if (m == "lea" || m.rfind("prefetch", 0) == 0 || m[0] == 'j' || m == "call" || m == "ret") return;
  bool any_memory = false;
  for (const auto& o : ins.operands) any_memory = any_memory || has_memory(o);
  if (!any_memory) return;
  const bool first_is_memory = !ins.operands.empty() && has_memory(ins.operands.front());
  if (first_is_memory && !is_compare_mnemonic(m))
    ++mix.stores;
  else
    ++mix.loads;
}

// Address ranges [target, branch] of the innermost loops of f: backward branches within f
// whose range holds no other such range.
std::vector<std::pair<uint64_t, uint64_t>> innermost_loops(const Function& f) {
  std::set<std::pair<uint64_t, uint64_t>> ranges;
  for (const Instruction& ins : f.code) {
    if (ins.mnemonic[0] != 'j' || ins.target != f.name || ins.operands.empty()) continue;
    const std::string& op = ins.operands.front();
    if (op.empty() || op.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) continue;
    const uint64_t to = *parse_hex_saturating(op);
    if (to <= ins.address) ranges.insert({to, ins.address});
  }
  std::vector<std::pair<uint64_t, uint64_t>> inner;
  for (const auto& r : ranges) {
    bool holds_other = false;
    for (const auto& o : ranges)
      if (o != r && o.first >= r.first && o.second <= r.second) holds_other = true;
    if (!holds_other) inner.push_back(r);
  }
  return inner;
}

bool is_library(const std::string& qualified) {
  return qualified.rfind("std::", 0) == 0 || qualified.rfind("__gnu_cxx::", 0) == 0 ||
         qualified.rfind("__", 0) == 0 || qualified.rfind("operator", 0) == 0;
}

}  // namespace

std::string symbol_base_name(const std::string& demangled, std::string* qualified) {
  // The text before the parameter list, template arguments removed.
  std::string name;
  int depth = 0;
  for (char c : demangled) {
    if (c == '(' && depth == 0) break;
    if (c == '<') ++depth;
    if (depth == 0) name += c;
    if (c == '>' && depth > 0) --depth;
  }
  const size_t space = name.find_last_of(' ');
  if (space != std::string::npos) name = name.substr(space + 1);
  const size_t dot = name.find('.');
  if (dot != std::string::npos && dot > 0) name = name.substr(0, dot);
  if (qualified) *qualified = name;
  const size_t colons = name.rfind("::");
  return colons == std::string::npos ? name : name.substr(colons + 2);
}

InstructionMix count_instructions(const std::string& objdump_text, const std::string& function) {
  InstructionMix mix;
  std::vector<std::string> order;
  const std::map<std::string, Function> fns = parse_functions(objdump_text, &order);
  auto matching = [&](const std::string& base) {
    std::vector<std::string> out;
    for (const auto& name : order) {
      std::string qualified;
      if (symbol_base_name(name, &qualified) == base && !is_library(qualified)) out.push_back(name);
    }
    return out;
  };
  std::vector<std::string> queue = matching(function);
  // Inlined: into the bridge the judge's entry calls (kforge_bind, in the solution's own
  // translation unit), or into kf_entry where a solution defines its own entry.
  for (const char* entry : {"kforge_bind", "kf_entry"}) {
    if (!queue.empty()) break;
    queue = matching(entry);
    mix.inlined_into_entry = !queue.empty();
  }
  if (queue.empty()) {
    mix.unavailable =
        "the disassembly has no function named '" + function + "' (nor kforge_bind, kf_entry)";
    return mix;
  }
  std::set<std::string> counted;
  while (!queue.empty()) {
    const std::string name = queue.back();
    queue.pop_back();
    if (!counted.insert(name).second) continue;
    mix.symbols.push_back(name);
    const Function& f = fns.at(name);
    const auto loops = innermost_loops(f);
    mix.innermost_loops += static_cast<int>(loops.size());
    for (const Instruction& ins : f.code) {
      classify(ins, mix.all);
      for (const auto& [from, to] : loops) {
        if (ins.address < from || ins.address > to) continue;
        classify(ins, mix.loops);
        break;
      }
    }
    for (const std::string& ref : f.references) {
      std::string qualified;
      symbol_base_name(ref, &qualified);
      if (fns.count(ref) && !counted.count(ref) && !is_library(qualified) &&
          (mix.inlined_into_entry || symbol_base_name(ref) != "kf_entry"))
        queue.push_back(ref);
    }
  }
  mix.available = true;
  return mix;
}

}  // namespace kf::agents
