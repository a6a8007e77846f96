// Helpers for the IR and codegen tests (not a test target: no _test.cpp suffix).
//
// expect_checks: golden tests in the style of LLVM FileCheck / Triton lit tests. Each check is a
// substring that must occur in `text`, in order, each after the end of the previous match:
//
//   expect_checks(to_string(stmt), {
//       "parallel for (i, 0, M) {",   // CHECK:
//       "C[i*N + j] = 0.0f",          // CHECK:
//   });
//
// On failure it reports the first check not found and the text searched.
#pragma once

#include <gtest/gtest.h>

#include <source_location>
#include <string>
#include <vector>

namespace kf::testing_ir {

inline ::testing::AssertionResult checks_match(const std::string& text,
                                               const std::vector<std::string>& checks) {
  size_t pos = 0;
  for (size_t i = 0; i < checks.size(); ++i) {
    size_t at = text.find(checks[i], pos);
    if (at == std::string::npos) {
      return ::testing::AssertionFailure() << "CHECK " << i << " not found after offset " << pos
                                           << ": \"" << checks[i] << "\"\n--- text ---\n"
                                           << text << "--- end ---";
    }
    pos = at + checks[i].size();
  }
  return ::testing::AssertionSuccess();
}

// Adds a test failure at the caller's line when the checks do not match.
inline void expect_checks(const std::string& text, const std::vector<std::string>& checks,
                          std::source_location loc = std::source_location::current()) {
  ::testing::AssertionResult r = checks_match(text, checks);
  if (!r) ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line())) << r.message();
}

}  // namespace kf::testing_ir
