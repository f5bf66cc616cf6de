// SPDX-License-Identifier: BSD-3-Clause
// scif_stranger: a hostile local process against the btl/scif ports of a
// live job (run by scif_target.c, which checks the job's own results).
//
//   scif_stranger JOB_ID PID_OF_RANK_0 PID_OF_RANK_1 ...
//
// For each rank it finds the scif port the way any local process can (the
// listening abstract sockets named @weft-scif.<uid>.<port> in
// /proc/net/unix whose inode is one of that pid's descriptors), then tries,
// each on a fresh connection: a ring segment it could truncate (unsealed,
// partly sealed), the largest ring, a hello with an empty job id, with the
// target's own rank, with a wrong secret, a connection from another uid
// (when run as root), silent connections (before and after the connect
// request; they must be closed by the target's deadline), and many
// connections in a row. Every attempt must be refused; it prints one line per
// attempt and exits 0 when all were, 1 otherwise (2: no port found). Waits
// are bounded (kWaitMs per answer).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "scif_raw.hpp"

using namespace weft::scif;
using namespace weft::test::scif_raw;

namespace {

constexpr int kWaitMs = 30000;   // per answer: a broken target fails, never hangs

int g_failures = 0;
// Connections the current target accepted at the socket level: each must
// show up once in its refusal count.
int g_connections = 0;

void verdict(const std::string &target, const std::string &what, bool ok, const std::string &detail)
{
    std::printf("stranger: %s: %s: %s%s%s\n", target.c_str(), what.c_str(), ok ? "refused" : "NOT REFUSED",
                detail.empty() ? "" : ": ", detail.c_str());
    std::fflush(stdout);
    if (!ok)
        ++g_failures;
}

// The scif port pid listens on, or 0.
unsigned find_port(pid_t pid)
{
    std::set<unsigned long> inodes;
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    if (DIR *d = ::opendir(dir.c_str())) {
        while (dirent *e = ::readdir(d)) {
            char link[64] = {};
            const std::string path = dir + "/" + e->d_name;
            if (::readlink(path.c_str(), link, sizeof link - 1) > 0) {
                unsigned long ino;
                if (std::sscanf(link, "socket:[%lu]", &ino) == 1)
                    inodes.insert(ino);
            }
        }
        ::closedir(d);
    }
    const std::string prefix = "@weft-scif." + std::to_string(geteuid()) + ".";
    std::ifstream unix_socks("/proc/net/unix");
    std::string line;
    std::getline(unix_socks, line);   // the header
    while (std::getline(unix_socks, line)) {
        // Num RefCount Protocol Flags Type St Inode Path
        char num[32], path[256] = {};
        unsigned long ref, proto, flags, type, st, ino;
        if (std::sscanf(line.c_str(), "%31s %lx %lx %lx %lx %lx %lu %255s", num, &ref, &proto, &flags,
                        &type, &st, &ino, path) != 8)
            continue;
        const bool listening = flags & 0x10000;   // __SO_ACCEPTCON
        if (listening && inodes.count(ino) && std::strncmp(path, prefix.c_str(), prefix.size()) == 0)
            return static_cast<unsigned>(std::strtoul(path + prefix.size(), nullptr, 10));
    }
    return 0;
}

// The target's answer to a connect request: 1 ack, 0 hang-up, -1 nothing
// within kWaitMs.
int await_ack(int fd)
{
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kWaitMs) <= 0)
        return -1;
    const int a = ack_answer(fd);
    return a < 0 ? 0 : a;
}

// Waits for the target to close fd: true if it did before end.
bool closed_by_target(int fd, std::chrono::steady_clock::time_point end)
{
    while (std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
            std::byte buf[kCtrlMax];
            const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                return true;
        }
    }
    return false;
}

// Connects and sends a connect request with a segment of `cells` cells,
// sealed as asked. Returns the ack/hang-up verdict of await_ack.
int handshake(Conn &c, unsigned port, uint32_t cells, Seal seal)
{
    const int sent = send_request(c, port, cells, seal);
    g_connections += c.fd >= 0;
    return sent != 0 ? 0 : await_ack(c.fd);
}

// Writes a hello into an acked connection and returns the answer: the
// reply's tag (kAccept...), or -1 for a hang-up or no answer.
int hello(Conn &c, uint32_t rank, const uint8_t (&secret)[16], const std::string &job)
{
    if (!write_hello(c, rank, secret, job))
        return -1;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (std::chrono::steady_clock::now() < end) {
        if (const int a = hello_answer(c); a != -2)
            return a;
        pollfd p{c.fd, POLLIN, 0};
        ::poll(&p, 1, 10);
    }
    return -1;
}

std::string answer_text(int a)
{
    return a < 0 ? "hang-up" : a == kAccept ? "accepted" : "reply " + std::to_string(a);
}

