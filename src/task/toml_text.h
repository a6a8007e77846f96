// TOML text from a user's file (a task, a team, LLM settings), parsed with a size cap and with
// syntax errors as Status: "FILE:LINE:COL: TOML syntax error: WHAT", the file and the error quoted
// shortly (support/text_scan.h excerpt), never thrown.
//
//   auto root = parse_toml_text(text, "team.toml", 64 << 10);
//   if (!root) return root.error();
#pragma once

#include <toml++/toml.h>

#include <cstddef>
#include <string>

#include "support/status.h"

namespace kf {

// Fails when `text` is over `max_bytes` (0: no cap) or is not TOML; `where` names the file.
Expected<toml::table> parse_toml_text(const std::string& text, const std::string& where,
                                      size_t max_bytes);

}  // namespace kf
