// Status and Expected<T>: the error channel for bad input and failing environments.
//
// A bug in kforge stops loudly through KF_CHECK (check.h). Anything a user or a candidate can
// cause — a malformed task file, a compiler that is missing, a failed system call — returns a
// Status or an Expected<T> whose message says where (file, line) and what was expected.
//
//   Expected<Task> t = load_task(dir);
//   if (!t) return t.error();          // propagate
//   use(*t);
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "support/check.h"

namespace kf {

class Status {
 public:
  Status() = default;  // ok
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& message() const { return message_; }

  // Prefixes context, e.g. "loading task foo: " + message.
  Status with_context(const std::string& context) const {
    if (ok()) return *this;
    return Status(context + ": " + message_);
  }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

inline Status ok_status() {
  return Status();
}

template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Status error) : v_(std::move(error)) {  // NOLINT: implicit by design
    KF_CHECK(!std::get<Status>(v_).ok()) << "Expected constructed from an ok Status";
  }

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    KF_CHECK(has_value()) << "value() on error: " << error().message();
    return std::get<T>(v_);
  }
  const T& value() const& {
    KF_CHECK(has_value()) << "value() on error: " << error().message();
    return std::get<T>(v_);
  }
  T&& value() && {
    KF_CHECK(has_value()) << "value() on error: " << error().message();
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Status& error() const {
    KF_CHECK(!has_value()) << "error() on a value";
    return std::get<Status>(v_);
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kf

// Propagates a failed Status from an expression returning Status.
#define KF_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::kf::Status kf_status_ = (expr);        \
    if (!kf_status_.ok()) return kf_status_; \
  } while (0)
