// Logging: per-framework verbosity with named levels, one output format.
//   [host:pid] btl/tcp warn: message
// Verbosity comes from <framework>_base_verbose, which accepts the names
// none, error, warn, info, debug, trace, max or a number 0..100.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <weft/host.h>

#include "core/status.hpp"

namespace weft::log {

// "none"=0 "error"=10 "warn"=20 "info"=40 "debug"=60 "trace"=80 "max"=100,
// or a number 0..100. The enumerators list, for registering the parameter.
Result<int> parse_verbosity(std::string_view text);
const std::vector<std::string> &verbosity_enumerators();   // {"none=0", "error=10", ...}
const char *level_name(int level);                          // nearest name at or below

class Logger {
public:
    using Sink = std::function<void(std::string_view line)>;

    Logger();
    // Verbosity per framework; frameworks without a setting use the default.
    void set_verbosity(std::string_view framework, int level);
    void set_default_verbosity(int level) { default_level_ = level; }
    int verbosity(std::string_view framework) const;
    bool enabled(std::string_view framework, int level) const;

    // Writes one line if enabled. component may be empty ("btl" alone) or
    // "base". A warning or error is always written unless verbosity is none.
    void write(std::string_view framework, std::string_view component, int level,
               std::string_view message);

    // Where lines go (stderr by default). Tests install their own sink.
    void set_sink(Sink sink);
    // "[host:pid] " prefix (computed once).
    const std::string &prefix() const { return prefix_; }

private:
    mutable std::mutex mu_;
    std::map<std::string, int, std::less<>> levels_;
    int default_level_ = WEFT_LOG_WARN;
    Sink sink_;
    std::string prefix_;
};

} // namespace weft::log
