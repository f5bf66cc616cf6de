// SPDX-License-Identifier: BSD-3-Clause
// The parameter registry (see registry.hpp for the model).
#include "params/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <istream>

#include <sys/stat.h>

#include "core/strings.hpp"

namespace weft::params {
namespace {

using str::iequals;
using str::join;
using str::trim;

bool valid_param_name(std::string_view s)
{
    if (s.empty())
        return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            return false;
    return true;
}

// No parameter line is longer than this; a longer one is skipped without
// being held, so a hostile file cannot make every process allocate it.
constexpr size_t kMaxLineBytes = 64 * 1024;

enum class LineRead { Line, TooLong, End };

// Reads the next line (without its newline) into line, keeping at most max
// bytes of it; the rest of a longer line is read and dropped.
LineRead read_line(std::istream &in, std::string &line, size_t max)
{
    line.clear();
    std::streambuf *sb = in.rdbuf();
    bool any = false, too_long = false;
    for (int c = sb->sbumpc(); c != std::char_traits<char>::eof(); c = sb->sbumpc()) {
        any = true;
        if (c == '\n')
            break;
        if (line.size() < max)
            line.push_back(static_cast<char>(c));
        else
            too_long = true;
    }
    if (!any)
        return LineRead::End;
    return too_long ? LineRead::TooLong : LineRead::Line;
}

// Named values of an INT parameter: "none=0" -> {"none", 0}.
struct Named {
    std::string name;
    int64_t value;
};

Result<std::vector<Named>> named_values(const Definition &def)
{
    std::vector<Named> out;
    for (const auto &e : def.enumerators) {
        auto eq = e.find('=');
        if (eq == std::string::npos)
            return Status(WEFT_ERR_BAD_PARAM, "parameter " + def.full_name() + ": enumerator '" +
                                                  e + "' of an int parameter must be name=value");
        auto v = parse_int(e.substr(eq + 1));
        if (!v.ok())
            return Status(WEFT_ERR_BAD_PARAM, "parameter " + def.full_name() + ": enumerator '" +
                                                  e + "': " + v.status().message());
        out.push_back({e.substr(0, eq), v.value()});
    }
    return out;
}

struct Converted {
    std::string text;
    std::variant<bool, int64_t, uint64_t, double, std::string, ListSpec> value;
};

// Parses text by the parameter's type; the error says what is accepted.
Result<Converted> convert(const Definition &def, std::string_view raw)
{
    std::string text(trim(raw));
    switch (def.type) {
    case Type::Bool: {
        auto v = parse_bool(text);
        if (!v.ok())
            return v.status();
        return Converted{v.value() ? "true" : "false", v.value()};
    }
    case Type::Int: {
        auto named = named_values(def);
        if (!named.ok())
            return named.status();
        for (const auto &n : named.value())
            if (iequals(n.name, text))
                return Converted{n.name, n.value};
        auto v = parse_int(text);
        if (!v.ok()) {
            if (named.value().empty())
                return v.status();
            std::vector<std::string> names;
            for (const auto &n : named.value())
                names.push_back(n.name);
            return Status(WEFT_ERR_BAD_VALUE, "'" + text + "' is not valid: accepted are " +
                                                  join(names, ", ") + " or an integer");
        }
        for (const auto &n : named.value())
            if (n.value == v.value())
                return Converted{n.name, v.value()};
        return Converted{std::to_string(v.value()), v.value()};
    }
    case Type::Size: {
        auto v = parse_size(text);
        if (!v.ok())
            return v.status();
        return Converted{std::to_string(v.value()), v.value()};
    }
    case Type::Double: {
        auto v = parse_double(text);
        if (!v.ok())
            return v.status();
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", v.value());
        // Prefer the shortest text that reads back the same value.
        for (int prec = 1; prec <= 17; ++prec) {
            char tmp[64];
            std::snprintf(tmp, sizeof tmp, "%.*g", prec, v.value());
            if (std::strtod(tmp, nullptr) == v.value()) {
                std::snprintf(buf, sizeof buf, "%s", tmp);
                break;
            }
        }
        return Converted{buf, v.value()};
    }
    case Type::String:
        return Converted{text, text};
    case Type::Enum:
        for (const auto &e : def.enumerators)
            if (iequals(e, text))
                return Converted{e, e};
        return Status(WEFT_ERR_BAD_VALUE, "'" + text + "' is not valid: accepted values are " +
                                              join(def.enumerators, ", "));
    case Type::List: {
        auto v = parse_list(text);
        if (!v.ok())
            return v.status();
        std::string canon = v.value().str();
        return Converted{canon, std::move(v.value())};
    }
    }
    return Status(WEFT_ERROR, "unknown parameter type");
}

} // namespace

Registry::Registry() = default;
Registry::~Registry() = default;

Status Registry::add(Definition def)
{
    const std::string full = def.full_name();
    auto fail = [&](const std::string &why) {
        return Status(WEFT_ERR_BAD_PARAM, "cannot register parameter '" + full + "': " + why);
    };
    if (!valid_param_name(full))
        return fail("names may contain only letters, digits and '_'");
    if (def.level < 1 || def.level > 9)
        return fail("level " + std::to_string(def.level) + " is outside 1..9");
    if (def.type == Type::Enum && def.enumerators.empty())
        return fail("an enum parameter needs enumerators");
    if (by_name_.count(full))
        return Status(WEFT_ERR_EXISTS, "parameter '" + full + "' is already registered");
    std::vector<std::string> aliases = def.synonyms;
    aliases.insert(aliases.end(), def.deprecated.begin(), def.deprecated.end());
    for (const auto &a : aliases) {
        if (!valid_param_name(a))
            return fail("synonym '" + a + "' is not a valid name");
        if (by_name_.count(a) || a == full)
            return Status(WEFT_ERR_EXISTS, "synonym '" + a + "' of '" + full +
                                               "' is already a registered name");
    }
    auto def_value = convert(def, def.default_text);
    if (!def_value.ok())
        return fail("bad default '" + def.default_text + "': " + def_value.status().message());

    auto p = std::make_unique<Param>();
    p->def_ = std::move(def);
    p->full_name_ = full;
    p->settings_[static_cast<int>(Source::Default)] = {p->def_.default_text, Origin{}};
    Param &param = *p;
    params_.push_back(std::move(p));
    by_name_[full] = &param;
    for (const auto &a : aliases)
        by_name_[a] = &param;
    recompute(param);

    // Apply values that arrived before registration, in arrival order.
    std::vector<std::pair<std::string, Pending>> waiting;
    for (const auto &n : [&] {
             std::vector<std::string> names{full};
             names.insert(names.end(), aliases.begin(), aliases.end());
             return names;
         }()) {
        auto it = pending_.find(n);
        if (it == pending_.end())
            continue;
        for (auto &pd : it->second)
            waiting.emplace_back(n, std::move(pd));
        pending_.erase(it);
    }
    std::stable_sort(waiting.begin(), waiting.end(),
                     [](const auto &a, const auto &b) { return a.second.seq < b.second.seq; });
    for (auto &[name, pd] : waiting) {
        Origin o = pd.origin;
        if (name != full)
            o.via = name;
        Status st = apply(param, pd.value, o);
        if (!st.ok())
            errors_.push_back(st);
    }
    return Status::success();
}

Status Registry::set(std::string_view name, std::string_view value, const Origin &origin)
{
    if (!valid_param_name(name))
        return Status(WEFT_ERR_BAD_PARAM, "'" + std::string(name) + "' (" + origin.describe() +
                                              ") is not a parameter name: use letters, digits "
                                              "and '_' only");
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
        pending_[std::string(name)].push_back({std::string(value), origin, next_seq_++});
        return Status::success();
    }
    Origin o = origin;
    if (name != it->second->full_name_)
        o.via = std::string(name);
    return apply(*it->second, value, o);
}

