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

size_t edit_distance(std::string_view a, std::string_view b)
{
    // Optimal string alignment distance: a swapped pair of neighbours counts
    // as one edit, the commonest typo in parameter names.
    const size_t n = a.size(), m = b.size();
    std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
    for (size_t i = 0; i <= n; ++i)
        d[i][0] = i;
    for (size_t j = 0; j <= m; ++j)
        d[0][j] = j;
    for (size_t i = 1; i <= n; ++i) {
        for (size_t j = 1; j <= m; ++j) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[n][m];
}

} // namespace weft::params
