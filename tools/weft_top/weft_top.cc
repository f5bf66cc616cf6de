// SPDX-License-Identifier: BSD-3-Clause
// weft_top: a live view of a running job, from the ranks' counter pages
// (weft/counters.h). It finds them as memfds in /proc/PID/fd of this
// user's processes, maps each read-only and, about once a second, prints a
// table per rank and peer (transport, messages/s, MB/s, unexpected depth,
// stalls, errors), or with --json one JSON object per tick. It only reads
// memory the ranks write anyway: it never slows them.
//
//   weft_top [--json] [--interval MS] [--count N] [--wait S] TARGET
//
// TARGET: weftrun's session directory (its "pid" file names weftrun), a
// pid (weftrun's, or a rank's parent's), or a job id (the PMIx namespace).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <weft/counters.h>

#include "engine/counter_view.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
    bool json = false;
    int interval_ms = 1000;
    long count = -1;        // ticks; -1: until the job ends
    int wait_s = 30;        // for the first page
    std::string target;
};

using weft::engine::CounterView;
template <class T>
T load(const T &v)
{
    return CounterView::load(v);
}

// One rank's page, mapped read-only; the mapping keeps it after the rank exits.
class Page {
public:
    static std::unique_ptr<Page> open(const std::string &path, pid_t pid)
    {
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return nullptr;
        struct stat st;
        void *p = MAP_FAILED;
        if (fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= sizeof(weft_counters_header_t))
            p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
        ::close(fd);
        if (p == MAP_FAILED)
            return nullptr;
        std::unique_ptr<Page> page(new Page(p, static_cast<size_t>(st.st_size), pid));
        return page->view().valid() ? std::move(page) : nullptr;
    }
    ~Page() { munmap(base_, size_); }
    Page(const Page &) = delete;
    Page &operator=(const Page &) = delete;

    const CounterView &view() const { return view_; }
    pid_t pid() const { return pid_; }
    bool alive() const { return kill(pid_, 0) == 0 || errno != ESRCH; }

private:
    Page(void *b, size_t n, pid_t pid)
        : base_(b), size_(n), pid_(pid), view_(std::span(static_cast<const std::byte *>(b), n))
    {
    }
    void *base_;
    size_t size_;
    pid_t pid_;
    CounterView view_;
};

std::vector<pid_t> children_of(pid_t pid)
{
    std::vector<pid_t> out;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR *d = opendir(dir.c_str());
    if (!d)
        return out;
    while (dirent *e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        std::ifstream f(dir + "/" + e->d_name + "/children");
        for (long c; f >> c;)
            out.push_back(static_cast<pid_t>(c));
    }
    closedir(d);
    return out;
}

// pid and its descendants (a rank may run under a wrapper).
std::vector<pid_t> tree_of(pid_t root)
{
    std::vector<pid_t> all{root};
    for (size_t i = 0; i < all.size() && all.size() < 100000; ++i)
        for (pid_t c : children_of(all[i]))
            all.push_back(c);
    return all;
}

std::vector<pid_t> own_processes()
{
    std::vector<pid_t> out;
    DIR *d = opendir("/proc");
    if (!d)
        return out;
    while (dirent *e = readdir(d)) {
        char *end;
        const long pid = std::strtol(e->d_name, &end, 10);
        struct stat st;
        if (*end || pid <= 0 || stat(("/proc/" + std::string(e->d_name)).c_str(), &st) != 0 || st.st_uid != getuid())
            continue;
        out.push_back(static_cast<pid_t>(pid));
    }
    closedir(d);
    return out;
}

// The counter memfd of pid: /proc/pid/fd/N, or "".
std::string page_path(pid_t pid)
{
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR *d = opendir(dir.c_str());
    if (!d)
        return "";
    std::string found;
    const std::string want = std::string("/memfd:") + WEFT_COUNTERS_MEMFD_NAME;
    while (dirent *e = readdir(d)) {
        char link[256];
        const std::string p = dir + "/" + e->d_name;
        const ssize_t n = readlink(p.c_str(), link, sizeof link - 1);
        if (n > 0 && std::string_view(link, static_cast<size_t>(n)).starts_with(want)) {
            found = p;
            break;
        }
    }
    closedir(d);
    return found;
}

class Job {
public:
    explicit Job(const Options &o) : o_(o) {}

