// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/pmix_glue.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdlib>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include <pmix.h>
#include <pmix_server.h>

namespace weftrun {

std::string PmixServer::nspace_;

namespace {

EventQueue *g_queue = nullptr;   // the upcalls' only way back to the main loop
bool g_debug = false;

void debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void debug(const char *fmt, ...)
{
    if (!g_debug) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "weftrun debug: %s\n", line);
}

// Waits for one asynchronous PMIx operation. Heap-allocated and shared with
// the callback: if the wait times out the callback may still run later, so
// the waiter is then leaked rather than freed under the library's feet.
struct OpWait {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    pmix_status_t status = PMIX_SUCCESS;

    static void cb(pmix_status_t st, void *arg)
    {
        auto *w = static_cast<OpWait *>(arg);
        std::lock_guard<std::mutex> g(w->mu);
        w->status = st;
        w->done = true;
        w->cv.notify_all();
    }
    // Returns false on timeout (then the caller must leak *this).
    bool wait(std::chrono::seconds limit)
    {
        std::unique_lock<std::mutex> g(mu);
        return cv.wait_for(g, limit, [this] { return done; });
    }
};

constexpr std::chrono::seconds kOpLimit{30};

weft::Status pmix_error(const std::string &what, pmix_status_t st)
{
    return weft::Status(WEFT_ERROR, what + " failed: " + PMIx_Error_string(st) + " (" +
                        std::to_string(st) + ")");
}

// Starts an operation whose completion comes through OpWait::cb and waits for it.
template <class Start>
weft::Status run_op(const std::string &what, Start start)
{
    auto *w = new OpWait();
    pmix_status_t st = start(w);
    if (st == PMIX_OPERATION_SUCCEEDED) { delete w; return {}; }
    if (st != PMIX_SUCCESS) { delete w; return pmix_error(what, st); }
    if (!w->wait(kOpLimit))
        return weft::Status(WEFT_ERROR, what + " did not complete within " +
                            std::to_string(kOpLimit.count()) + " s; the PMIx library is stuck");
    st = w->status;
    delete w;
    return st == PMIX_SUCCESS ? weft::Status() : pmix_error(what, st);
}

// ---- upcalls: run on the PMIx progress thread; they only copy and post ----

pmix_status_t up_connected2(const pmix_proc_t *proc, void *, pmix_info_t[], size_t,
                            pmix_op_cbfunc_t, void *)
{
    // cbfunc is NULL in 4.2.2 (P3): answer by the return code.
    debug("client_connected rank %u", proc->rank);
    Event e(Event::Kind::Connected);
    e.rank = static_cast<int>(proc->rank);
    g_queue->push(std::move(e));
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t up_connected(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb, void *cbd)
{
    return up_connected2(proc, obj, nullptr, 0, cb, cbd);
}

pmix_status_t up_finalized(const pmix_proc_t *proc, void *, pmix_op_cbfunc_t, void *)
{
    // Posted before we return, so it is in the queue before the client can
    // exit: the main loop reaps first and drains after, and cannot miss it.
    debug("client_finalized rank %u", proc->rank);
    Event e(Event::Kind::Finalized);
    e.rank = static_cast<int>(proc->rank);
    g_queue->push(std::move(e));
    return PMIX_OPERATION_SUCCEEDED;   // P4: else the client blocks in PMIx_Finalize
}

pmix_status_t up_abort(const pmix_proc_t *proc, void *, int status, const char msg[],
                       pmix_proc_t[], size_t, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    debug("abort rank %u status %d", proc->rank, status);
    Event e(Event::Kind::Abort);
    e.rank = static_cast<int>(proc->rank);
    e.status = status;
    e.msg = msg ? msg : "";          // P5: msg is freed when we return
    e.op_cb = cbfunc;
    e.op_cbdata = cbdata;
    g_queue->push(std::move(e));
    return PMIX_SUCCESS;             // cbfunc comes from the main loop
}

pmix_status_t up_fence(const pmix_proc_t[], size_t, const pmix_info_t info[], size_t ninfo,
                       char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    debug("fence_nb %zu bytes", ndata);
    Event e(Event::Kind::Fence);
    // Pass through the library's view of the local part (P2): a dead
    // participant turns it into PARTIAL_SUCCESS / LOST_CONNECTION.
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_LOCAL_COLLECTIVE_STATUS) && info[i].value.type == PMIX_STATUS)
            e.fence_status = info[i].value.data.status;
    if (ndata) e.data.assign(data, data + ndata);   // the library owns data; copy
    e.modex_cb = cbfunc;
    e.modex_cbdata = cbdata;
    g_queue->push(std::move(e));
    return PMIX_SUCCESS;
}

