// Error and Result<T>: how every fallible step in the parent reports what went wrong.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace confine::sys {

// One failure: what we were doing and, if a syscall failed, its errno.
struct Error {
  std::string what;
  int err = 0;

  // "mount `/proc`: Operation not permitted" — the crun style.
  [[nodiscard]] std::string message() const;
  // Adds context while propagating: "setting up the workspace: open `/x`: ...".
  [[nodiscard]] Error wrap(const std::string& context) const { return {context + ": " + what, err}; }
};

inline Error errno_error(std::string what) { return Error{std::move(what), errno}; }
inline Error plain_error(std::string what) { return Error{std::move(what), 0}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design, like std::expected
  Result(Error e) : v_(std::move(e)) {}      // NOLINT

  [[nodiscard]] bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& value() const& { return std::get<T>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  [[nodiscard]] const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace confine::sys
