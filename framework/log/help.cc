// SPDX-License-Identifier: BSD-3-Clause
#include "log/help.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "log/log.hpp"
#include "core/strings.hpp"

namespace weft::log {
namespace {

using weft::str::join;

const std::string kRule(74, '-');

// Printed once after the summary lines; the lead registers the parameter.
const char *const kAggregateHint =
    "Set the parameter mca_base_help_aggregate=false to see every help message.";

struct Section {
    std::string topic;
    std::vector<std::string> lines;
    size_t first_line = 0;   // 1-based line number of the [topic] line
};

struct ParsedFile {
    std::vector<Section> sections;
    std::vector<std::string> problems;   // for check(); render() ignores them
};

bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
}

bool is_topic_char(char c) { return is_name_char(c) || c == ':' || c == '+'; }

bool is_blank(std::string_view line)
{
    return line.find_first_not_of(" \t") == std::string_view::npos;
}

// "[topic]" with nothing but topic characters inside, so prose such as
// "[see below]" or "[1]" in a message body is not mistaken for a section.
bool parse_topic_line(std::string_view line, std::string *topic)
{
    size_t end = line.find_last_not_of(" \t");
    if (end == std::string_view::npos)
        return false;
    line = line.substr(0, end + 1);
    if (line.size() < 3 || line.front() != '[' || line.back() != ']')
        return false;
    std::string_view inner = line.substr(1, line.size() - 2);
    if (!std::all_of(inner.begin(), inner.end(), is_topic_char))
        return false;
    topic->assign(inner);
    return true;
}

// If text[pos] opens an argument "{name}", the length of "{name}"; else 0.
size_t argument_length(std::string_view text, size_t pos)
{
    size_t i = pos + 1;
    while (i < text.size() && is_name_char(text[i]))
        ++i;
    if (i == pos + 1 || i >= text.size() || text[i] != '}')
        return 0;
    return i - pos + 1;
}

void trim_trailing_blank_lines(std::vector<std::string> &lines)
{
    while (!lines.empty() && is_blank(lines.back()))
        lines.pop_back();
}

void note_lone_braces(const Section &s, std::vector<std::string> &problems)
{
    for (size_t n = 0; n < s.lines.size(); ++n) {
        std::string_view line = s.lines[n];
        for (size_t i = 0; i < line.size(); ++i) {
            char c = line[i];
            if (c != '{' && c != '}')
                continue;
            if (i + 1 < line.size() && line[i + 1] == c) {
                ++i;   // {{ or }}
                continue;
            }
            size_t arg = c == '{' ? argument_length(line, i) : 0;
            if (arg) {
                i += arg - 1;
                continue;
            }
            problems.push_back("line " + std::to_string(s.first_line + 1 + n) + " in [" +
                               s.topic + "]: lone '" + c + "'; write " + c + c +
                               " for a literal brace");
        }
    }
}

ParsedFile parse_catalog(const std::string &text)
{
    ParsedFile out;
    std::istringstream in(text);
    std::string line, topic;
    for (size_t n = 1; std::getline(in, line); ++n) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();   // CRLF files edited elsewhere
        if (parse_topic_line(line, &topic)) {
            out.sections.push_back({topic, {}, n});
        } else if (!out.sections.empty()) {
            out.sections.back().lines.push_back(line);
        } else if (!is_blank(line) && line.front() != '#') {
            out.problems.push_back("line " + std::to_string(n) +
                                   ": text before the first [topic] is ignored");
        }
    }
    std::vector<std::string> seen;
    for (Section &s : out.sections) {
        trim_trailing_blank_lines(s.lines);
        if (std::find(seen.begin(), seen.end(), s.topic) != seen.end())
            out.problems.push_back("line " + std::to_string(s.first_line) + ": topic [" +
                                   s.topic + "] repeats an earlier one and is never used");
        seen.push_back(s.topic);
        if (s.lines.empty())
            out.problems.push_back("line " + std::to_string(s.first_line) + ": topic [" +
                                   s.topic + "] has no text");
        note_lone_braces(s, out.problems);
    }
    return out;
}

std::string join_lines(const std::vector<std::string> &lines) { return join(lines, "\n"); }

// One-line form of an argument value for the summary: newlines folded and
// long values cut, so one summary line stays one line.
std::string short_value(const std::string &value)
{
    constexpr size_t kMax = 60;
    std::string v = value;
    std::replace(v.begin(), v.end(), '\n', ' ');
    if (v.size() > kMax)
        v = v.substr(0, kMax - 3) + "...";
    return v;
}

std::string args_inline(const HelpArgs &args)
{
    std::vector<std::string> parts;
    for (const auto &[name, value] : args)
        parts.push_back(name + "=" + short_value(value));
    return join(parts, ", ");
}

// Without the catalog text we can still say everything the caller knew.
std::string fallback_text(const std::string &file, const std::string &topic,
                          const HelpArgs &args, const Status &why)
{
    std::string out = "weft could not show help message [" + topic + "] from " + file +
                      ":\n  " + why.message();
    if (args.empty())
        return out + "\nThe message has no arguments.";
    out += "\nThe message's arguments were:";
    for (const auto &[name, value] : args) {
        std::string v = value;
        for (size_t p = v.find('\n'); p != std::string::npos; p = v.find('\n', p + 1))
            v.insert(p + 1, "    ");
        out += "\n  " + name + " = " + v;
    }
    return out;
}

std::string frame(const std::string &body) { return kRule + "\n" + body + "\n" + kRule; }

