// SPDX-License-Identifier: BSD-3-Clause
// The parameter registry: typed parameters from every source, each value
// knowing where it came from.
//
// Sources, lowest to highest precedence: default, system file, user file(s),
// environment (WEFT_MCA_<name>), command line (--mca), API. Values may arrive
// before their parameter is registered (the environment is read before
// components open); they wait as "pending" and are applied at registration.
// Names set from any source but never registered are reported by
// unknown_names() with a did-you-mean suggestion.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <weft/host.h>

#include "core/status.hpp"
#include "params/list.hpp"

namespace weft::params {

enum class Type { Bool, Int, Size, Double, String, Enum, List };
const char *type_name(Type t);
Type type_from_c(weft_param_type_t t);

// Ordered by precedence: a later source beats an earlier one.
enum class Source { Default = 0, SystemFile, UserFile, Environment, CommandLine, Api };
inline constexpr int kNumSources = 6;
const char *source_name(Source s);

struct Origin {
    Source source = Source::Default;
    std::string file;   // files only
    int line = 0;       // files only
    std::string via;    // the name used if it was a synonym, else empty

    // "default", "file (/etc/weft-mca-params.conf:12)", "environment",
    // "command line", "api"
    std::string describe() const;
};

struct Definition {
    std::string framework;             // "btl", "mca", "topology"
    std::string component;             // "tcp", "base", or "" for the framework's selection param
    std::string name;                  // short name; "" for the selection param
    Type type = Type::String;
    std::string default_text;
    int level = WEFT_LEVEL_USER_BASIC;
    std::string help;
    std::vector<std::string> enumerators; // Enum: names; Int: "name=value"
    std::vector<std::string> synonyms;    // full names
    std::vector<std::string> deprecated;  // full names (also synonyms, with a warning)

    // btl_tcp_if_include; "btl" for the selection param; "mca_base_verbose".
    std::string full_name() const;
};

// Parsers shared by the registry and by anyone validating text. Each error
// message says what was given and what is accepted.
Result<bool> parse_bool(std::string_view text);
Result<int64_t> parse_int(std::string_view text);
Result<uint64_t> parse_size(std::string_view text);      // 64k, 1M, 2G, 1T (powers of 1024)
Result<double> parse_double(std::string_view text);

// Edit distance (optimal string alignment: insert, delete, substitute, swap),
// or limit + 1 when it is more than limit. Time O(length * limit), memory
// O(length): callers looking for typos pass a small limit.
size_t edit_distance(std::string_view a, std::string_view b, size_t limit = SIZE_MAX);

// Names longer than this get no did-you-mean (no parameter name is that
// long), and messages show at most this much of a name.
inline constexpr size_t kMaxSuggestLength = 256;
// name as messages show it: cut to kMaxSuggestLength characters, saying how
// long it really was, so a hostile file cannot flood the log.
std::string shown_name(std::string_view name);

class Param {
public:
    const Definition &def() const { return def_; }
    const std::string &full_name() const { return full_name_; }
    Type type() const { return def_.type; }

    // The effective value and where it came from.
    const std::string &text() const { return text_; }   // canonical text
    const Origin &origin() const { return origin_; }

    bool as_bool() const { return std::get<bool>(value_); }
    int64_t as_int() const { return std::get<int64_t>(value_); }
    uint64_t as_size() const { return std::get<uint64_t>(value_); }
    double as_double() const { return std::get<double>(value_); }
    const std::string &as_string() const { return text_; } // String and Enum
    const ListSpec &as_list() const { return std::get<ListSpec>(value_); }

private:
    friend class Registry;
    using Value = std::variant<bool, int64_t, uint64_t, double, std::string, ListSpec>;

    Definition def_;
    std::string full_name_;
    std::string text_;
    Value value_;
    Origin origin_;
    // What each source said (last setting per source wins), for provenance.
    std::array<std::optional<std::pair<std::string, Origin>>, kNumSources> settings_;
};

struct UnknownName {
    std::string name;        // as set
    Origin origin;           // where it was set
    std::string suggestion;  // nearest registered name, or empty
};

class Registry {
public:
    Registry();
    ~Registry();
    Registry(const Registry &) = delete;
    Registry &operator=(const Registry &) = delete;

    // Registers a parameter. Fails on a bad definition (duplicate name, bad
    // default, level out of 1..9, enum without enumerators). Values already
    // set for it (or for a synonym) are applied; a bad one is recorded in
    // errors() and the parameter keeps the next-lower source's value.
    Status add(Definition def);

    // Sets a value from a source. A registered parameter validates it now
    // (error: nothing changes); an unknown name waits as pending.
    Status set(std::string_view name, std::string_view value, const Origin &origin);

    // Reads a "name = value" file ('#' comments, blank lines). A path that
    // does not exist (WEFT_ERR_NOT_FOUND) or is a directory
    // (WEFT_ERR_BAD_PARAM) reads nothing and is not kept in errors(): the
    // caller knows whether the file was asked for. A syntax error (a line
    // over 64 KiB is one) reports path:line and the rest of the file is still
    // read; every such error, and a file that cannot be read, is also kept
    // in errors().
    Status load_file(const std::string &path, Source source);
    // Reads every WEFT_MCA_<name>=value entry of envp.
    void load_environment(const char *const *envp);

    // Lookup by full name or synonym; nullptr if not registered.
    const Param *find(std::string_view name) const;
    // All parameters in registration order.
    std::vector<const Param *> all() const;

    // Names set from some source that no registered parameter answers to,
    // each with the nearest registered name when one is close.
    std::vector<UnknownName> unknown_names() const;
    std::string suggest(std::string_view name) const;

    // Problems found while applying values (bad values), in order.
    const std::vector<Status> &errors() const { return errors_; }
    // Warnings (deprecated names used), each once; drained by the caller.
    std::vector<std::string> take_warnings();

private:
    struct Pending {
        std::string value;
        Origin origin;
        uint64_t seq;   // arrival order across names, so a synonym set later wins
    };
    Status apply(Param &p, std::string_view value, const Origin &origin);
    Status recompute(Param &p);
    void note_deprecated(const Param &p, const Origin &origin);

    std::vector<std::unique_ptr<Param>> params_;
    std::map<std::string, Param *, std::less<>> by_name_;   // full names and synonyms
    std::map<std::string, std::vector<Pending>, std::less<>> pending_;
    std::vector<Status> errors_;
    std::vector<std::string> warnings_;
    std::set<std::string, std::less<>> warned_deprecated_;
    uint64_t next_seq_ = 0;
};

} // namespace weft::params