Status Registry::apply(Param &p, std::string_view value, const Origin &origin)
{
    auto conv = convert(p.def_, value);
    if (!conv.ok()) {
        std::string set_as = origin.via.empty() ? p.full_name_ : origin.via;
        std::string where = origin.source == Source::Environment ? "WEFT_MCA_" + set_as : set_as;
        return Status(WEFT_ERR_BAD_VALUE, "bad value for parameter " + p.full_name_ + " (set as " +
                                              where + " from " + origin.describe() + "): " +
                                              conv.status().message());
    }
    if (!origin.via.empty() &&
        std::find(p.def_.deprecated.begin(), p.def_.deprecated.end(), origin.via) !=
            p.def_.deprecated.end())
        note_deprecated(p, origin);
    p.settings_[static_cast<int>(origin.source)] = {std::string(value), origin};
    return recompute(p);
}

Status Registry::recompute(Param &p)
{
    for (int s = kNumSources - 1; s >= 0; --s) {
        if (!p.settings_[s])
            continue;
        auto conv = convert(p.def_, p.settings_[s]->first);
        if (!conv.ok())
            continue;   // validated on entry; cannot happen, but never crash
        p.text_ = std::move(conv.value().text);
        p.value_ = std::move(conv.value().value);
        p.origin_ = p.settings_[s]->second;
        return Status::success();
    }
    return Status(WEFT_ERROR, "parameter " + p.full_name_ + " has no value");
}

