// SPDX-License-Identifier: BSD-3-Clause
// Small string helpers shared by the framework and its tools, so each file
// does not grow its own trim/join/split.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace weft::str {

inline std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

inline std::string lower(std::string_view s)
{
    std::string out(s);
    for (char &c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

inline bool iequals(std::string_view a, std::string_view b)
{
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

inline std::string join(const std::vector<std::string> &v, std::string_view sep)
{
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i)
            out += sep;
        out += v[i];
    }
    return out;
}

// Splits on sep, dropping empty pieces ("a::b" -> {"a", "b"}).
inline std::vector<std::string> split(std::string_view s, char sep)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t end = s.find(sep, start);
        if (end == std::string_view::npos)
            end = s.size();
        if (end > start)
            out.emplace_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

} // namespace weft::str
