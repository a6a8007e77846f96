#include "task/toml_text.h"

#include <fmt/format.h>

#include "support/text_scan.h"

namespace kf {

Expected<toml::table> parse_toml_text(const std::string& text, const std::string& where,
                                      size_t max_bytes) {
  const std::string file = excerpt(where);
  if (max_bytes > 0 && text.size() > max_bytes)
    return Status::error(fmt::format("{}: over {} bytes", file, max_bytes));
  try {
    return toml::parse(text, where);
  } catch (const toml::parse_error& e) {
    return Status::error(fmt::format("{}:{}:{}: TOML syntax error: {}", file, e.source().begin.line,
                                     e.source().begin.column,
                                     excerpt(std::string(e.description()))));
  }
}

}  // namespace kf
