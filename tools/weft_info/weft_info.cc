// SPDX-License-Identifier: BSD-3-Clause
// weft_info: shows what the weft framework knows: build configuration,
// frameworks, components (loaded, or failed and why), parameters with their
// values and sources, and the topology. It opens components (which only
// registers their parameters) and initializes none, so it touches no device
// and answers quickly -- except --explain, which initializes the btl modules
// to ask them what they can reach.
//
// Exit status: 0 success, 1 a parameter error or a lookup that failed
// (unknown --param group, topology that cannot load), 2 a usage error.
#include "weft_config.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "weft_info/info.hpp"
#include "rte/runtime.hpp"

namespace {

const char kUsage[] =
    "Usage: weft_info [OPTION]...\n"
    "Show the weft build, its frameworks and components, their parameters and the\n"
    "topology.\n"
    "\n"
    "      (no option)               version, build configuration, component path,\n"
    "                                parameter files, frameworks and components\n"
    "  -a, --all                     everything: all of the above and every\n"
    "                                parameter at level 9\n"
    "      --param GROUP COMPONENT   parameters of GROUP (a framework, mca, topology\n"
    "                                or all) and COMPONENT (a name, base or all);\n"
    "                                may be repeated\n"
    "      --level N                 show parameters up to level N (1..9, default 1;\n"
    "                                9 with --all)\n"
    "      --show-failed             only the components that failed to load or\n"
    "                                open, with file and reason\n"
    "      --topology                topology source, binding, NUMA nodes and the\n"
    "                                network/OpenFabrics devices with their distance\n"
    "      --explain                 which transports this host would use for each\n"
    "                                peer class (self, same node, other node): every\n"
    "                                btl component and module considered, and why it\n"
    "                                was taken or rejected (initializes the modules)\n"
    "      --parsable                one fact per line (ompi_info --parsable style)\n"
    "      --json                    the same facts as one JSON object\n"
    "      --mca NAME VALUE          set a parameter (as on the weftrun command line);\n"
    "                                may be repeated\n"
    "  -V, --version                 print the weft version and exit\n"
    "  -h, --help                    print this help and exit\n"
    "\n"
    "Parameters also come from WEFT_MCA_<name> environment variables and the\n"
    "parameter files (see weft_info(1)).\n";

int usage_error(const std::string &msg)
{
    std::string text = "weft_info: " + msg + "\nTry 'weft_info --help' for more information.\n";
    weft::log::write_stderr(text);
    return 2;
}

bool write_all(const std::string &s)
{
    size_t off = 0;
    while (off < s.size()) {
        ssize_t n = ::write(STDOUT_FILENO, s.data() + off, s.size() - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        off += static_cast<size_t>(n);
    }
    return true;
}

// Parses argv into opts; returns -1 to go on, or an exit status.
int parse_args(int argc, char **argv, weft::info::Options &opts)
{
    using Format = weft::info::Options::Format;
    bool parsable = false, json = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        auto need = [&](int n) {
            if (i + n >= argc)
                return false;
            return true;
        };
        if (a == "-h" || a == "--help") {
            return write_all(kUsage) ? 0 : 1;
        } else if (a == "-V" || a == "--version") {
            return write_all(std::string("weft_info (weft) ") + PACKAGE_VERSION + "\n") ? 0 : 1;
        } else if (a == "-a" || a == "--all") {
            opts.all = true;
        } else if (a == "--parsable" || a == "--parseable") {
            parsable = true;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--show-failed") {
            opts.show_failed = true;
        } else if (a == "--explain") {
            opts.explain = true;
        } else if (a == "--topology") {
            opts.topology = true;
        } else if (a == "--param") {
            if (!need(2))
                return usage_error("--param needs two arguments: GROUP COMPONENT "
                                   "(e.g. --param btl all)");
            opts.params.emplace_back(argv[i + 1], argv[i + 2]);
            i += 2;
        } else if (a == "--mca" || a == "-mca") {
            if (!need(2))
                return usage_error(std::string(a) + " needs two arguments: NAME VALUE");
            opts.mca.emplace_back(argv[i + 1], argv[i + 2]);
            i += 2;
        } else if (a == "--level" || a.rfind("--level=", 0) == 0) {
            std::string v;
            if (a == "--level") {
                if (!need(1))
                    return usage_error("--level needs a number 1..9");
                v = argv[++i];
            } else {
                v = std::string(a.substr(8));
            }
            if (v.size() != 1 || v[0] < '1' || v[0] > '9')
                return usage_error("--level '" + v + "': expected a number 1..9");
            opts.level = v[0] - '0';
            opts.level_given = true;
        } else if (!a.empty() && a[0] == '-') {
            return usage_error("unknown option '" + std::string(a) + "'");
        } else {
            return usage_error("unexpected argument '" + std::string(a) + "'");
        }
    }
    if (parsable && json)
        return usage_error("--parsable and --json exclude each other");
    opts.format = parsable ? Format::Parsable : json ? Format::Json : Format::Pretty;
    return -1;
}

} // namespace

int main(int argc, char **argv)
{
    weft::info::Options opts;
    if (int rc = parse_args(argc, argv, opts); rc >= 0)
        return rc;

    weft::InitOptions init;
    init.command_line = opts.mca;
    init.open_components = true;
    init.extra_groups = weft::rt::param_groups();
    init.extra_params = weft::rt::param_definitions();
    auto fw = weft::Framework::init(init);
    if (!fw.ok()) {
        // The message says what is wrong and what is accepted.
        weft::log::write_stderr("weft_info: " + fw.status().message() + "\n");
        return 1;
    }

    if (opts.explain) {
        auto ex = weft::rt::explain(*fw.value());
        int rc = 0;
        if (!ex.ok()) {
            weft::log::write_stderr("weft_info: --explain: " + ex.status().message() + "\n");
            rc = 1;
        } else if (!write_all(weft::info::render_explain(ex.value(), opts.format))) {
            rc = 1;
        }
        weft::Framework::finalize();
        return rc;
    }

    weft::info::Report report;
    weft::Status st = weft::info::collect(*fw.value(), opts, report);
    int rc = 0;
    if (!st.ok()) {
        weft::log::write_stderr("weft_info: " + st.message() + "\n");
        rc = 1;
    } else {
        std::string out;
        switch (opts.format) {
        case weft::info::Options::Format::Pretty: out = weft::info::render_pretty(report); break;
        case weft::info::Options::Format::Parsable: out = weft::info::render_parsable(report); break;
        case weft::info::Options::Format::Json: out = weft::info::render_json(report); break;
        }
        if (!write_all(out)) {
            weft::log::write_stderr(std::string("weft_info: cannot write output: ") +
                                    std::strerror(errno) + "\n");
            rc = 1;
        }
        // An empty answer to --param would otherwise read as "no parameters".
        const bool none_shown = std::all_of(report.params.begin(), report.params.end(),
                                            [](const auto &g) { return g.params.empty(); });
        if (report.show_params && none_shown && report.params_above_level > 0)
            weft::log::write_stderr("weft_info: " + std::to_string(report.params_above_level) +
                                    " parameter(s) of this selection are above level " +
                                    std::to_string(report.level) +
                                    "; add --level 9 (or --all) to see them\n");
    }
    weft::Framework::finalize();
    return rc;
}