void Registry::note_deprecated(const Param &p, const Origin &origin)
{
    if (!warned_deprecated_.insert(origin.via).second)
        return;
    std::string where = origin.source == Source::Environment ? "WEFT_MCA_" + origin.via : origin.via;
    warnings_.push_back("parameter " + where + " (" + origin.describe() +
                        ") is deprecated: use " + p.full_name_ + " instead");
}

Status Registry::load_file(const std::string &path, Source source)
{
    // A directory opens as a stream that reads nothing: say so instead.
    struct stat sb {};
    if (::stat(path.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode))
        return Status(WEFT_ERR_BAD_PARAM, "parameter file " + path + ": " + std::strerror(EISDIR));
    std::ifstream in(path);
    if (!in) {
        const int err = errno;
        if (err == ENOENT)
            return Status(WEFT_ERR_NOT_FOUND, "parameter file " + path + ": " + std::strerror(err));
        Status st(WEFT_ERR_IO, "cannot read parameter file " + path + ": " + std::strerror(err));
        errors_.push_back(st);
        return st;
    }
    Status first;
    std::string line;
    int lineno = 0;
    for (LineRead got; (got = read_line(in, line, kMaxLineBytes)) != LineRead::End;) {
        ++lineno;
        auto syntax = [&](const std::string &why, std::string_view found) {
            Status st(WEFT_ERR_BAD_VALUE, path + ":" + std::to_string(lineno) + ": " + why +
                                              "; found '" + std::string(found.substr(0, 80)) +
                                              "'. Lines are 'name = value' or '# comment'");
            errors_.push_back(st);
            if (first.ok())
                first = st;
        };
        if (got == LineRead::TooLong) {
            syntax("the line is longer than " + std::to_string(kMaxLineBytes) +
                       " bytes and was skipped",
                   trim(line));
            continue;
        }
        std::string t(trim(line));
        if (t.empty() || t[0] == '#')
            continue;
        auto eq = t.find('=');
        if (eq == std::string::npos) {
            syntax("expected 'name = value'", t);
            continue;
        }
        std::string name(trim(std::string_view(t).substr(0, eq)));
        std::string value(trim(std::string_view(t).substr(eq + 1)));
        if (!valid_param_name(name)) {
            syntax("'" + shown_name(name) + "' is not a parameter name (letters, digits and '_' only)", t);
            continue;
        }
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
            value.back() == value.front())
            value = value.substr(1, value.size() - 2);
        Origin o{source, path, lineno, {}};
        Status st = set(name, value, o);
        if (!st.ok()) {
            errors_.push_back(st);
            if (first.ok())
                first = st;
        }
    }
    return first;
}

void Registry::load_environment(const char *const *envp)
{
    static constexpr std::string_view kPrefix = "WEFT_MCA_";
    for (; envp && *envp; ++envp) {
        std::string_view entry(*envp);
        if (entry.substr(0, kPrefix.size()) != kPrefix)
            continue;
        auto eq = entry.find('=');
        if (eq == std::string_view::npos)
            continue;
        std::string_view name = entry.substr(kPrefix.size(), eq - kPrefix.size());
        Origin o;
        o.source = Source::Environment;
        Status st = set(name, entry.substr(eq + 1), o);
        if (!st.ok())
            errors_.push_back(st);
    }
}

const Param *Registry::find(std::string_view name) const
{
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
}

std::vector<const Param *> Registry::all() const
{
    std::vector<const Param *> out;
    out.reserve(params_.size());
    for (const auto &p : params_)
        out.push_back(p.get());
    return out;
}

std::string Registry::suggest(std::string_view name) const
{
    // Close enough to be a typo: at most 3 edits and less than half the name.
    constexpr size_t kMaxEdits = 3;
    if (name.size() > kMaxSuggestLength)
        return {};
    std::string best;
    size_t best_d = kMaxEdits + 1;
    for (const auto &[candidate, param] : by_name_) {
        size_t d = edit_distance(name, candidate, kMaxEdits);
        if (d < best_d) {
            best_d = d;
            best = param->full_name_;   // suggest the real name, not a deprecated synonym
        }
    }
    if (best_d <= kMaxEdits && best_d * 2 < name.size())
        return best;
    return {};
}

std::vector<UnknownName> Registry::unknown_names() const
{
    std::vector<UnknownName> out;
    for (const auto &[name, list] : pending_)
        if (!list.empty())
            out.push_back({name, list.back().origin, suggest(name)});
    return out;
}

std::vector<std::string> Registry::take_warnings()
{
    std::vector<std::string> out;
    out.swap(warnings_);
    return out;
}

} // namespace weft::params
