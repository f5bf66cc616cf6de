// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/spawn.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace weftrun {

namespace {
bool is_executable_file(const std::string &p, int &err)
{
    struct stat st;
    if (stat(p.c_str(), &st) != 0) { err = errno; return false; }
    if (!S_ISREG(st.st_mode)) { err = EISDIR; return false; }
    if (access(p.c_str(), X_OK) != 0) { err = errno; return false; }
    return true;
}
} // namespace

weft::Result<std::string> resolve_program(const std::string &name)
{
    int err = 0;
    if (name.find('/') != std::string::npos) {
        if (is_executable_file(name, err)) return name;
        if (err == ENOENT || err == ENOTDIR)
            return weft::Status(WEFT_ERR_NOT_FOUND, "cannot run '" + name + "': no such file");
        return weft::Status(WEFT_ERR_BAD_PARAM, "cannot run '" + name + "': " +
                            (err == EISDIR ? std::string("not a regular file") : std::strerror(err)) +
                            "; check that it is an executable file (chmod +x)");
    }
    const char *path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    bool saw_non_exec = false;
    size_t start = 0;
    while (start <= dirs.size()) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string dir = dirs.substr(start, end - start);
        std::string cand = (dir.empty() ? "." : dir) + "/" + name;
        if (is_executable_file(cand, err)) return cand;
        if (err != ENOENT && err != ENOTDIR) saw_non_exec = true;
        start = end + 1;
    }
    if (saw_non_exec)
        return weft::Status(WEFT_ERR_BAD_PARAM, "cannot run '" + name + "': found in PATH but not executable");
    return weft::Status(WEFT_ERR_NOT_FOUND, "cannot run '" + name + "': not found in PATH (" + dirs +
                        "); give a path such as ./" + name);
}

namespace {
// In the child: every descriptor from `first` on closes at exec.
// Async-signal-safe.
void cloexec_from(int first)
{
    if (close_range(static_cast<unsigned>(first), ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    // Kernels before 5.11: each descriptor up to the limit.
    struct rlimit rl;
    const long last = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                          ? static_cast<long>(rl.rlim_cur) : 65536;
    for (long fd = first; fd < last; ++fd) {
        const int flags = fcntl(static_cast<int>(fd), F_GETFD);
        if (flags >= 0)
            fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC);
    }
}

// Async-signal-safe failure report from the child.
[[noreturn]] void child_fail(const char *what, const char *path)
{
    int e = errno;
    const char *msg = strerror(e);   // glibc: a table lookup for known errors
    const char *parts[] = {"weftrun: rank process: ", what, " ", path, ": ", msg, "\n"};
    for (const char *p : parts) {
        ssize_t r = write(STDERR_FILENO, p, strlen(p));
        (void)r;
    }
    _exit(127);
}
} // namespace

weft::Result<pid_t> spawn_rank(const SpawnSpec &spec)
{
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return weft::Status(WEFT_ERR_IO, std::string("fork failed: ") + std::strerror(errno) +
                            "; too many processes (ulimit -u) or out of memory");
    if (pid == 0) {
        // Own process group: a terminal ^C reaches only weftrun, which
        // forwards it; and weftrun can signal the rank and its children.
        setpgid(0, 0);
        // Die with weftrun even if it is SIGKILLed. The "parent" here is the
        // forking thread, weftrun's main thread, which lives to the end.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(137);   // weftrun died before prctl
        // A weftrun started with & has INT/QUIT ignored; ranks must not inherit that (P9).
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
        if (spec.child_mask) sigprocmask(SIG_SETMASK, spec.child_mask, nullptr);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0) child_fail("cannot open", "/dev/null");
        if (devnull != STDIN_FILENO) { dup2(devnull, STDIN_FILENO); close(devnull); }
        if (spec.stdout_fd >= 0 && dup2(spec.stdout_fd, STDOUT_FILENO) < 0) child_fail("dup2 stdout for", spec.path);
        if (spec.stderr_fd >= 0 && dup2(spec.stderr_fd, STDERR_FILENO) < 0) child_fail("dup2 stderr for", spec.path);
        // Bound before exec, so the rank's first allocations land on its NUMA node.
        if (spec.placement && spec.placement->bound &&
            sched_setaffinity(0, sizeof spec.placement->cpus, &spec.placement->cpus) != 0)
            child_fail("cannot bind (sched_setaffinity)", spec.path);
        // Only stdin, stdout and stderr reach the program: weftrun's other
        // descriptors (PMIx's socket to each rank connected so far, above
        // all) would otherwise pile up in later ranks, 25 of them in rank 31
        // of 32.
        cloexec_from(3);
        // The path was resolved in the parent: execve, not execvp, which may
        // allocate and is not async-signal-safe.
        execve(spec.path, spec.argv, spec.envp);
        child_fail("execve failed for", spec.path);
    }
    // Also from the parent, so the group exists before we might signal it.
    setpgid(pid, pid);
    return pid;
}

} // namespace weftrun
