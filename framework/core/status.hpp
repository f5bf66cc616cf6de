// SPDX-License-Identifier: BSD-3-Clause
// Status and Result: how framework code reports failure without exceptions
// crossing the C ABI. A Status carries a weft_status_t code and a message
// that says what failed, where, and what to do about it.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <weft/status.h>

namespace weft {

class Status {
public:
    Status() = default;
    Status(int code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status success() { return {}; }
    bool ok() const { return code_ == WEFT_SUCCESS; }
    int code() const { return code_; }
    const std::string &message() const { return message_; }

private:
    int code_ = WEFT_SUCCESS;
    std::string message_;
};

template <class T>
class Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Status error) : v_(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(v_); }
    T &value() { return std::get<T>(v_); }
    const T &value() const { return std::get<T>(v_); }
    const Status &status() const {
        static const Status success;
        return ok() ? success : std::get<Status>(v_);
    }

private:
    std::variant<T, Status> v_;
};

} // namespace weft
