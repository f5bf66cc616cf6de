// SPDX-License-Identifier: BSD-3-Clause
// Logging: per-framework verbosity with named levels, one output format.
//   [host:pid] btl/tcp warn: message
// Verbosity comes from <framework>_base_verbose, which accepts the names
// none, error, warn, info, debug, trace, max or a number 0..100.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <weft/host.h>

#include "core/status.hpp"

namespace weft::log {

// "none"=0 "error"=10 "warn"=20 "info"=40 "debug"=60 "trace"=80 "max"=100
// (case-insensitive), or a number 0..100. Anything else is WEFT_ERR_BAD_VALUE
// with a message listing what is accepted. The enumerators list is for
// registering <fw>_base_verbose as an INT parameter with named values.
Result<int> parse_verbosity(std::string_view text);
const std::vector<std::string> &verbosity_enumerators();   // {"none=0", "error=10", ...}
const char *level_name(int level);                          // nearest name at or below

// Writes text to stderr in one write(2) when the kernel allows (retrying
// partial writes), so output of concurrent processes does not interleave
// within it. Errors are ignored: stderr is the last resort.
void write_stderr(std::string_view text);

class Logger {
public:
    using Sink = std::function<void(std::string_view line)>;

    Logger();
    // Verbosity per framework; frameworks without a setting use the default
    // (warn). Levels are clamped to 0..100.
    void set_verbosity(std::string_view framework, int level);
    void set_default_verbosity(int level) { default_level_ = level; }
    int verbosity(std::string_view framework) const;
    // level > 0 && level <= verbosity(framework): at the default verbosity
    // errors and warnings are written; verbosity none silences everything.
    bool enabled(std::string_view framework, int level) const;

    // Writes the message if enabled, as one or more lines
    //   [host:pid] btl/tcp warn: text
    // (the prefix repeated on every line of a multi-line message; one
    // trailing newline is dropped). component may be empty ("btl" alone) or
    // "base".
    void write(std::string_view framework, std::string_view component, int level,
               std::string_view message);

    // Where lines go: the sink gets each line without its newline, one call
    // per line, never concurrently. It must not call back into the Logger.
    // The default writes line + '\n' to stderr with one write(2), so lines of
    // concurrent processes do not interleave. An empty sink restores it.
    void set_sink(Sink sink);
    // "[host:pid] " prefix (computed once).
    const std::string &prefix() const { return prefix_; }

private:
    mutable std::mutex mu_;
    std::map<std::string, int, std::less<>> levels_;
    std::atomic<int> default_level_{WEFT_LOG_WARN};
    Sink sink_;
    std::string prefix_;
};

} // namespace weft::log