void attack(const std::string &name, pid_t pid, uint32_t rank, uint32_t other_rank, const std::string &job)
{
    const unsigned port = find_port(pid);
    if (port == 0) {
        std::printf("stranger: %s: no scif port found for pid %d\n", name.c_str(), static_cast<int>(pid));
        g_failures += 100;
        return;
    }
    std::printf("stranger: %s: pid %d listens on scif port %u\n", name.c_str(), static_cast<int>(pid), port);
    g_connections = 0;
    constexpr uint32_t kCells = 1024;
    const uint8_t zero[16] = {};

    {   // An unsealed segment: accepted, it could be truncated under the target.
        Conn c;
        const int acked = handshake(c, port, kCells, Seal::none);
        if (acked == 1) {
            ::ftruncate(c.memfd, 0);
            hello(c, other_rank, zero, job);
        }
        verdict(name, "truncatable (unsealed) ring segment", acked != 1, acked == 1 ? "acked, then truncated" : "");
    }
    {
        Conn c;
        const int acked = handshake(c, port, kCells, Seal::grow_only);
        if (acked == 1)
            ::ftruncate(c.memfd, 0);
        verdict(name, "ring segment sealed against growing only", acked != 1, "");
    }
    {   // The largest ring the protocol allows: 64 MiB per direction.
        Conn c;
        const int acked = handshake(c, port, kMaxRingCells, Seal::all);
        verdict(name, "largest ring (1M cells)", acked != 1, "");
    }
    struct HelloCase {
        const char *what;
        uint32_t rank;
        std::string job;
    } cases[] = {
        {"hello with an empty job id", other_rank, ""},
        {"hello claiming the target's own rank", rank, job},
        {"hello with a wrong secret", other_rank, job},
        {"hello claiming a rank outside the job", 1000000, job},
    };
    for (const HelloCase &h : cases) {
        Conn c;
        const int acked = handshake(c, port, kCells, Seal::all);
        const int answer = acked == 1 ? hello(c, h.rank, zero, h.job) : -1;
        verdict(name, h.what, answer != kAccept, acked == 1 ? answer_text(answer) : "no ack");
    }
    if (geteuid() == 0) {
        // Another user: a child that drops to nobody. Its abstract name is
        // the target's (computed from our uid before the switch).
        const passwd *nobody = ::getpwnam("nobody");
        const pid_t child = nobody ? ::fork() : -1;
        if (child == 0) {
            if (::setresgid(nobody->pw_gid, nobody->pw_gid, nobody->pw_gid) != 0 ||
                ::setresuid(nobody->pw_uid, nobody->pw_uid, nobody->pw_uid) != 0)
                _exit(3);
            // Root's port, dialled as nobody.
            Conn c;
            c.fd = dial(port, 0);
            if (c.fd < 0)
                _exit(5);   // refused at connect
            const int memfd = ::memfd_create("stranger", MFD_CLOEXEC | MFD_ALLOW_SEALING);
            ::ftruncate(memfd, static_cast<off_t>(segment_bytes(kCells)));
            ::fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
            CtrlMsg req{};
            req.type = CtrlType::connect_req;
            req.u.req.src_port = 4242;
            req.u.req.ring_cells = kCells;
            send_ctrl(c.fd, req, std::span<const int>(&memfd, 1));
            _exit(await_ack(c.fd) == 1 ? 1 : 0);
        }
        int status = 0;
        if (child > 0)
            ::waitpid(child, &status, 0);
        const int code = child > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        g_connections += code == 0;
        verdict(name, "connection from uid nobody", code == 0 || code == 5,
                child > 0 ? "" : "could not start the child");
    } else {
        std::printf("stranger: %s: connection from another uid: skipped (needs root to switch uid)\n",
                    name.c_str());
    }
    {   // Silence: connections that never send their request, and ones that
        // never send their hello. All must be closed by the target's deadline
        // while the job goes on.
        constexpr int kSilent = 12;
        std::vector<int> before;
        std::vector<Conn> after(kSilent);
        for (int i = 0; i < kSilent; ++i) {
            before.push_back(dial(port));
            g_connections += before.back() >= 0;
        }
        int acked = 0;
        for (Conn &c : after)
            acked += handshake(c, port, kCells, Seal::all) == 1;
        int dropped = 0;
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        for (int fd : before)
            dropped += fd >= 0 && closed_by_target(fd, end);
        for (Conn &c : after)
            dropped += closed_by_target(c.fd, end);
        for (int fd : before)
            if (fd >= 0)
                ::close(fd);
        verdict(name, "silent connections closed by the target", dropped == 2 * kSilent,
                std::to_string(dropped) + " of " + std::to_string(2 * kSilent) + " closed (" +
                    std::to_string(acked) + " acked first)");
    }
    {   // Many connections in a row, each with a bad hello.
        constexpr int kMany = 200;
        int refused = 0;
        for (int i = 0; i < kMany; ++i) {
            Conn c;
            uint8_t secret[16];
            for (int b = 0; b < 16; ++b)
                secret[b] = static_cast<uint8_t>(i * 16 + b);
            const int acked = handshake(c, port, kCells, Seal::all);
            refused += acked != 1 || hello(c, other_rank, secret, job) != kAccept;
        }
        verdict(name, "many connections with wrong secrets", refused == kMany,
                std::to_string(refused) + " of " + std::to_string(kMany) + " refused");
    }
    // The script compares this with the target's count at finalize.
    std::printf("stranger: pid %d: %d connections\n", static_cast<int>(pid), g_connections);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s JOB_ID PID_OF_RANK_0 PID_OF_RANK_1 ...\n", argv[0]);
        return 2;
    }
    const std::string job = argv[1];
    const int ranks = argc - 2;
    for (int r = 0; r < ranks; ++r) {
        const pid_t pid = static_cast<pid_t>(std::strtol(argv[2 + r], nullptr, 10));
        attack("rank " + std::to_string(r), pid, static_cast<uint32_t>(r),
               static_cast<uint32_t>((r + 1) % ranks), job);
    }
    std::printf("stranger: %s\n", g_failures ? "SOME ATTEMPTS WERE NOT REFUSED" : "all attempts refused");
    return g_failures == 0 ? 0 : g_failures >= 100 ? 2 : 1;
}
