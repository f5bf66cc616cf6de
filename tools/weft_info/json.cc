// SPDX-License-Identifier: BSD-3-Clause
// The JSON writer of weft_info (see json.hpp).
#include "weft_info/json.hpp"

#include <cstdio>

namespace weft::info {

std::string json_escape(std::string_view text)
{
    std::string out;
    out.reserve(text.size() + 8);
    for (char ch : text) {
        auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += ch;
            }
        }
    }
    return out;
}

void JsonWriter::prefix(std::string_view key)
{
    if (!stack_.empty()) {
        if (!stack_.back().first)
            out_ += ',';
        stack_.back().first = false;
        out_ += '\n';
        out_.append(stack_.size() * 2, ' ');
    }
    if (!key.empty()) {
        out_ += '"';
        out_ += json_escape(key);
        out_ += "\": ";
    }
}

void JsonWriter::close(char c)
{
    bool empty = stack_.back().first;
    stack_.pop_back();
    if (!empty) {
        out_ += '\n';
        out_.append(stack_.size() * 2, ' ');
    }
    out_ += c;
}

void JsonWriter::begin_object(std::string_view key)
{
    prefix(key);
    out_ += '{';
    stack_.push_back({});
}

void JsonWriter::end_object() { close('}'); }

void JsonWriter::begin_array(std::string_view key)
{
    prefix(key);
    out_ += '[';
    stack_.push_back({});
}

void JsonWriter::end_array() { close(']'); }

void JsonWriter::string(std::string_view key, std::string_view value)
{
    prefix(key);
    out_ += '"';
    out_ += json_escape(value);
    out_ += '"';
}

void JsonWriter::number(std::string_view key, int64_t value)
{
    prefix(key);
    out_ += std::to_string(value);
}

void JsonWriter::boolean(std::string_view key, bool value)
{
    prefix(key);
    out_ += value ? "true" : "false";
}

void JsonWriter::null(std::string_view key)
{
    prefix(key);
    out_ += "null";
}

} // namespace weft::info