// Identity of a message for aggregation. NUL cannot occur in file names and
// practically never in arguments, so the encoding is unambiguous enough.
std::string message_key(const std::string &file, const std::string &topic,
                        const HelpArgs &args)
{
    std::string key = file;
    key.push_back('\0');
    key += topic;
    for (const auto &[name, value] : args) {
        key.push_back('\0');
        key += name;
        key.push_back('\0');
        key += value;
    }
    return key;
}

std::string summary_line(const std::string &file, const std::string &topic,
                         const HelpArgs &args, int count)
{
    std::string line = std::to_string(count) + " more identical help message" +
                       (count == 1 ? "" : "s") + " " + file + " / " + topic;
    if (!args.empty())
        line += " (" + args_inline(args) + ")";
    return line + (count == 1 ? " was suppressed" : " were suppressed");
}

} // namespace

std::string substitute_args(std::string_view text, const HelpArgs &args)
{
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
            out.push_back(c);
            ++i;
            continue;
        }
        size_t len = c == '{' ? argument_length(text, i) : 0;
        if (!len) {
            out.push_back(c);   // a lone brace is kept as written
            continue;
        }
        std::string_view name = text.substr(i + 1, len - 2);
        auto it = std::find_if(args.begin(), args.end(),
                               [&](const auto &a) { return a.first == name; });
        out.append(it != args.end() ? std::string_view(it->second) : text.substr(i, len));
        i += len - 1;
    }
    return out;
}

void HelpCatalog::set_search_path(std::vector<std::string> dirs) { dirs_ = std::move(dirs); }

Result<std::string> HelpCatalog::read_file(const std::string &file, std::string *path) const
{
    for (const std::string &dir : dirs_) {
        std::filesystem::path p = std::filesystem::path(dir) / file;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(p, ec))
            continue;
        *path = p.string();
        std::ifstream in(p, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in.good() && !in.eof())
            return Status(WEFT_ERR_IO, "cannot read help file " + *path +
                                           " (check its permissions)");
        return text.str();
    }
    std::string where = dirs_.empty() ? std::string("the help search path is empty")
                                      : "searched: " + join(dirs_, ", ");
    return Status(WEFT_ERR_NOT_FOUND, "help file " + file + " not found (" + where +
                                          "); is weft installed completely?");
}

Result<std::string> HelpCatalog::find_topic(const std::string &file,
                                            const std::string &topic) const
{
    std::string path;
    Result<std::string> text = read_file(file, &path);
    if (!text.ok())
        return text.status();
    ParsedFile parsed = parse_catalog(text.value());
    std::vector<std::string> names;
    for (const Section &s : parsed.sections) {
        if (s.topic == topic)
            return join_lines(s.lines);
        names.push_back(s.topic);
    }
    std::string available = names.empty() ? std::string("the file has no topics")
                                           : "available topics: " + join(names, ", ");
    return Status(WEFT_ERR_NOT_FOUND,
                  "help topic [" + topic + "] not found in " + path + " (" + available + ")");
}

Result<std::string> HelpCatalog::render(const std::string &file, const std::string &topic,
                                        const HelpArgs &args) const
{
    Result<std::string> text = find_topic(file, topic);
    if (!text.ok())
        return text.status();
    return substitute_args(text.value(), args);
}

Result<std::vector<std::string>> HelpCatalog::topics(const std::string &file) const
{
    std::string path;
    Result<std::string> text = read_file(file, &path);
    if (!text.ok())
        return text.status();
    std::vector<std::string> names;
    for (const Section &s : parse_catalog(text.value()).sections)
        names.push_back(s.topic);
    return names;
}

Status HelpCatalog::check(const std::string &file) const
{
    std::string path;
    Result<std::string> text = read_file(file, &path);
    if (!text.ok())
        return text.status();
    ParsedFile parsed = parse_catalog(text.value());
    if (parsed.sections.empty())
        parsed.problems.push_back("no [topic] sections");
    if (parsed.problems.empty())
        return Status::success();
    return Status(WEFT_ERR_BAD_VALUE, path + ": " + join(parsed.problems, "; " + path + ": "));
}

void HelpCatalog::show(const std::string &file, const std::string &topic, const HelpArgs &args)
{
    {
        std::lock_guard lock(mu_);
        if (aggregate_) {
            auto [it, first] = seen_.try_emplace(message_key(file, topic, args));
            if (!first) {
                ++it->second.suppressed;
                return;
            }
            it->second.file = file;
            it->second.topic = topic;
            it->second.args = args;
        }
    }
    // Rendering reads a file: done outside the lock.
    Result<std::string> text = render(file, topic, args);
    emit(frame(text.ok() ? text.value() : fallback_text(file, topic, args, text.status())));
}

void HelpCatalog::set_aggregate(bool on)
{
    std::lock_guard lock(mu_);
    aggregate_ = on;
}

bool HelpCatalog::aggregate() const
{
    std::lock_guard lock(mu_);
    return aggregate_;
}

std::vector<std::string> HelpCatalog::summarize_suppressed()
{
    std::lock_guard lock(mu_);
    std::vector<std::string> lines;
    for (auto &[key, seen] : seen_) {
        if (seen.suppressed == 0)
            continue;
        lines.push_back(summary_line(seen.file, seen.topic, seen.args, seen.suppressed));
        seen.suppressed = 0;
    }
    if (!lines.empty())
        lines.push_back(kAggregateHint);
    return lines;
}

void HelpCatalog::set_sink(std::function<void(const std::string &)> sink)
{
    std::lock_guard lock(mu_);
    sink_ = std::move(sink);
}

void HelpCatalog::emit(const std::string &framed)
{
    // Under the lock so frames from different threads never interleave.
    std::lock_guard lock(mu_);
    if (sink_)
        sink_(framed);
    else
        write_stderr(framed + "\n");
}

} // namespace weft::log
