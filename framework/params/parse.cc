// SPDX-License-Identifier: BSD-3-Clause
// Text parsers for parameter values and the small vocabulary helpers of the
// registry (type and source names, provenance text, edit distance).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "params/registry.hpp"
#include "core/strings.hpp"

namespace weft::params {
namespace {

using str::lower;

Status bad(std::string_view text, const char *accepted)
{
    return Status(WEFT_ERR_BAD_VALUE, "'" + std::string(text) + "' is not valid: " + accepted);
}

} // namespace

const char *type_name(Type t)
{
    switch (t) {
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Size: return "size";
    case Type::Double: return "double";
    case Type::String: return "string";
    case Type::Enum: return "enum";
    case Type::List: return "list";
    }
    return "?";
}

Type type_from_c(weft_param_type_t t)
{
    switch (t) {
    case WEFT_PARAM_BOOL: return Type::Bool;
    case WEFT_PARAM_INT: return Type::Int;
    case WEFT_PARAM_SIZE: return Type::Size;
    case WEFT_PARAM_DOUBLE: return Type::Double;
    case WEFT_PARAM_ENUM: return Type::Enum;
    case WEFT_PARAM_LIST: return Type::List;
    case WEFT_PARAM_STRING: break;
    }
    return Type::String;
}

const char *source_name(Source s)
{
    switch (s) {
    case Source::Default: return "default";
    case Source::SystemFile: return "system file";
    case Source::UserFile: return "user file";
    case Source::Environment: return "environment";
    case Source::CommandLine: return "command line";
    case Source::Api: return "api";
    }
    return "?";
}

std::string Origin::describe() const
{
    std::string out;
    if (source == Source::SystemFile || source == Source::UserFile)
        out = "file (" + file + ":" + std::to_string(line) + ")";
    else
        out = source_name(source);
    if (!via.empty())
        out += " as " + via;
    return out;
}

std::string Definition::full_name() const
{
    std::string out = framework;
    if (!component.empty())
        out += "_" + component;
    if (!name.empty())
        out += "_" + name;
    return out;
}

Result<bool> parse_bool(std::string_view text)
{
    std::string t = lower(std::string(str::trim(text)));
    if (t == "1" || t == "true" || t == "yes" || t == "on" || t == "y" || t == "t" || t == "enabled")
        return true;
    if (t == "0" || t == "false" || t == "no" || t == "off" || t == "n" || t == "f" ||
        t == "disabled")
        return false;
    return bad(text, "accepted are true/false, yes/no, on/off, 1/0");
}

Result<int64_t> parse_int(std::string_view text)
{
    std::string t = std::string(str::trim(text));
    if (t.empty())
        return bad(text, "expected an integer such as 42, -1 or 0x10");
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(t.c_str(), &end, 0);
    if (errno == ERANGE)
        return bad(text, "out of the 64-bit integer range");
    if (end == t.c_str() || *end != '\0')
        return bad(text, "expected an integer such as 42, -1 or 0x10");
    return static_cast<int64_t>(v);
}

Result<uint64_t> parse_size(std::string_view text)
{
    const char *accepted = "expected a byte count such as 4096, 64k, 1M, 2G or 1T "
                           "(k/M/G/T are powers of 1024; an optional B or iB may follow)";
    std::string t = std::string(str::trim(text));
    if (t.empty() || t[0] == '-' || t[0] == '+')
        return bad(text, accepted);
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(t.c_str(), &end, 10);
    if (end == t.c_str() || errno == ERANGE)
        return bad(text, accepted);
    std::string suffix = lower(std::string(str::trim(end)));
    unsigned shift = 0;
    if (!suffix.empty()) {
        switch (suffix[0]) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        case 't': shift = 40; break;
        case 'b': shift = 0; break;
        default: return bad(text, accepted);
        }
        std::string rest = suffix[0] == 'b' ? suffix.substr(1) : suffix.substr(1);
        if (suffix[0] == 'b' ? !rest.empty() : !(rest.empty() || rest == "b" || rest == "ib"))
            return bad(text, accepted);
    }
    if (shift && v > (ULLONG_MAX >> shift))
        return bad(text, "too large for a 64-bit byte count");
    return static_cast<uint64_t>(v) << shift;
}

Result<double> parse_double(std::string_view text)
{
    std::string t = std::string(str::trim(text));
    errno = 0;
    char *end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (t.empty() || end == t.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        return bad(text, "expected a finite number such as 0.5 or 1e-3");
    return v;
}

size_t edit_distance(std::string_view a, std::string_view b, size_t limit)
{
    // Optimal string alignment distance: a swapped pair of neighbours counts
    // as one edit, the commonest typo in parameter names. Only the band of
    // cells within `limit` of the diagonal can stay within `limit`, and three
    // rows are all the recurrence reads, so a long name typed by mistake (or
    // by a hostile file) costs O(length * limit) time and O(length) memory,
    // and a length difference beyond the limit costs nothing.
    const size_t n = a.size(), m = b.size();
    limit = std::min(limit, std::max(n, m));   // no distance exceeds the longer length
    const size_t over = limit + 1;             // "beyond the limit", saturated
    if ((n > m ? n - m : m - n) > limit)
        return over;
    std::vector<size_t> before(m + 1, over), prev(m + 1, over), cur(m + 1, over);
    for (size_t j = 0; j <= std::min(m, limit); ++j)
        prev[j] = j;
    for (size_t i = 1; i <= n; ++i) {
        const size_t lo = i > limit ? i - limit : 1;
        const size_t hi = std::min(m, i + limit);
        // cur still holds a row three rows old; the band writes over the
        // part of it this row and the next two read, except the cell just
        // left of the band.
        cur[lo - 1] = lo == 1 && i <= limit ? i : over;
        size_t row_min = cur[lo - 1];
        for (size_t j = lo; j <= hi; ++j) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t d = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d = std::min(d, before[j - 2] + 1);
            cur[j] = std::min(d, over);
            row_min = std::min(row_min, cur[j]);
        }
        if (row_min > limit)
            return over;   // every path through this row is already too far
        std::swap(before, prev);
        std::swap(prev, cur);
    }
    return std::min(prev[m], over);
}

std::string shown_name(std::string_view name)
{
    if (name.size() <= kMaxSuggestLength)
        return std::string(name);
    return std::string(name.substr(0, kMaxSuggestLength)) + "... (" + std::to_string(name.size()) +
           " characters)";
}

} // namespace weft::params
