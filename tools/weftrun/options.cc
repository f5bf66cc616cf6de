// SPDX-License-Identifier: BSD-3-Clause
// Command-line parsing for weftrun. Accepts the Open MPI spellings users type
// (-np, single-dash long options, --opt=value) so existing mpirun command
// lines work unchanged.
#include "weftrun/options.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

namespace weftrun {

const char *bind_to_name(BindTo b)
{
    switch (b) {
    case BindTo::Core: return "core";
    case BindTo::Numa: return "numa";
    case BindTo::None: return "none";
    case BindTo::Default: break;
    }
    return "default";
}

const char *map_by_name(MapBy m)
{
    switch (m) {
    case MapBy::Core: return "core";
    case MapBy::Numa: return "numa";
    case MapBy::Slot: return "slot";
    }
    return "?";
}

std::string usage()
{
    return
        "Usage: weftrun [options] program [args...]\n"
        "\n"
        "Starts N copies of program on this host as one job and serves them PMIx\n"
        "(weft ranks, or any PMIx program). The job ends when every rank has exited;\n"
        "a rank that fails ends it early for all.\n"
        "\n"
        "Options:\n"
        "  -np N, -n N             number of ranks (default: one per hwloc core)\n"
        "  --mca NAME VALUE        set weft parameter NAME for the ranks (exported as\n"
        "                          WEFT_MCA_NAME=VALUE; repeatable; names are checked\n"
        "                          by the ranks, not here)\n"
        "  -x VAR[=VALUE]          export VAR to the ranks, with VALUE or with its value\n"
        "                          in weftrun's environment (repeatable)\n"
        "  --tag-output            prefix every output line with [1,RANK]<stdout>: or\n"
        "                          [1,RANK]<stderr>:\n"
        "  --bind-to core|numa|none\n"
        "                          bind each rank to one core, one NUMA node, or not at\n"
        "                          all (default: core if N <= cores, else none)\n"
        "  --map-by core|numa|slot place ranks round-robin over cores, NUMA nodes or\n"
        "                          slots (one slot per core) (default: core)\n"
        "  --report-bindings       print each rank's binding on stderr\n"
        "  --oversubscribe         allow more ranks than cores\n"
        "  --timeout SECONDS       kill the job after SECONDS and exit 124; first say\n"
        "                          which ranks still run and in what PMIx state\n"
        "  --get-stack-traces      with --timeout: before the kill, print the stack of\n"
        "                          every thread of each rank still running (gdb)\n"
        "  --report[=text|json[:FILE]]\n"
        "                          at the end of the job, rank 0 prints what went where:\n"
        "                          transports and bytes per peer class, the slowest pair,\n"
        "                          the deepest unexpected queue, every fallback and\n"
        "                          retry (json: into FILE, default weft-report.json;\n"
        "                          sets rte_base_report for the ranks)\n"
        "  -h, --help              print this help and exit\n"
        "  -V, --version           print the version and exit\n"
        "\n"
        "One host only: -H/--host and --hostfile are refused with the srun --mpi=pmix\n"
        "(Slurm) and mpirun (Open MPI) command lines that run the job on several hosts.\n"
        "\n"
        "Options may also be written with one dash (-mca, -tag-output) or as\n"
        "--option=value. \"--\" ends the options.\n"
        "\n"
        "Exit status: 0 when every rank exited 0 (after PMIx_Finalize if it used\n"
        "PMIx); else the first failing rank's exit status, 128+N for a rank killed by\n"
        "signal N, the status given to PMIx_Abort, 124 on --timeout, 128+N when weftrun\n"
        "itself got signal N (INT, TERM, HUP, QUIT), 2 for a usage error, 126/127 for\n"
        "a program that is not executable / not found, 1 for other launcher errors.\n"
        "\n"
        "Environment given to the ranks, besides weftrun's own: WEFT_LAUNCHER=weftrun,\n"
        "WEFT_SESSION_DIR, WEFT_TOPOLOGY_XML, WEFT_NODE_CORES, WEFT_MCA_* (from --mca),\n"
        "-x variables,\n"
        "and the PMIX_* variables of PMIx. See weftrun(1).\n";
}

namespace {

// Every option name we accept, for the did-you-mean hint.
const char *const known_names[] = {
    "np", "n", "mca", "x", "tag-output", "bind-to", "map-by", "report-bindings",
    "oversubscribe", "timeout", "get-stack-traces", "help", "h", "version", "V", "host", "hostfile", "report",
};

size_t edit_distance(const std::string &a, const std::string &b)
{
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string hint_for(const std::string &name)
{
    const char *best = nullptr;
    size_t best_d = 3;   // farther than 2 edits is not a typo
    for (const char *k : known_names) {
        size_t d = edit_distance(name, k);
        if (d < best_d && std::strlen(k) > 1) { best_d = d; best = k; }
    }
    std::string h;
    if (best) h = std::string("; did you mean --") + best + "?";
    return h + "\nrun 'weftrun --help' for the list of options";
}

std::optional<int> parse_int(const std::string &s, int lo, int hi)
{
    int v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
    return v;
}

weft::Status usage_error(std::string msg)
{
    return weft::Status(WEFT_ERR_BAD_PARAM, std::move(msg));
}

// A word as a POSIX shell reads it back: quoted only when it must be.
std::string shell_word(const std::string &w)
{
    const bool plain = !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-+=./:,@%") == std::string::npos;
    if (plain)
        return w;
    std::string q = "'";
    for (char c : w)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// weftrun starts ranks on this host only. Asked for hosts (-H a,b or a
// hostfile), it names the two launchers that start a weft job on several
// hosts, each with the command line that runs this job there, in one line.
weft::Status multi_host_error(const std::string &typed, const std::string &hosts, bool hostfile,
                              const Options &o)
{
    std::string env, exports, program;
    for (const auto &[name, value] : o.mca) {
        env += "WEFT_MCA_" + name + "=" + shell_word(value) + " ";
        exports += " -x WEFT_MCA_" + name + "=" + shell_word(value);
    }
    for (const auto &e : o.exports) {
        if (e.has_value)
            env += e.name + "=" + shell_word(e.value) + " ";
        exports += " -x " + e.name + (e.has_value ? "=" + shell_word(e.value) : "");
    }
    for (const auto &a : o.argv)
        program += " " + shell_word(a);
    if (program.empty())
        program = " PROGRAM";
    const std::string np = o.np > 0 ? std::to_string(o.np) : "";
    // srun reads node names from -w (a file when the word has a '/').
    std::string nodes = hostfile ? "" : " -w " + shell_word(hosts);
    std::string srun = env + "srun --mpi=pmix" + nodes + (np.empty() ? "" : " -n " + np) + program;
    std::string mpirun = "mpirun " + std::string(hostfile ? "--hostfile " : "--host ") + shell_word(hosts) +
                         (np.empty() ? "" : " -np " + np) + exports + program;
    return usage_error(typed + ": weftrun starts ranks on this host only; on several hosts launch with "
                       "Slurm, '" + srun + "', or Open MPI's mpirun, '" + mpirun + "'");
}

} // namespace

weft::Result<Options> parse_options(int argc, char **argv)
{
    Options o;
    int i = 1;
    // The option and its value as the user typed them, for messages:
    // "--np=abc" or "-np abc".
    std::string typed;
    // Fetches an option's value: the "=value" part, or the next word.
    auto value_of = [&](const std::string &opt, std::optional<std::string> &inline_val,
                        std::string &out) -> bool {
        if (inline_val) { out = *inline_val; inline_val.reset(); typed = opt; return true; }
        if (i + 1 >= argc) return false;
        out = argv[++i];
        typed = opt + " " + out;
        return true;
    };
    // Whether the word before the program was the value of an --mca: a
    // forgotten VALUE makes the program that value (see Options).
    bool mca_ended_options = false;
    // -H / --hostfile as typed, its value, and whether it names a file:
    // refused once the whole command line is known.
    struct MultiHost { std::string typed, hosts; bool file; };
    std::optional<MultiHost> multi_host;

    for (; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--") { ++i; break; }
        if (arg.size() < 2 || arg[0] != '-') break;          // the program
        std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
        std::optional<std::string> inline_val;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inline_val = name.substr(eq + 1);
            name.resize(eq);
        }
        std::string v;
        auto need = [&](const char *what) -> weft::Status {
            return usage_error("option " + arg + " needs " + what +
                               "\nrun 'weftrun --help' for the list of options");
        };
        if (name == "np" || name == "n") {
            if (!value_of(arg, inline_val, v)) return need("a number of ranks");
            auto n = parse_int(v, 1, 1 << 20);
            if (!n) return usage_error(typed + ": the number of ranks must be a positive integer");
            o.np = *n;
        } else if (name == "mca") {
            std::string val;
            if (inline_val) return usage_error("--mca takes two words: --mca NAME VALUE");
            if (i + 2 >= argc) return need("NAME VALUE");
            v = argv[++i];
            val = argv[++i];
            if (v.empty()) return usage_error("--mca: the parameter name is empty");
            o.mca.emplace_back(v, val);
            mca_ended_options = true;
            continue;
        } else if (name == "x") {
            if (!value_of(arg, inline_val, v)) return need("VAR or VAR=VALUE");
            auto eq = v.find('=');
            Options::Export e{v.substr(0, eq), eq == std::string::npos ? "" : v.substr(eq + 1),
                              eq != std::string::npos};
            if (e.name.empty()) return usage_error(typed + ": the variable name is empty");
            o.exports.push_back(std::move(e));
        } else if (name == "tag-output") {
            o.tag_output = true;
        } else if (name == "bind-to") {
            if (!value_of(arg, inline_val, v)) return need("core, numa or none");
            if (v == "core") o.bind_to = BindTo::Core;
            else if (v == "numa") o.bind_to = BindTo::Numa;
            else if (v == "none") o.bind_to = BindTo::None;
            else return usage_error(typed + ": accepted values are core, numa, none");
        } else if (name == "map-by") {
            if (!value_of(arg, inline_val, v)) return need("core, numa or slot");
            if (v == "core") o.map_by = MapBy::Core;
            else if (v == "numa") o.map_by = MapBy::Numa;
            else if (v == "slot") o.map_by = MapBy::Slot;
            else return usage_error(typed + ": accepted values are core, numa, slot");
        } else if (name == "report") {
            const std::string r = inline_val.value_or("text");
            if (r != "text" && r != "json" && !r.starts_with("json:"))
                return usage_error(arg + ": accepted values are text, json and json:FILE");
            o.report = r == "json" ? "json:weft-report.json" : r;
            inline_val.reset();   // its value is optional, and taken
        } else if (name == "report-bindings") {
            o.report_bindings = true;
        } else if (name == "oversubscribe") {
            o.oversubscribe = true;
        } else if (name == "timeout") {
            if (!value_of(arg, inline_val, v)) return need("a number of seconds");
            auto t = parse_int(v, 1, 365 * 24 * 3600);
            if (!t) return usage_error(typed + ": the timeout must be a positive whole number of seconds");
            o.timeout_s = *t;
        } else if (name == "get-stack-traces") {
            o.stack_traces = true;
        } else if (name == "H" || name == "host" || name == "hosts" || name == "hostfile" ||
                   name == "machinefile" || name == "default-hostfile") {
            if (!value_of(arg, inline_val, v)) return need("host names or a file");
            multi_host = {typed, v, name != "H" && name != "host" && name != "hosts"};
        } else if (name == "help" || name == "h") {
            o.help = true;
            return o;
        } else if (name == "version" || name == "V") {
            o.version = true;
            return o;
        } else {
            return usage_error("unknown option '" + arg + "'" + hint_for(name));
        }
        if (inline_val)
            return usage_error("option --" + name + " takes no value (got '" + arg + "')");
        mca_ended_options = false;
    }
    if (mca_ended_options && i > 0 && std::string(argv[i - 1]) != "--")
        o.mca_value_before_program = o.mca.size() - 1;
    for (; i < argc; ++i) o.argv.emplace_back(argv[i]);
    if (o.stack_traces && o.timeout_s == 0)
        return usage_error("--get-stack-traces takes the stacks when --timeout ends the job; "
                           "give --timeout SECONDS too");
    if (multi_host)
        return multi_host_error(multi_host->typed, multi_host->hosts, multi_host->file, o);
    if (o.argv.empty()) {
        std::string hint;
        if (o.mca_value_before_program)
            hint = " (--mca takes a name and a value: was '" + o.mca.back().second +
                   "' meant as the program?)";
        return usage_error("no program to run" + hint +
                           "\nusage: weftrun [options] program [args...]; "
                           "run 'weftrun --help' for the list of options");
    }
    return o;
}

} // namespace weftrun