    // Finds pages not yet found; true once there is at least one.
    bool discover()
    {
        std::vector<pid_t> candidates;
        std::string job_id;
        struct stat st;
        if (stat(o_.target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            std::ifstream f(o_.target + "/pid");
            long pid = 0;
            if (f >> pid && pid > 0)
                candidates = tree_of(static_cast<pid_t>(pid));
        } else if (!o_.target.empty() && o_.target.find_first_not_of("0123456789") == std::string::npos) {
            candidates = tree_of(static_cast<pid_t>(std::stol(o_.target)));
        } else {
            candidates = own_processes();
            job_id = o_.target;
        }
        for (pid_t pid : candidates) {
            if (known_pids_.contains(pid))
                continue;
            const std::string path = page_path(pid);
            if (path.empty())
                continue;
            auto page = Page::open(path, pid);
            if (!page || (!job_id.empty() && job_id != page->view().job_id()))
                continue;
            if (job_.empty())
                job_ = page->view().job_id();
            else if (job_ != page->view().job_id())
                continue;   // another job under the same parent
            known_pids_.insert(pid);
            const uint32_t rank = page->view().h().rank;
            pages_[rank] = std::move(page);
        }
        return !pages_.empty();
    }
    // Every rank's page is finalized or its process gone.
    bool over() const
    {
        if (pages_.empty())
            return false;
        for (const auto &[rank, p] : pages_)
            if (load(p->view().h().state) == WEFT_COUNTERS_RUNNING && p->alive())
                return false;
        return true;
    }

    void tick(long n, double dt)
    {
        std::string text;
        if (o_.json)
            text = "{\"tick\":" + std::to_string(n) + ",\"job\":\"" + job_ + "\",\"ranks\":[";
        else
            text = "weft_top: job " + job_ + ", " + std::to_string(pages_.size()) + " ranks, tick " +
                   std::to_string(n) + "\n  rank  peer  transport          msgs/s       MB/s   unexp  stalls  errors\n";
        bool first_rank = true;
        for (const auto &[rank, p] : pages_) {
            const weft_process_counters_t &pc = p->view().process();
            const uint64_t depth = load(pc.unexpected_depth), hwm = load(pc.unexpected_hwm);
            const char *state = load(p->view().h().state) == WEFT_COUNTERS_RUNNING && p->alive() ? "running" : "done";
            if (o_.json) {
                text += std::string(first_rank ? "" : ",") + "{\"rank\":" + std::to_string(rank) +
                        ",\"pid\":" + std::to_string(p->pid()) + ",\"state\":\"" + state +
                        "\",\"unexpected_depth\":" + std::to_string(depth) + ",\"unexpected_hwm\":" +
                        std::to_string(hwm) + ",\"peers\":[";
            }
            first_rank = false;
            bool first_peer = true;
            for (uint32_t r = 0; r < p->view().h().peer_count; ++r) {
                const weft_peer_counters_t &c = p->view().peer(r);
                const uint64_t msgs = CounterView::total_msgs(c.sent) + CounterView::total_msgs(c.recv);
                const uint64_t bytes = CounterView::total_bytes(c.sent) + CounterView::total_bytes(c.recv);
                const uint64_t stalls = load(c.credit_stalls) + load(c.again), errors = load(c.failures);
                const int64_t module = load(c.primary_module);
                if (msgs == 0 && module < 0 && errors == 0)
                    continue;
                auto &prev = last_[{rank, r}];
                const double mps = dt > 0 ? static_cast<double>(msgs - std::min(msgs, prev.first)) / dt : 0;
                const double mbs = dt > 0 ? static_cast<double>(bytes - std::min(bytes, prev.second)) / dt / 1e6 : 0;
                prev = {msgs, bytes};
                char line[256];
                if (o_.json) {
                    std::snprintf(line, sizeof line,
                                  "%s{\"peer\":%u,\"transport\":\"%s\",\"msgs\":%llu,\"bytes\":%llu,"
                                  "\"msgs_per_s\":%.1f,\"mb_per_s\":%.3f,\"stalls\":%llu,\"errors\":%llu}",
                                  first_peer ? "" : ",", r, p->view().module_name(module).c_str(),
                                  static_cast<unsigned long long>(msgs), static_cast<unsigned long long>(bytes), mps,
                                  mbs, static_cast<unsigned long long>(stalls),
                                  static_cast<unsigned long long>(errors));
                } else {
                    std::snprintf(line, sizeof line, "  %4u  %4u  %-16s %10.0f %10.2f  %6llu  %6llu  %6llu\n", rank,
                                  r, p->view().module_name(module).c_str(), mps, mbs, static_cast<unsigned long long>(depth),
                                  static_cast<unsigned long long>(stalls), static_cast<unsigned long long>(errors));
                }
                text += line;
                first_peer = false;
            }
            if (o_.json)
                text += "]}";
        }
        if (o_.json)
            text += "]}\n";
        // A terminal gets the table redrawn in place; a pipe gets each tick.
        if (!o_.json && isatty(STDOUT_FILENO))
            std::fputs("\033[H\033[J", stdout);
        std::fputs(text.c_str(), stdout);
        std::fflush(stdout);
    }

private:
    const Options &o_;
    std::string job_;
    std::map<uint32_t, std::unique_ptr<Page>> pages_;
    std::set<pid_t> known_pids_;
    std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> last_;
};

int usage(const char *why)
{
    std::fprintf(stderr,
                 "weft_top: %s\nusage: weft_top [--json] [--interval MS] [--count N] [--wait S] TARGET\n"
                 "  TARGET: weftrun's session directory, weftrun's pid, or the job id (PMIx namespace)\n",
                 why);
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto number = [&](long *out) {
            if (i + 1 >= argc)
                return false;
            char *end;
            *out = std::strtol(argv[++i], &end, 10);
            return *end == '\0' && *out >= 0;
        };
        long v = 0;
        if (a == "--json")
            o.json = true;
        else if (a == "--interval" && number(&v) && v > 0)
            o.interval_ms = static_cast<int>(v);
        else if (a == "--count" && number(&v) && v > 0)
            o.count = v;
        else if (a == "--wait" && number(&v))
            o.wait_s = static_cast<int>(v);
        else if (a == "--help" || a == "-h")
            return usage("a live view of a running weft job") == 2 ? 0 : 0;
        else if (!a.starts_with("-") && o.target.empty())
            o.target = a;
        else
            return usage(("bad argument '" + a + "'").c_str());
    }
    if (o.target.empty())
        return usage("no TARGET");
    Job job(o);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.wait_s);
    while (!job.discover()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            std::fprintf(stderr, "weft_top: no counter page of %s found within %d s (is the job running, as "
                                 "this user?)\n", o.target.c_str(), o.wait_s);
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    auto last = std::chrono::steady_clock::now();
    for (long n = 0; o.count < 0 || n < o.count; ++n) {
        if (n > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));
        job.discover();   // ranks that made their page since
        const auto now = std::chrono::steady_clock::now();
        job.tick(n, n == 0 ? 0 : std::chrono::duration<double>(now - last).count());
        last = now;
        if (o.count < 0 && job.over())
            break;
    }
    return 0;
}
