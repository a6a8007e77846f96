#include "agents/profile_disasm.h"

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <sstream>

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
  static const std::regex re(R"([+-]0x[0-9a-fA-F]+$)");
  return std::regex_replace(s, re, "");
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
  static const std::regex header(R"(^[0-9a-fA-F]+ <(.*)>:$)");
  static const std::regex reloc(R"(^\s*[0-9a-fA-F]+: R_\S+\s+(.*)$)");
  static const std::regex insn(R"(^\s*([0-9a-fA-F]+):\t(.*)$)");
  std::map<std::string, Function> fns;
  Function* cur = nullptr;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, header)) {
      order->push_back(m[1].str());
      cur = &fns[m[1].str()];
      cur->name = m[1].str();
      continue;
    }
    if (!cur) continue;
    if (std::regex_match(line, m, reloc)) {
      cur->references.insert(strip_offset(trim(m[1].str())));
      continue;
    }
    if (!std::regex_match(line, m, insn)) continue;
    Instruction ins = parse_instruction(m[2].str());
    if (ins.mnemonic.empty()) continue;
    ins.address = std::stoull(m[1].str(), nullptr, 16);
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

void classify(const Instruction& ins, InstructionCounts& mix) {
  const std::string& m = ins.mnemonic;
  if (m.find("nop") != std::string::npos) return;
  ++mix.total;
  static const std::regex fma(R"(^v?f(n?)m(add|sub)(sub|add)?(132|213|231)(ps|pd|ss|sd)$)");
  static const std::regex arith(
      "^v?(add|sub|mul|div|max|min|sqrt|rcp|rsqrt|rcp14|rsqrt14|rcp28|rsqrt28|scalef|hadd|hsub|"
      "addsub|dp|getexp|getmant|rndscale|round|reduce|range)(ps|pd|ss|sd)$");
  std::smatch sm;
  const bool is_fma = std::regex_match(m, sm, fma) || m == "vdpbf16ps";
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
  } else if (std::regex_match(m, arith)) {
    ++(packed ? mix.packed_arith : mix.scalar_arith);
  }
  if (m.find("gather") != std::string::npos) ++mix.gathers;
  if (m.find("scatter") != std::string::npos) ++mix.scatters;

  if (m == "lea" || m.rfind("prefetch", 0) == 0 || m[0] == 'j' || m == "call" || m == "ret") return;
  bool any_memory = false;
  for (const auto& o : ins.operands) any_memory = any_memory || has_memory(o);
  if (!any_memory) return;
  static const std::regex compare(R"(^v?(p?cmp|test|ptest|u?comis|bt).*)");
  const bool first_is_memory = !ins.operands.empty() && has_memory(ins.operands.front());
  if (first_is_memory && !std::regex_match(m, compare))
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
    const uint64_t to = std::stoull(op, nullptr, 16);
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
  if (queue.empty()) {
    queue = matching("kf_entry");
    mix.inlined_into_entry = !queue.empty();
  }
  if (queue.empty()) {
    mix.unavailable = "the disassembly has no function named '" + function + "' (nor kf_entry)";
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