pmix_status_t up_dmodex(const pmix_proc_t *, const pmix_info_t[], size_t, pmix_modex_cbfunc_t, void *)
{
    // One node: every rank's data is already in this server (P20).
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_server_module_t g_module;

// RAII for a pmix_info_t array built incrementally.
class InfoList {
public:
    explicit InfoList(size_t cap) { v_.reserve(cap); }
    ~InfoList()
    {
        for (size_t k : borrowed_)
            v_[k].value.type = PMIX_UNDEF;   // not ours to destruct
        for (auto &i : v_) PMIX_INFO_DESTRUCT(&i);
    }
    InfoList(const InfoList &) = delete;
    InfoList &operator=(const InfoList &) = delete;
    void add(const char *key, const void *val, pmix_data_type_t t)
    {
        v_.emplace_back();
        PMIX_INFO_CONSTRUCT(&v_.back());
        PMIx_Info_load(&v_.back(), key, val, t);
    }
    // Takes ownership of darray (freed with the info).
    void add_darray(const char *key, pmix_data_array_t *darray)
    {
        v_.emplace_back();
        PMIX_INFO_CONSTRUCT(&v_.back());
        PMIX_LOAD_KEY(v_.back().key, key);
        v_.back().value.type = PMIX_DATA_ARRAY;
        v_.back().value.data.darray = darray;
    }
    // The topology by pointer: PMIx_Info_load would duplicate it
    // (hwloc_topology_dup) and the destructor destroy the copy.
    void add_topology(pmix_topology_t *topo)
    {
        v_.emplace_back();
        PMIX_INFO_CONSTRUCT(&v_.back());
        PMIX_LOAD_KEY(v_.back().key, PMIX_TOPOLOGY2);
        v_.back().value.type = PMIX_TOPO;
        v_.back().value.data.topo = topo;
        borrowed_.push_back(v_.size() - 1);
    }
    pmix_info_t *data() { return v_.data(); }
    size_t size() const { return v_.size(); }

private:
    std::vector<pmix_info_t> v_;
    std::vector<size_t> borrowed_;
};

// How long PMIx's connection handler may wait for a connecting process's
// first bytes once the kernel hands it over, and how long the kernel keeps a
// connection that has sent nothing away from PMIx. A PMIx client sends its
// header right after connect(), so neither delays a rank.
constexpr int kHandshakeReadLimitS = 2;
constexpr int kSilentConnectionHoldS = 60;

// libpmix 4.2.2 reads a new connection's header with blocking recv() on its
// one progress thread and no time limit (ptl_base_connection_hdlr.c), and it
// listens on 127.0.0.1, which every local user can reach: one process that
// connects and stays silent stops all PMIx service of the job (ranks hang in
// PMIx_Init, fences, finalize) until it goes away. PMIx has no server-side
// handshake timeout or connection cap to set (handshake_wait_time is the
// client's). So on PMIx's listener:
//  - TCP_DEFER_ACCEPT: the kernel queues a connection for accept() only
//    once data arrives (or after kSilentConnectionHoldS), so silent ones
//    never reach the library while they stay silent that long;
//  - SO_RCVTIMEO, which Linux copies to the sockets accept() makes: one
//    that does reach the library costs at most kHandshakeReadLimitS, and the
//    library then closes it.
// The listener is the only listening socket weftrun has (it opens none).
// Returns how many listeners were found.
int harden_pmix_listeners()
{
    int found = 0;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return 0;
    const timeval limit{kHandshakeReadLimitS, 0};
    const int hold = kSilentConnectionHoldS;
    for (dirent *e; (e = readdir(dir)) != nullptr;) {
        char *end = nullptr;
        long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
        int listening = 0, domain = 0;
        socklen_t len = sizeof listening;
        if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
            continue;
        len = sizeof domain;
        if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
            (domain != AF_INET && domain != AF_INET6))
            continue;
        const bool timed = setsockopt(static_cast<int>(fd), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) == 0;
        const bool deferred = setsockopt(static_cast<int>(fd), IPPROTO_TCP, TCP_DEFER_ACCEPT, &hold, sizeof hold) == 0;
        if (timed && deferred) ++found;
    }
    closedir(dir);
    return found;
}

} // namespace

