#include "support/check.h"

#include <cstdio>
#include <cstdlib>

namespace kf::detail {

CheckFailure::CheckFailure(const char* cond, const char* file, int line) {
  os_ << file << ":" << line << ": kforge internal error: check failed: " << cond << " ";
}

CheckFailure::~CheckFailure() {
  std::string s = os_.str();
  std::fprintf(stderr, "%s\n", s.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace kf::detail
