// SPDX-License-Identifier: BSD-3-Clause
// A tiny JSON writer for weft_info --json: strings escaped per RFC 8259,
// two-space indentation, no dependency. The caller nests begin/end calls
// correctly; keys are given only inside objects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weft::info {

// Escapes text for use inside a JSON string (without the quotes). Control
// characters become \uXXXX (or their short forms); bytes >= 0x80 pass
// through, so UTF-8 stays UTF-8.
std::string json_escape(std::string_view text);

class JsonWriter {
public:
    void begin_object(std::string_view key = {});
    void end_object();
    void begin_array(std::string_view key = {});
    void end_array();
    void string(std::string_view key, std::string_view value);
    void string(std::string_view value) { string({}, value); }
    void number(std::string_view key, int64_t value);
    void boolean(std::string_view key, bool value);
    void null(std::string_view key);

    // The document so far, with a trailing newline once everything is closed.
    std::string str() const { return out_ + (stack_.empty() ? "\n" : ""); }

private:
    void prefix(std::string_view key);   // comma, newline, indentation, "key": 
    void close(char c);

    std::string out_;
    struct Level { bool first = true; };
    std::vector<Level> stack_;
};

} // namespace weft::info
