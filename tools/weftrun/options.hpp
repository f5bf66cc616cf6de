// SPDX-License-Identifier: BSD-3-Clause
// weftrun's command line: what the user asked for, parsed and validated,
// before anything (session dir, PMIx, hwloc) is touched.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"

namespace weftrun {

enum class BindTo { Default, Core, Numa, None };
enum class MapBy { Core, Numa, Slot };

const char *bind_to_name(BindTo b);   // "core", "numa", "none", "default"
const char *map_by_name(MapBy m);

struct Options {
    int np = 0;                        // 0: one rank per core (like mpirun without -np)
    std::vector<std::pair<std::string, std::string>> mca;     // --mca name value, in order
    // -x VAR or -x VAR=val; value empty with has_value false means "take it
    // from weftrun's environment".
    struct Export { std::string name; std::string value; bool has_value; };
    std::vector<Export> exports;
    bool tag_output = false;
    BindTo bind_to = BindTo::Default;
    MapBy map_by = MapBy::Core;
    bool report_bindings = false;
    // --report[=text|json[:FILE]]: the ranks' rte_base_report ("" none).
    std::string report;
    bool oversubscribe = false;
    int timeout_s = 0;                 // 0: none
    bool stack_traces = false;         // --get-stack-traces: gdb on the ranks at --timeout
    bool help = false;
    bool version = false;
    std::vector<std::string> argv;     // program and its arguments
    // Index into mca of an --mca whose VALUE was the last word before the
    // program. "--mca btl prog 2000" (VALUE forgotten) takes prog as the
    // value and 2000 as the program; main() says so when the program cannot
    // be run and that value can.
    std::optional<size_t> mca_value_before_program;
};

// Parses argv[1..]. Options end at the first word that is not an option (the
// program) or after "--". On error the Status message is the complete text
// to print (without the "weftrun: " prefix) including a hint.
weft::Result<Options> parse_options(int argc, char **argv);

// The --help text.
std::string usage();

} // namespace weftrun
