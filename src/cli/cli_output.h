// What the commands print about failures. Messages may quote untrusted text (a task file, a
// schedule, a candidate's diagnostics), so they go through terminal_text: valid UTF-8, and no
// control character that a terminal would act on.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string_view>

#include "support/json_text.h"

namespace kf {

// "error: MESSAGE" on stderr.
inline void print_error(std::string_view message) {
  fmt::print(stderr, "error: {}\n", terminal_text(message));
}

}  // namespace kf
