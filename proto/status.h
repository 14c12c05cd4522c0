// Errors as values. Internally rgpu returns Status / Result<T>; the OpenCL error code a
// status carries is what the ICD hands to the application at the API edge.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace rgpu {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  // `cl_code` is the OpenCL error the application should see (negative), `msg` says why.
  static Status Error(int32_t cl_code, std::string msg) { return Status(cl_code, std::move(msg)); }
  // A protocol violation: the peer sent something malformed; the session must end.
  static Status Protocol(std::string msg) {
    Status s(-1, std::move(msg));
    s.protocol_ = true;
    return s;
  }

  bool ok() const { return code_ == 0 && !protocol_; }
  bool is_protocol() const { return protocol_; }
  int32_t code() const { return code_; }
  const std::string& message() const { return msg_; }
  std::string ToString() const;

 private:
  Status(int32_t code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  int32_t code_ = 0;
  bool protocol_ = false;
  std::string msg_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status s) : v_(std::move(s)) {}     // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rgpu
