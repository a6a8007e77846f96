// Text made safe for an HTML page: escaping, and C++ source highlighted as escaped spans.
// Everything a report shows comes from the store, and much of it from candidates (source,
// messages, labels) that may be hostile: every string goes through html_escape (or
// highlight_cpp, which escapes every token), so nothing in it becomes markup or script.
//
//   page += "<td>" + html_escape(attempt.strategy) + "</td>";
//   page += "<pre class=code>" + highlight_cpp(candidate.source) + "</pre>";
#pragma once

#include <string>
#include <string_view>

namespace kf::report {

// &, <, >, " and ' as entities; invalid UTF-8 replaced (sanitize_utf8, support/json_text.h);
// control characters other than newline and tab dropped.
std::string html_escape(std::string_view text);

// C++ source as escaped text with <span class="k|c|s|n|p"> around keywords, comments, string
// and character literals, numbers and preprocessor lines. Never fails: text it does not
// recognise is escaped as plain text.
std::string highlight_cpp(std::string_view source);

}  // namespace kf::report