weft::Status PmixServer::init(const std::string &session_dir, EventQueue &queue, bool debug_on,
                              hwloc_topology_t topology)
{
    g_queue = &queue;
    g_debug = debug_on;
    std::memset(&g_module, 0, sizeof g_module);
    g_module.client_connected = up_connected;
    g_module.client_connected2 = up_connected2;
    g_module.client_finalized = up_finalized;
    g_module.abort = up_abort;
    g_module.fence_nb = up_fence;
    g_module.direct_modex = up_dmodex;

    std::string server_ns = "weftrun-server." + std::to_string(getpid());
    pmix_rank_t zero = 0;
    InfoList info(5);
    // Both tmpdirs inside the session dir: the dstore files go there and
    // are removed with it (P11).
    info.add(PMIX_SERVER_TMPDIR, session_dir.c_str(), PMIX_STRING);
    info.add(PMIX_SYSTEM_TMPDIR, session_dir.c_str(), PMIX_STRING);
    info.add(PMIX_SERVER_NSPACE, server_ns.c_str(), PMIX_STRING);
    info.add(PMIX_SERVER_RANK, &zero, PMIX_PROC_RANK);
    // Without a topology PMIx_server_init discovers the machine again with
    // I/O devices (hwloc's "important" filter): PCI, GPUs through CUDA,
    // NVML, OpenCL, ... about 280 ms on a host with a GPU, for data nobody
    // asks for (the ranks read weftrun's XML export). PMIx keeps the
    // pointer and never frees a topology it was given.
    pmix_topology_t topo;
    PMIX_TOPOLOGY_CONSTRUCT(&topo);
    std::string source = std::string("hwloc:") + HWLOC_VERSION;
    topo.source = source.data();
    topo.topology = topology;
    if (topology)
        info.add_topology(&topo);
    pmix_status_t st = PMIx_server_init(&g_module, info.data(), info.size());
    if (st != PMIX_SUCCESS)
        return weft::Status(WEFT_ERROR, std::string("PMIx_server_init failed: ") + PMIx_Error_string(st) +
                            "; PMIx needs the loopback interface (127.0.0.1) up and a writable " + session_dir);
    int listeners = harden_pmix_listeners();
    debug("PMIx listeners holding silent connections back and limiting handshake reads: %d", listeners);
    return {};
}

