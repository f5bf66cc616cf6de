// SPDX-License-Identifier: BSD-3-Clause
// One-sided communication, part 6: shared-memory windows
// (MPI_Win_allocate_shared, MPI_Win_shared_query).
//
// All members must be on one node. The lowest rank makes one memfd holding
// every member's segment, back to back in rank order (the standard's
// contiguous default), and hands it to the others over a unix socket in
// the abstract namespace with SCM_RIGHTS; each maps all of it and closes
// the descriptor. Why this way: a memfd has no name in /dev/shm or
// anywhere else, and an abstract socket has no file either, so nothing is
// left behind by any exit, SIGKILL included (a shm_open segment would stay
// if a rank died between creating and unlinking it); the memory goes away
// with the last mapping. The socket is authenticated: the connecting
// process must have our uid (SO_PEERCRED) and present a random token that
// only the window's members received (by broadcast on the communicator).
// The MPI layer does not use the scif transport's descriptor passing: it
// sits on weft.h, so this is the few lines of POSIX it needs.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mpi/win.hpp"

namespace weft::mpi {

SharedMap::~SharedMap()
{
    if (addr)
        munmap(addr, len);
}

namespace {

// How long a member waits for another (bounded, never a hang).
constexpr int kHandoverMs = 60000;

class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd()
    {
        if (fd_ >= 0)
            close(fd_);
    }
    int get() const { return fd_; }
    void reset(int fd)
    {
        if (fd_ >= 0)
            close(fd_);
        fd_ = fd;
    }

private:
    int fd_;
};

// What the leader broadcasts: whether it is ready, the socket's name and the token.
struct Handover {
    int32_t ok = 0;
    uint32_t name_len = 0;
    uint64_t token = 0;
    char name[96] = {};
    char why[160] = {};
};

std::string errno_text(const char *what) { return std::string(what) + ": " + std::strerror(errno); }

socklen_t abstract_address(const Handover &h, sockaddr_un *sa)
{
    std::memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    std::memcpy(sa->sun_path + 1, h.name, h.name_len);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + h.name_len);
}

bool wait_fd(int fd, short events)
{
    pollfd p{fd, events, 0};
    int rc;
    do {
        rc = poll(&p, 1, kHandoverMs);
    } while (rc < 0 && errno == EINTR);
    return rc == 1;
}

// A one-byte message with room for one descriptor (SCM_RIGHTS).
struct FdMessage {
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    FdMessage()
    {
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
    }
    FdMessage(const FdMessage &) = delete;
    FdMessage &operator=(const FdMessage &) = delete;
};

bool same_user(int sock)
{
    ucred cred{};
    socklen_t len = sizeof cred;
    return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == getuid();
}

// Leader: makes the memfd and the listening socket.
bool leader_prepare(size_t len, Fd *memfd, Fd *listener, Handover *h, std::string *why)
{
    memfd->reset(memfd_create("weft-win-shared", MFD_CLOEXEC));
    if (memfd->get() < 0) {
        *why = errno_text("memfd_create");
        return false;
    }
    if (ftruncate(memfd->get(), static_cast<off_t>(len)) != 0) {
        *why = errno_text("ftruncate of the window's memfd");
        return false;
    }
    static unsigned serial = 0;
    std::random_device rd;
    h->token = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    h->name_len = static_cast<uint32_t>(std::snprintf(h->name, sizeof h->name, "weft-win.%u.%d.%u",
                                                      static_cast<unsigned>(getuid()), getpid(), ++serial));
    listener->reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un sa;
    const socklen_t sl = abstract_address(*h, &sa);
    if (listener->get() < 0 || bind(listener->get(), reinterpret_cast<sockaddr *>(&sa), sl) != 0 ||
        listen(listener->get(), 128) != 0) {
        *why = errno_text("making the window's handover socket");
        return false;
    }
    return true;
}

// Leader: gives the memfd to `members` connections that show the token.
bool leader_hand_over(int listener, int memfd, uint64_t token, int members, std::string *why)
{
    int given = 0;
    while (given < members) {
        if (!wait_fd(listener, POLLIN)) {
            *why = "timed out waiting for the other members to connect (" + std::to_string(given) + " of " +
                   std::to_string(members) + " did)";
            return false;
        }
        Fd conn(accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
        if (conn.get() < 0)
            continue;
        uint64_t shown = 0;
        if (!same_user(conn.get()) || !wait_fd(conn.get(), POLLIN) ||
            recv(conn.get(), &shown, sizeof shown, MSG_WAITALL) != sizeof shown || shown != token)
            continue;   // not a member: it gets nothing
        FdMessage m;
        cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &memfd, sizeof(int));
        if (sendmsg(conn.get(), &m.msg, MSG_NOSIGNAL) == 1)
            ++given;
    }
    return true;
}

// Member: fetches the memfd from the leader.
bool member_receive(const Handover &h, Fd *memfd, std::string *why)
{
    Fd sock(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un sa;
    const socklen_t sl = abstract_address(h, &sa);
    if (sock.get() < 0 || connect(sock.get(), reinterpret_cast<sockaddr *>(&sa), sl) != 0) {
        *why = errno_text("connecting to the lowest rank's handover socket");
        return false;
    }
    if (!same_user(sock.get())) {
        *why = "the handover socket belongs to another user";
        return false;
    }
    if (send(sock.get(), &h.token, sizeof h.token, MSG_NOSIGNAL) != sizeof h.token) {
        *why = errno_text("sending the token");
        return false;
    }
    if (!wait_fd(sock.get(), POLLIN)) {
        *why = "timed out waiting for the window's memory descriptor";
        return false;
    }
    FdMessage m;
    if (recvmsg(sock.get(), &m.msg, MSG_CMSG_CLOEXEC) != 1) {
        *why = errno_text("receiving the window's memory descriptor");
        return false;
    }
    cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int))) {
        *why = "the lowest rank's answer carried no descriptor";
        return false;
    }
    int fd;
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    memfd->reset(fd);
    return true;
}

