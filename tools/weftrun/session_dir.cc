// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/session_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace weftrun {

std::string temp_root()
{
    const char *t = std::getenv("TMPDIR");
    return (t && *t) ? t : "/tmp";
}

weft::Result<SessionDir> SessionDir::create()
{
    std::string tmpl = temp_root() + "/weftrun.XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data()))
        return weft::Status(WEFT_ERR_IO, "cannot create the session directory " + tmpl + ": " +
                            std::strerror(errno) + "; set TMPDIR to a writable directory");
    SessionDir d(buf.data());
    std::ofstream pidf(d.path_ + "/pid");
    pidf << getpid() << "\n";
    if (!pidf)
        return weft::Status(WEFT_ERR_IO, "cannot write " + d.path_ + "/pid; is " + temp_root() + " full?");
    return d;
}

namespace {
int remove_entry(const char *p, const struct stat *, int, struct FTW *)
{
    ::remove(p);   // best effort: keep going so as much as possible goes away
    return 0;
}
} // namespace

void SessionDir::remove()
{
    if (path_.empty()) return;
    nftw(path_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    path_.clear();
}

void SessionDir::sweep_stale()
{
    std::string root = temp_root();
    DIR *d = opendir(root.c_str());
    if (!d) return;
    std::vector<std::string> stale;
    while (struct dirent *e = readdir(d)) {
        if (std::strncmp(e->d_name, "weftrun.", 8) != 0) continue;
        std::string dir = root + "/" + e->d_name;
        struct stat st;
        if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
        std::ifstream pidf(dir + "/pid");
        long pid = 0;
        // No readable pid file: maybe a weftrun between mkdtemp and writing
        // it; leave it alone.
        if (!(pidf >> pid) || pid <= 0) continue;
        if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(dir);
    }
    closedir(d);
    for (const auto &dir : stale) nftw(dir.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

} // namespace weftrun
