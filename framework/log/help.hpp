// SPDX-License-Identifier: BSD-3-Clause
// Help-message catalogs: text files help-<framework>-<component>.txt (or
// help-<topic-area>.txt for the framework itself) with [topic] sections and
// named arguments written {name}. Messages that would repeat are aggregated:
// the first is shown, later identical ones are counted and summarized.
//
// File syntax:
//   # comment lines, only before the first section
//   [topic-name]
//   Text of the topic, with {argument} placeholders. {{ and }} are literal
//   braces. The text runs to the next [topic] line; trailing blank lines
//   are dropped.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.hpp"

namespace weft::log {

using HelpArgs = std::vector<std::pair<std::string, std::string>>;

// Replaces {name} by the value of the first argument called name; {{ and }}
// become { and }. An unknown {name} stays visible as {name}, so a missing
// argument shows up in the output instead of silently vanishing.
std::string substitute_args(std::string_view text, const HelpArgs &args);

class HelpCatalog {
public:
    // Directories searched, in order, for catalog files.
    void set_search_path(std::vector<std::string> dirs);
    const std::vector<std::string> &search_path() const { return dirs_; }

    // The rendered text of [topic] in file with {name} replaced. Errors name
    // the file and topic and where it was searched. A {name} without an
    // argument is left visible as {name}.
    Result<std::string> render(const std::string &file, const std::string &topic,
                               const HelpArgs &args) const;

    // The topics of file, in file order (for error messages, tools, tests).
    Result<std::vector<std::string>> topics(const std::string &file) const;

    // Lint for catalog authors and tests: reports text before the first
    // topic, duplicate and empty topics, and lone braces that are neither an
    // argument nor {{ / }}. render() tolerates all of these.
    Status check(const std::string &file) const;

    // Renders and passes to the sink unless an identical message (same file,
    // topic and arguments) was already shown; then it is only counted. The
    // same topic with different arguments (another device, another host) is
    // a different message and is shown. If the catalog cannot be read, a
    // fallback message that still names file, topic and every argument, plus
    // the reason, is shown, so no message is lost.
    void show(const std::string &file, const std::string &topic, const HelpArgs &args);

    // Aggregation on (default) or off (every request is shown; the lead's
    // parameter mca_base_help_aggregate maps here).
    void set_aggregate(bool on);
    bool aggregate() const;

    // For aggregated messages, one line per distinct message that was
    // suppressed at least once, naming count, file, topic and arguments:
    //   "2 more identical help messages help-btl-tcp.txt / no-nics
    //    (device=eth1) were suppressed"
    // followed by one line saying how to see them all. Empty when nothing
    // was suppressed. Called at finalize; resets the counts (messages already
    // shown stay suppressed).
    std::vector<std::string> summarize_suppressed();

    // Where framed messages go: the sink gets the whole frame, lines joined
    // by '\n', without a final newline. The default writes it to stderr
    // with one write(2). An empty sink restores the default.
    void set_sink(std::function<void(const std::string &)> sink);

private:
    struct Seen {
        std::string file;
        std::string topic;
        HelpArgs args;
        int suppressed = 0;   // identical requests since the last summary
    };

    Result<std::string> find_topic(const std::string &file, const std::string &topic) const;
    Result<std::string> read_file(const std::string &file, std::string *path) const;
    void emit(const std::string &framed);

    std::vector<std::string> dirs_;
    mutable std::mutex mu_;
    std::map<std::string, Seen> seen_;   // key (file, topic, args) -> record
    bool aggregate_ = true;
    std::function<void(const std::string &)> sink_;
};

} // namespace weft::log
