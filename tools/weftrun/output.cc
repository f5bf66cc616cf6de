// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/output.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace weftrun {

namespace {
void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;   // EPIPE (SIGPIPE is ignored) or a closed terminal: drop
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
}
} // namespace

OutputForwarder::~OutputForwarder()
{
    for (auto &s : streams_)
        if (s.fd >= 0) close(s.fd);
}

weft::Result<int> OutputForwarder::open_pty(int rank, int &child)
{
    const int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[128];
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
        const int e = errno;
        if (master >= 0) close(master);
        return weft::Status(WEFT_ERR_IO, std::string("no pseudo-terminal for rank ") + std::to_string(rank) +
                            ": " + std::strerror(e));
    }
    child = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (child < 0) {
        const int e = errno;
        close(master);
        return weft::Status(WEFT_ERR_IO, std::string("cannot open ") + name + ": " + std::strerror(e));
    }
    // Bytes pass as written (no \n -> \r\n), and programs that ask see
    // weftrun's terminal width.
    termios t;
    if (tcgetattr(child, &t) == 0) {
        t.c_oflag &= ~static_cast<tcflag_t>(OPOST);
        t.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        tcsetattr(child, TCSANOW, &t);
    }
    winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) ioctl(master, TIOCSWINSZ, &ws);
    return master;
}

weft::Status OutputForwarder::add_rank(int rank, int &child_out, int &child_err)
{
    child_out = child_err = -1;
    int out_read = -1;
    if (pty_) {
        auto m = open_pty(rank, child_out);
        if (m.ok()) {
            out_read = m.value();
        } else if (!pty_warned_) {
            // Output still flows through a pipe; only its buffering differs.
            pty_warned_ = true;
            const std::string w = "weftrun: warning: " + m.status().message() +
                                  "; this and later ranks write to a pipe (fully buffered unless they use weft)\n";
            ssize_t r = write(STDERR_FILENO, w.data(), w.size());
            (void)r;
        }
    }
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    auto fail = [&](const char *what) {
        const std::string msg = std::string("pipe for rank ") + std::to_string(rank) + " " + what + ": " +
                                std::strerror(errno) + "; raise the open-file limit (ulimit -n)";
        for (int fd : {out_read, child_out, po[0], po[1]})
            if (fd >= 0) close(fd);
        child_out = -1;
        return weft::Status(WEFT_ERR_IO, msg);
    };
    if (out_read < 0) {
        if (pipe2(po, O_CLOEXEC) != 0) return fail("stdout");
        out_read = po[0];
        child_out = po[1];
    }
    if (pipe2(pe, O_CLOEXEC) != 0) return fail("stderr");
    fcntl(out_read, F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    streams_.push_back({rank, false, out_read, {}});
    streams_.push_back({rank, true, pe[0], {}});
    child_err = pe[1];
    return {};
}

void OutputForwarder::close_child_ends(int child_out, int child_err)
{
    if (child_out >= 0) close(child_out);
    if (child_err >= 0) close(child_err);
}

void OutputForwarder::add_pollfds(std::vector<pollfd> &fds) const
{
    for (const auto &s : streams_)
        if (s.fd >= 0) fds.push_back({s.fd, POLLIN, 0});
}

void OutputForwarder::handle(const std::vector<pollfd> &fds)
{
    for (const auto &p : fds) {
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        for (auto &s : streams_)
            if (s.fd == p.fd) { read_stream(s); break; }
    }
}

void OutputForwarder::read_stream(Stream &s)
{
    char buf[65536];
    // A bound per call: a rank (or a child it left behind) that never stops
    // writing must not keep weftrun from its other streams, or from exiting.
    size_t budget = 16 * sizeof buf;
    for (;;) {
        ssize_t r = read(s.fd, buf, sizeof buf);
        if (r > 0) {
            emit(s, buf, static_cast<size_t>(r));
            if ((budget -= std::min(budget, static_cast<size_t>(r))) == 0) return;
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return;
        // EOF or error (EIO on a pseudo-terminal): the rank (and anything
        // it forked) closed the stream.
        if (!s.pending.empty()) { s.pending += '\n'; emit(s, "", 0); }
        close(s.fd);
        s.fd = -1;
        return;
    }
}

void OutputForwarder::emit(Stream &s, const char *data, size_t len)
{
    s.pending.append(data, len);
    size_t nl = s.pending.rfind('\n');
    if (nl == std::string::npos) return;
    const std::string prefix = "[1," + std::to_string(s.rank) + (s.is_err ? "]<stderr>:" : "]<stdout>:");
    std::string out;
    size_t start = 0;
    while (start <= nl) {
        size_t e = s.pending.find('\n', start);
        out += prefix;
        out.append(s.pending, start, e - start + 1);
        start = e + 1;
    }
    s.pending.erase(0, nl + 1);
    write_all(s.is_err ? STDERR_FILENO : STDOUT_FILENO, out.data(), out.size());
}

bool OutputForwarder::all_closed() const
{
    for (const auto &s : streams_)
        if (s.fd >= 0) return false;
    return true;
}

void OutputForwarder::drain()
{
    for (auto &s : streams_)
        if (s.fd >= 0) read_stream(s);
}

void OutputForwarder::flush_partial()
{
    for (auto &s : streams_)
        if (!s.pending.empty()) { s.pending += '\n'; emit(s, "", 0); }
}

} // namespace weftrun
