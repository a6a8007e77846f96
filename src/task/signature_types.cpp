#include <array>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "task/signature_internal.h"

namespace kf {
namespace {

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

constexpr std::array<std::string_view, 22> kIntegerTypes = {
    "int",       "unsigned",       "long",      "unsigned long", "long long", "unsigned long long",
    "short",     "unsigned short", "int64_t",   "int32_t",       "int16_t",   "int8_t",
    "uint64_t",  "uint32_t",       "uint16_t",  "uint8_t",       "size_t",    "ssize_t",
    "ptrdiff_t", "intptr_t",       "uintptr_t", "index_t"};

}  // namespace

bool is_type_word(std::string_view w) {
  static constexpr std::array<std::string_view, 33> kWords = {
      "float",        "double",     "int",       "long",    "short",   "unsigned", "signed",
      "char",         "bool",       "void",      "auto",    "size_t",  "ssize_t",  "ptrdiff_t",
      "int8_t",       "int16_t",    "int32_t",   "int64_t", "uint8_t", "uint16_t", "uint32_t",
      "uint64_t",     "intptr_t",   "uintptr_t", "bf16",    "const",   "volatile", "restrict",
      "__restrict__", "__restrict", "typename",  "struct",  "class"};
  for (std::string_view k : kWords)
    if (w == k) return true;
  return false;
}

std::string normalize_type(std::string b) {
  if (starts_with(b, "::")) b.erase(0, 2);
  if (starts_with(b, "std::")) b.erase(0, 5);
  if (b == "bf16") return "kf::bf16";
  // kf::acc_t<T>, acc_t<T>, kf::acc_type<T>::type, acc_type<T>::type
  const std::pair<std::string_view, std::string_view> kAcc[] = {
      {"kf::acc_t<", ""}, {"acc_t<", ""}, {"kf::acc_type<", "::type"}, {"acc_type<", "::type"}};
  for (auto [prefix, suffix] : kAcc) {
    if (!starts_with(b, prefix)) continue;
    const size_t close = b.find('>', prefix.size());
    if (close != std::string::npos && b.substr(close + 1) == suffix)
      return "kf::acc_t<" + b.substr(prefix.size(), close - prefix.size()) + ">";
  }
  static const std::pair<std::string_view, std::string_view> kSame[] = {
      {"signed", "int"},
      {"signed int", "int"},
      {"unsigned int", "unsigned"},
      {"long int", "long"},
      {"signed long", "long"},
      {"signed long int", "long"},
      {"long signed int", "long"},
      {"unsigned long int", "unsigned long"},
      {"long unsigned int", "unsigned long"},
      {"long unsigned", "unsigned long"},
      {"long long int", "long long"},
      {"signed long long", "long long"},
      {"unsigned long long int", "unsigned long long"},
      {"short int", "short"},
      {"unsigned short int", "unsigned short"},
  };
  for (auto [from, to] : kSame)
    if (b == from) return std::string(to);
  return b;
}

std::optional<DType> element_dtype(std::string_view b) {
  if (b == "float") return DType::f32;
  if (b == "double") return DType::f64;
  if (b == "kf::bf16") return DType::bf16;
  return std::nullopt;
}

std::optional<DType> integer_tensor_dtype(std::string_view b) {
  if (b == "int" || b == "int32_t") return DType::i32;
  if (b == "int64_t" || b == "long") return DType::i64;
  return std::nullopt;
}

bool is_integer_type(std::string_view b) {
  for (std::string_view k : kIntegerTypes)
    if (b == k) return true;
  return false;
}

bool is_int64_type(std::string_view b) {
  return b == "int64_t" || b == "long";
}

std::optional<double> parse_default_number(const std::vector<CppToken>& t, size_t b, size_t e) {
  bool negative = false;
  if (b < e && (t[b].is("-") || t[b].is("+"))) {
    negative = t[b].is("-");
    ++b;
  }
  if (e != b + 1 || t[b].kind != CppTokenKind::number) return std::nullopt;
  std::string s;
  for (char c : t[b].text)
    if (c != '\'') s += c;
  const bool hex = starts_with(s, "0x") || starts_with(s, "0X");
  while (!s.empty() && std::string_view("lLuU").find(s.back()) != std::string_view::npos)
    s.pop_back();
  const bool floating = hex ? s.find_first_of("pP") != std::string::npos
                            : s.find_first_of(".eE") != std::string::npos;
  if (floating && !s.empty() && (s.back() == 'f' || s.back() == 'F')) s.pop_back();
  if (s.empty()) return std::nullopt;
  if (!hex && !floating && s.size() > 1 && s[0] == '0') return std::nullopt;  // octal, binary
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return negative ? -v : v;
}

}  // namespace kf
