// How often a text holds a piece: the page and picture tests count elements this way.
//
//   EXPECT_EQ(testing::count(svg, "<circle"), 4);
#pragma once

#include <string>

namespace kf::testing {

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace kf::testing
