// KF_CHECK: invariants of kforge itself. A failure is a kforge bug: it prints the condition,
// file, line and the streamed context, then aborts.
//
//   KF_CHECK(n >= 0) << "negative size " << n;
#pragma once

#include <sstream>
#include <string>

namespace kf::detail {

class CheckFailure {
 public:
  CheckFailure(const char* cond, const char* file, int line);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    os_ << v;
    return *this;
  }

 private:
  std::ostringstream os_;
};

}  // namespace kf::detail

#define KF_CHECK(cond) \
  if (cond) {          \
  } else               \
    ::kf::detail::CheckFailure(#cond, __FILE__, __LINE__)
