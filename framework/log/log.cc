// SPDX-License-Identifier: BSD-3-Clause
#include "log/log.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <string>
#include <unistd.h>
#include "core/strings.hpp"

namespace weft::log {
namespace {

using str::iequals;
using str::trim;

struct NamedLevel {
    const char *name;
    int level;
};

// Ascending, so the "highest name at or below" search can walk it backwards.
constexpr std::array<NamedLevel, 7> kLevels{{
    {"none", WEFT_LOG_NONE},
    {"error", WEFT_LOG_ERROR},
    {"warn", WEFT_LOG_WARN},
    {"info", WEFT_LOG_INFO},
    {"debug", WEFT_LOG_DEBUG},
    {"trace", WEFT_LOG_TRACE},
    {"max", WEFT_LOG_MAX},
}};

Status bad_verbosity(std::string_view text)
{
    return Status(WEFT_ERR_BAD_VALUE,
                  "bad verbosity '" + std::string(text) +
                      "': accepted values are none, error, warn, info, debug, trace, max "
                      "or a number 0..100");
}

int clamp_level(int level) { return std::clamp(level, int{WEFT_LOG_NONE}, int{WEFT_LOG_MAX}); }

void stderr_sink(std::string_view line)
{
    std::string out;
    out.reserve(line.size() + 1);
    out.append(line);
    out.push_back('\n');
    write_stderr(out);
}

std::string make_prefix()
{
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
        std::snprintf(host, sizeof host, "%s", "unknown-host");
    return "[" + std::string(host) + ":" + std::to_string(static_cast<long>(getpid())) + "] ";
}

} // namespace

void write_stderr(std::string_view text)
{
    while (!text.empty()) {
        ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;   // stderr is gone; there is nobody left to tell
        }
        text.remove_prefix(static_cast<size_t>(n));
    }
}

Result<int> parse_verbosity(std::string_view text)
{
    std::string_view t = trim(text);
    for (const NamedLevel &l : kLevels)
        if (iequals(t, l.name))
            return l.level;

    // Only a plain decimal number: "1e2", "0x10" or "-5" are mistakes to report.
    int value = -1;
    const char *end = t.data() + t.size();
    auto [ptr, ec] = std::from_chars(t.data(), end, value);
    if (t.empty() || ec != std::errc() || ptr != end || value < 0 || value > WEFT_LOG_MAX)
        return bad_verbosity(text);
    return value;
}

const std::vector<std::string> &verbosity_enumerators()
{
    static const std::vector<std::string> list = [] {
        std::vector<std::string> v;
        for (const NamedLevel &l : kLevels)
            v.push_back(std::string(l.name) + "=" + std::to_string(l.level));
        return v;
    }();
    return list;
}

const char *level_name(int level)
{
    for (auto it = kLevels.rbegin(); it != kLevels.rend(); ++it)
        if (it->level <= level)
            return it->name;
    return kLevels.front().name;   // negative: below every name
}

Logger::Logger() : sink_(stderr_sink), prefix_(make_prefix()) {}

void Logger::set_verbosity(std::string_view framework, int level)
{
    std::lock_guard lock(mu_);
    auto it = levels_.find(framework);
    if (it == levels_.end())
        levels_.emplace(std::string(framework), clamp_level(level));
    else
        it->second = clamp_level(level);
}

int Logger::verbosity(std::string_view framework) const
{
    std::lock_guard lock(mu_);
    auto it = levels_.find(framework);
    return it == levels_.end() ? clamp_level(default_level_.load()) : it->second;
}

bool Logger::enabled(std::string_view framework, int level) const
{
    return level > 0 && level <= verbosity(framework);
}

void Logger::write(std::string_view framework, std::string_view component, int level,
                   std::string_view message)
{
    if (!enabled(framework, level))
        return;

    std::string head = prefix_;
    head.append(framework);
    if (!component.empty()) {
        head.push_back('/');
        head.append(component);
    }
    head.push_back(' ');
    head.append(level_name(level));
    head.append(": ");

    // "text\n" is one line, not a line and an empty one.
    if (!message.empty() && message.back() == '\n')
        message.remove_suffix(1);

    // The lock spans the whole message so its lines stay together in-process.
    std::lock_guard lock(mu_);
    std::string line;
    for (;;) {
        size_t nl = message.find('\n');
        line.assign(head);
        line.append(message.substr(0, nl));
        sink_(line);
        if (nl == std::string_view::npos)
            break;
        message.remove_prefix(nl + 1);
    }
}

void Logger::set_sink(Sink sink)
{
    std::lock_guard lock(mu_);
    sink_ = sink ? std::move(sink) : Sink(stderr_sink);
}

} // namespace weft::log
