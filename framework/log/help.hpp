// Help-message catalogs: text files help-<framework>-<component>.txt (or
// help-<topic-area>.txt for the framework itself) with [topic] sections and
// named arguments written {name}. Messages that would repeat are aggregated:
// the first is shown, later identical ones are counted and summarized.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"

namespace weft::log {

using HelpArgs = std::vector<std::pair<std::string, std::string>>;

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

    // Renders and passes to the sink unless an identical message (same file,
    // topic and arguments) was already shown; then it is only counted. If the
    // catalog cannot be read, a fallback line that still names file, topic and
    // arguments is shown, so no message is lost.
    void show(const std::string &file, const std::string &topic, const HelpArgs &args);

    // For aggregated messages: "N more identical messages (file [topic])".
    // Called at finalize; resets the counts.
    std::vector<std::string> summarize_suppressed();

    void set_sink(std::function<void(const std::string &)> sink) { sink_ = std::move(sink); }

private:
    Result<std::string> find_topic(const std::string &file, const std::string &topic) const;

    std::vector<std::string> dirs_;
    mutable std::mutex mu_;
    std::map<std::string, int> shown_;   // key -> times requested
    std::map<std::string, std::pair<std::string, std::string>> key_info_; // key -> (file, topic)
    std::function<void(const std::string &)> sink_;
};

} // namespace weft::log
