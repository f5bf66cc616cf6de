#include "weftrun/output.hpp"

#include <fcntl.h>
#include <unistd.h>

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

weft::Status OutputForwarder::add_rank(int rank, int &child_out, int &child_err)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0)
        return weft::Status(WEFT_ERR_IO, std::string("pipe for rank ") + std::to_string(rank) +
                            " stdout: " + std::strerror(errno) + "; raise the open-file limit (ulimit -n)");
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]); close(po[1]);
        return weft::Status(WEFT_ERR_IO, std::string("pipe for rank ") + std::to_string(rank) +
                            " stderr: " + std::strerror(errno) + "; raise the open-file limit (ulimit -n)");
    }
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    streams_.push_back({rank, false, po[0], {}});
    streams_.push_back({rank, true, pe[0], {}});
    child_out = po[1];
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
    for (;;) {
        ssize_t r = read(s.fd, buf, sizeof buf);
        if (r > 0) { emit(s, buf, static_cast<size_t>(r)); continue; }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return;
        // EOF or error: the rank (and anything it forked) closed the stream.
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

void OutputForwarder::flush_partial()
{
    for (auto &s : streams_)
        if (!s.pending.empty()) { s.pending += '\n'; emit(s, "", 0); }
}

} // namespace weftrun
