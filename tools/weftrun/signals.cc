// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/signals.hpp"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weftrun {

weft::Result<SignalFd> SignalFd::open()
{
    SignalFd s;
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&set, sig);
    if (int e = pthread_sigmask(SIG_BLOCK, &set, &s.orig_); e != 0)
        return weft::Status(WEFT_ERROR, std::string("pthread_sigmask: ") + std::strerror(e));
    s.fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (s.fd_ < 0)
        return weft::Status(WEFT_ERR_IO, std::string("signalfd: ") + std::strerror(errno));
    return s;
}

SignalFd::~SignalFd()
{
    if (fd_ >= 0) close(fd_);
}

std::vector<SignalFd::Caught> SignalFd::read_all()
{
    std::vector<Caught> out;
    signalfd_siginfo si;
    while (read(fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
        out.push_back({static_cast<int>(si.ssi_signo), static_cast<pid_t>(si.ssi_pid)});
    return out;
}

std::string signal_text(int sig)
{
    const char *d = strsignal(sig);
    return std::to_string(sig) + " (" + (d ? d : "unknown signal") + ")";
}

} // namespace weftrun