weft::Status PmixServer::register_job(const std::string &nspace, int n, const std::string &host)
{
    nspace_ = nspace;
    auto un = static_cast<uint32_t>(n);
    uint32_t one = 1, zero32 = 0;
    pmix_rank_t leader = 0;

    std::string nodes_in = host, peers;
    for (int r = 0; r < n; ++r) peers += (r ? "," : "") + std::to_string(r);
    char *node_map = nullptr, *proc_map = nullptr;
    if (pmix_status_t st = PMIx_generate_regex(nodes_in.c_str(), &node_map); st != PMIX_SUCCESS)
        return pmix_error("PMIx_generate_regex(" + host + ")", st);
    if (pmix_status_t st = PMIx_generate_ppn(peers.c_str(), &proc_map); st != PMIX_SUCCESS) {
        std::free(node_map);
        return pmix_error("PMIx_generate_ppn", st);
    }

    InfoList info(16 + static_cast<size_t>(n));
    // JOB_SIZE == nlocalprocs makes the job local-only (P1).
    info.add(PMIX_UNIV_SIZE, &un, PMIX_UINT32);
    info.add(PMIX_JOB_SIZE, &un, PMIX_UINT32);
    info.add(PMIX_MAX_PROCS, &un, PMIX_UINT32);
    info.add(PMIX_JOBID, nspace.c_str(), PMIX_STRING);
    info.add(PMIX_NUM_NODES, &one, PMIX_UINT32);
    // Maps as PMIX_REGEX (P13); the library copies them.
    info.add(PMIX_NODE_MAP, node_map, PMIX_REGEX);
    info.add(PMIX_PROC_MAP, proc_map, PMIX_REGEX);
    std::free(node_map);
    std::free(proc_map);
    info.add(PMIX_LOCAL_SIZE, &un, PMIX_UINT32);
    info.add(PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
    info.add(PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    info.add(PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
    info.add(PMIX_NODEID, &zero32, PMIX_UINT32);
    for (int r = 0; r < n; ++r) {
        pmix_data_array_t *d = nullptr;
        PMIX_DATA_ARRAY_CREATE(d, 6, PMIX_INFO);
        if (!d) return weft::Status(WEFT_ERR_NO_MEMORY, "out of memory building the PMIx job info");
        auto *pi = static_cast<pmix_info_t *>(d->array);
        auto rank = static_cast<pmix_rank_t>(r);
        auto lr = static_cast<uint16_t>(r);
        uint32_t appnum = 0;
        PMIx_Info_load(&pi[0], PMIX_RANK, &rank, PMIX_PROC_RANK);   // must be first (P14)
        PMIx_Info_load(&pi[1], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
        PMIx_Info_load(&pi[2], PMIX_NODE_RANK, &lr, PMIX_UINT16);
        PMIx_Info_load(&pi[3], PMIX_NODEID, &zero32, PMIX_UINT32);
        PMIx_Info_load(&pi[4], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
        PMIx_Info_load(&pi[5], PMIX_APPNUM, &appnum, PMIX_UINT32);
        info.add_darray(PMIX_PROC_DATA, d);
    }

    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace.c_str());
    if (auto s = run_op("PMIx_server_register_nspace(" + nspace + ")", [&](OpWait *w) {
            return PMIx_server_register_nspace(ns, n, info.data(), info.size(), OpWait::cb, w);
        }); !s.ok())
        return s;
    return run_op("PMIx_server_setup_local_support(" + nspace + ")", [&](OpWait *w) {
        return PMIx_server_setup_local_support(ns, nullptr, 0, OpWait::cb, w);
    });
}

weft::Status PmixServer::register_client(int rank)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace_.c_str(), static_cast<pmix_rank_t>(rank));
    return run_op("PMIx_server_register_client(rank " + std::to_string(rank) + ")", [&](OpWait *w) {
        return PMIx_server_register_client(&proc, geteuid(), getegid(), nullptr, OpWait::cb, w);
    });
}

weft::Status PmixServer::setup_fork(int rank, char ***env)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace_.c_str(), static_cast<pmix_rank_t>(rank));
    pmix_status_t st = PMIx_server_setup_fork(&proc, env);
    return st == PMIX_SUCCESS ? weft::Status() : pmix_error("PMIx_server_setup_fork(rank " + std::to_string(rank) + ")", st);
}

namespace {
void release_fence_buffer(void *cbdata)
{
    delete static_cast<std::vector<char> *>(cbdata);
}
} // namespace

void PmixServer::complete_fence(Event &e)
{
    // One node: the allgather of all servers' blobs is our own blob. The
    // library reads it after a thread shift, so it lives until release.
    auto *buf = new std::vector<char>(std::move(e.data));
    e.modex_cb(e.fence_status, buf->empty() ? nullptr : buf->data(), buf->size(), e.modex_cbdata,
               release_fence_buffer, buf);
}

void PmixServer::complete_abort(Event &e)
{
    if (e.op_cb) e.op_cb(PMIX_SUCCESS, e.op_cbdata);
    e.op_cb = nullptr;
}

void PmixServer::finalize()
{
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace_.c_str());
    auto *w = new OpWait();
    PMIx_server_deregister_nspace(ns, OpWait::cb, w);
    if (w->wait(kOpLimit)) delete w;   // else leaked: see OpWait
    PMIx_server_finalize();
}

} // namespace weftrun