// Is every member of c on this node?
bool all_on_this_node(const Comm &c, std::string *why)
{
    weft_job_info_t me{};
    me.size = sizeof me;
    if (weft_job_info(&me) != WEFT_SUCCESS) {
        *why = "the job's layout is not known";
        return false;
    }
    for (int r = 0; r < c.size; ++r) {
        weft_peer_info_t p{};
        p.size = sizeof p;
        if (weft_peer_info(c.to_world(r), &p) != WEFT_SUCCESS || p.node_id != me.node_id) {
            *why = "rank " + std::to_string(r) + " of the communicator is on another node (" + p.hostname +
                   "); every member must share this node's memory (split with MPI_COMM_TYPE_SHARED first)";
            return false;
        }
    }
    return true;
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Win_allocate_shared)
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm h, void *baseptr, MPI_Win *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_allocate_shared";
    MPI_NEED_INIT(fn);
    Comm *c;
    if (int rc = win_check_args(fn, h, !baseptr ? "baseptr" : !out ? "win" : nullptr, size, disp_unit, &c))
        return rc;
    std::string why;
    if (!all_on_this_node(*c, &why))
        return raise(c, MPI_ERR_COMM, fn, why);
    // Every member's size, then the segments back to back.
    std::vector<MPI_Aint> sizes(static_cast<size_t>(c->size));
    if (int rc = PMPI_Allgather(&size, 1, MPI_AINT, sizes.data(), 1, MPI_AINT, h))
        return raise(c, rc, fn, "exchanging the members' sizes failed");
    auto map = std::make_unique<SharedMap>();
    size_t total = 0;
    for (MPI_Aint s : sizes) {
        map->offset.push_back(total);
        total += static_cast<size_t>(s);
    }
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    map->len = std::max<size_t>(page, (total + page - 1) / page * page);

    Fd memfd, listener;
    Handover ho;
    bool ok = true;
    if (c->rank == 0) {
        ok = leader_prepare(map->len, &memfd, &listener, &ho, &why);
        ho.ok = ok;
        std::snprintf(ho.why, sizeof ho.why, "%s", why.c_str());
    }
    if (int rc = PMPI_Bcast(&ho, sizeof ho, MPI_BYTE, 0, h))
        return raise(c, rc, fn, "broadcasting the window's handover failed");
    if (!ho.ok) {
        ok = false;
        why = std::string("the lowest rank could not make the shared memory: ") + ho.why;
    } else if (c->size > 1) {
        ok = c->rank == 0 ? leader_hand_over(listener.get(), memfd.get(), ho.token, c->size - 1, &why)
                          : member_receive(ho, &memfd, &why);
    }
    listener.reset(-1);
    if (ok) {
        void *p = mmap(nullptr, map->len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd.get(), 0);
        if (p == MAP_FAILED) {
            ok = false;
            why = errno_text("mapping the window's shared memory");
        } else {
            map->addr = p;
        }
    }
    memfd.reset(-1);   // the mappings keep the memory
    int all_ok = ok ? 1 : 0;
    if (int rc = PMPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, h))
        return raise(c, rc, fn, "agreeing on the shared memory failed");
    if (!all_ok)
        return raise(c, MPI_ERR_NO_MEM, fn,
                     ok ? std::string("another member could not map the window's shared memory")
                        : "sharing the window's memory failed: " + why);
    auto w = std::make_unique<Win>();
    std::byte *base = static_cast<std::byte *>(map->addr) + map->offset[static_cast<size_t>(c->rank)];
    w->base = base;
    w->size = static_cast<size_t>(size);
    w->disp_unit = disp_unit;
    w->flavor = MPI_WIN_FLAVOR_SHARED;
    w->shared = std::move(map);
    const int rc = win_make(fn, c, std::move(w), info, out);
    if (rc == MPI_SUCCESS)
        *static_cast<void **>(baseptr) = base;
    return rc;
}

WEFT_MPI_WEAK(Win_shared_query)
int PMPI_Win_shared_query(MPI_Win h, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_shared_query";
    WIN_OR_RETURN(fn, h, w);
    if (!size || !disp_unit || !baseptr)
        return win_error(*w, MPI_ERR_ARG, fn, "size, disp_unit or baseptr is NULL");
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return win_error(*w, MPI_ERR_WIN, fn, "the window was not made by MPI_Win_allocate_shared");
    if (rank == MPI_PROC_NULL) {   // the lowest rank with memory (else rank 0, size 0)
        rank = 0;
        for (int r = 0; r < w->comm.size; ++r)
            if (w->peers[static_cast<size_t>(r)].size > 0) {
                rank = r;
                break;
            }
    } else if (rank < 0 || rank >= w->comm.size) {
        return win_error(*w, MPI_ERR_RANK, fn,
                         "rank " + std::to_string(rank) + " is not a member of the window (size " +
                             std::to_string(w->comm.size) + ")");
    }
    const size_t r = static_cast<size_t>(rank);
    *size = static_cast<MPI_Aint>(w->peers[r].size);
    *disp_unit = static_cast<int>(w->peers[r].disp_unit);
    *static_cast<void **>(baseptr) = static_cast<std::byte *>(w->shared->addr) + w->shared->offset[r];
    return MPI_SUCCESS;
}

} // extern "C"
