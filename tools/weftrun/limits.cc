// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/limits.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

namespace weftrun {

namespace {

// The smallest share of memory a process of its own can live in (page
// tables, stack, libc's data, the kernel's task structures): a floor, so
// the memory check refuses only jobs that surely cannot start.
constexpr uint64_t kMinRankBytes = 1 << 20;

std::optional<uint64_t> read_number(const std::string &path)
{
    std::ifstream f(path);
    std::string word;
    if (!(f >> word)) return std::nullopt;
    if (word == "max") return UINT64_MAX;
    try {
        return std::stoull(word);
    } catch (...) {
        return std::nullopt;
    }
}

// This process's directory in the cgroup hierarchy of one controller (v1,
// "N:pids:/path") or the unified one (v2, "0::/path"), if mounted.
std::optional<std::string> cgroup_dir(const std::string &controller, const std::string &probe_file)
{
    std::ifstream f("/proc/self/cgroup");
    std::string line;
    while (std::getline(f, line)) {
        const size_t a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string ctrls = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        std::string base;
        if (ctrls.empty()) base = "/sys/fs/cgroup";
        else if (("," + ctrls + ",").find("," + controller + ",") != std::string::npos) base = "/sys/fs/cgroup/" + controller;
        else continue;
        std::string dir = base + (path == "/" ? "" : path);
        // Walk up to the first level that has the controller's files (the
        // root of a hierarchy has none).
        for (;;) {
            if (std::ifstream(dir + "/" + probe_file).good()) return dir;
            if (dir.size() <= base.size()) break;
            dir.erase(dir.rfind('/'));
        }
    }
    return std::nullopt;
}

// The least room left on the way from dir up to the hierarchy's root:
// limit - current at each level that has a limit, with that level.
struct Room {
    uint64_t left = UINT64_MAX;
    uint64_t limit = 0, current = 0;
    std::string dir;
};
Room cgroup_room(std::string dir, const char *max_file, const char *cur_file)
{
    Room r;
    while (dir.size() > std::string("/sys/fs/cgroup").size()) {
        auto max = read_number(dir + "/" + max_file), cur = read_number(dir + "/" + cur_file);
        // v1 memory writes "no limit" as a huge page-rounded number.
        if (max && cur && *max < (UINT64_MAX >> 2)) {
            const uint64_t left = *max > *cur ? *max - *cur : 0;
            if (left < r.left) r = {left, *max, *cur, dir};
        }
        dir.erase(dir.rfind('/'));
    }
    return r;
}

std::string n_ranks(int np) { return "-np " + std::to_string(np); }

weft::Status refuse(const std::string &msg)
{
    return weft::Status(WEFT_ERR_NOT_AVAILABLE, msg);
}

std::optional<uint64_t> mem_available()
{
    std::ifstream f("/proc/meminfo");
    std::string key;
    uint64_t kb = 0;
    std::string unit;
    while (f >> key >> kb) {
        std::getline(f, unit);
        if (key == "MemAvailable:") return kb * 1024;
    }
    return std::nullopt;
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

} // namespace

weft::Status check_room_for_ranks(int np, bool tag_output)
{
    const auto n = static_cast<uint64_t>(np);
    rlimit rl;
    // The kernel does not hold root to RLIMIT_NPROC.
    if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && n >= rl.rlim_cur)
        return refuse(n_ranks(np) + " cannot start: this user may have at most " + std::to_string(rl.rlim_cur) +
                      " processes and threads in all (RLIMIT_NPROC, `ulimit -u`), and each rank is at least one. "
                      "Use fewer ranks, or raise the limit (`ulimit -u`, limits.conf).");
    if (auto dir = cgroup_dir("pids", "pids.max")) {
        Room r = cgroup_room(*dir, "pids.max", "pids.current");
        if (n > r.left)
            return refuse(n_ranks(np) + " cannot start: the pids cgroup " + r.dir + " allows " +
                          std::to_string(r.limit) + " tasks (pids.max) and has " + std::to_string(r.current) +
                          " (pids.current), room for " + std::to_string(r.left) +
                          " more. Use fewer ranks, or raise pids.max (systemd: TasksMax).");
    }
    for (const char *knob : {"pid_max", "threads-max"}) {
        auto v = read_number(std::string("/proc/sys/kernel/") + knob);
        if (v && n >= *v)
            return refuse(n_ranks(np) + " cannot start: the kernel allows at most " + std::to_string(*v) +
                          " processes (kernel." + knob + ", /proc/sys/kernel/" + knob + "). Use fewer ranks.");
    }
    // weftrun's own descriptors: a PMIx connection per rank, and with
    // --tag-output the read ends of two pipes.
    const uint64_t fds = n * (tag_output ? 3 : 1);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && fds >= rl.rlim_cur)
        return refuse(n_ranks(np) + " cannot start: weftrun needs " + std::to_string(fds) +
                      " open files for it (a PMIx connection per rank" +
                      (tag_output ? std::string(", two output pipes with --tag-output") : std::string()) +
                      ") and may open " + std::to_string(rl.rlim_cur) + " (RLIMIT_NOFILE, `ulimit -n`). "
                      "Use fewer ranks, or raise `ulimit -n`.");
    const uint64_t need = n * kMinRankBytes;
    auto short_of_memory = [&](uint64_t left, const std::string &where) {
        return refuse(n_ranks(np) + " cannot start: " + std::to_string(np) + " processes need at least " +
                      mib(need) + " (1 MiB each) and " + where + " has " + mib(left) + " left. Use fewer ranks.");
    };
    if (auto avail = mem_available(); avail && need > *avail)
        return short_of_memory(*avail, "this machine (MemAvailable in /proc/meminfo)");
    // The memory cgroup: v2's files, else v1's.
    for (auto [max_file, cur_file] : {std::pair{"memory.max", "memory.current"},
                                      std::pair{"memory.limit_in_bytes", "memory.usage_in_bytes"}}) {
        auto dir = cgroup_dir("memory", max_file);
        if (!dir) continue;
        Room r = cgroup_room(*dir, max_file, cur_file);
        if (need > r.left) return short_of_memory(r.left, "the memory cgroup " + r.dir + " (" + max_file + ")");
        break;
    }
    return {};
}

} // namespace weftrun
