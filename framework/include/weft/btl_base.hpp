// SPDX-License-Identifier: BSD-3-Clause
// The C++ base of a btl component (header-only; components do not link
// libweft). A component writes its module as a class and gets from here
// what every btl used to write by hand:
// - ModuleBase<M>: embeds the C module struct, and casts a C pointer back
//   to the module (from()) and to its endpoint (endpoint()) with a check of
//   the ops table, no lookup: the C structs sit at a known offset
//   (static_assert below), so a send finds its endpoint in a few loads.
// - the C ops table (ModuleBase<M>::ops), generated from M's members: an op
//   M lacks is NULL in the table (the weft_btl_*() wrappers then answer
//   WEFT_ERR_NOT_SUPPORTED). One exception policy: no exception crosses the
//   C ABI; each entry maps one to a status code
//   (cutil::current_exception_status, the one mapping).
// - Modules<M>: the component entry points that depend only on M (init's
//   argument checks and ownership, start_connect, finalize, the module op
//   finalize), for a single module (init_one) or several (init).
// - write_reason() for the why/reason buffers of the C ABI; weft::UniqueFd.
//
// What M provides (the names mirror weft_btl_module_ops_t; E is
// M::Endpoint, a struct deriving from EndpointBase):
//   static constexpr const char *kName;     // "tcp": for messages
//   int reachable(const weft_btl_peer_t *, char *why, size_t why_len);
//   int send(E &, uint8_t am_id, const iovec *, int iovcnt);
//   int progress();
//   int connect(const weft_btl_peer_t *, weft_btl_endpoint_t **out);
//   bool in_progress() const;               // true inside its upcalls
// and, when it has them (optional ops): card, sendi, sendx, mem_register,
// mem_deregister, wait_fd, disconnect, prepare_wait, modex_ready, with the
// C op's arguments (module/endpoint pointer replaced by the object), and
// for put and get one int rdma(E &, bool is_put, void *local, size_t len,
// uint64_t remote_addr, const void *rkey, size_t rkey_len, cb, cb_ctx). A static bool usable(const E &) makes endpoint() refuse
// endpoints that are still allocated but must not be used any more.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include <sys/uio.h>

#include <weft/btl.h>
#include <weft/component_util.hpp>
#include <weft/unique_fd.hpp>

namespace weft::btl {

// Whether a placement the runtime answered (upcalls.place) keeps the rules
// of btl.h for a message of len bytes whose first head_len were shown: 1 to
// WEFT_BTL_PLACE_IOV pieces, no null buffer with bytes, skip within head,
// and room for exactly len - skip bytes.
inline bool placement_fits(const weft_btl_placement_t &p, size_t head_len, size_t len) noexcept
{
    if (p.iovcnt < 1 || p.iovcnt > WEFT_BTL_PLACE_IOV || p.skip > head_len || p.skip > len)
        return false;
    size_t room = 0;
    for (int i = 0; i < p.iovcnt; ++i) {
        if (p.iov[i].iov_base == nullptr && p.iov[i].iov_len != 0)
            return false;
        room += p.iov[i].iov_len;
    }
    return room == len - p.skip;
}

// Writes a reason into a why/reason buffer of the C ABI (either may be
// NULL/0: the caller did not ask). Truncates to the buffer.
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
inline void write_reason(char *why, size_t why_len, const char *fmt, ...) noexcept
{
    if (!why || why_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

// The first part of every endpoint: the C struct the runtime holds.
struct EndpointBase {
    weft_btl_endpoint_t c{};
};
static_assert(std::is_standard_layout_v<EndpointBase> && offsetof(EndpointBase, c) == 0,
              "the runtime's weft_btl_endpoint_t pointer must convert back to its EndpointBase");

template <class M>
struct Ops;

template <class M>
class ModuleBase {
public:
    ModuleBase(const ModuleBase &) = delete;
    ModuleBase &operator=(const ModuleBase &) = delete;

    weft_btl_module_t *c_module() noexcept { return &c_; }
    const weft_btl_module_t *c_module() const noexcept { return &c_; }

    // The module behind a C pointer, or nullptr if m is not one of M's.
    static M *from(weft_btl_module_t *m) noexcept
    {
        return m && m->ops == &Ops<M>::table ? cast(m) : nullptr;
    }
    // The endpoint behind a C pointer of one of M's modules, or nullptr
    // (not M's, or M::usable says it is finished).
    template <class Mod = M>   // (deferred: M is complete only where this is used)
    static typename Mod::Endpoint *endpoint(weft_btl_endpoint_t *ep) noexcept
    {
        using E = typename Mod::Endpoint;
        static_assert(std::is_base_of_v<EndpointBase, E>, "M::Endpoint derives from weft::btl::EndpointBase");
        if (!ep || !from(ep->module))
            return nullptr;
        E *e = static_cast<E *>(reinterpret_cast<EndpointBase *>(ep));
        if constexpr (requires { { Mod::usable(*e) } -> std::convertible_to<bool>; }) {
            if (!Mod::usable(*e))
                return nullptr;
        }
        return e;
    }
    // The module of an endpoint endpoint() accepted: no check left to make.
    static M *module_of(weft_btl_endpoint_t *ep) noexcept { return cast(ep->module); }

    // The module's own counters (btl.h): its own block until the runtime
    // hands it one in the counter page (attach_counters, every module of
    // this base has the op), then that block. Counted only off the send
    // fast path: where the module answers AGAIN, fails, connects,
    // registers.
    weft_btl_counters_t &counters() noexcept { return *counters_; }
    void count_failure(const char *reason) noexcept
    {
        ++counters_->failures;
        std::snprintf(counters_->last_failure, sizeof counters_->last_failure, "%s", reason ? reason : "");
    }
    // An endpoint's new state, counted (connects; failures with why).
    void count_state(weft_btl_ep_state_t state, const char *why) noexcept
    {
        if (state == WEFT_BTL_EP_CONNECTED)
            ++counters_->connects;
        else if (state == WEFT_BTL_EP_FAILED)
            count_failure(why);
    }
    // WEFT_ERR_AGAIN, counted: for the module's own "no room now" answers.
    int again() noexcept
    {
        ++counters_->again;
        return WEFT_ERR_AGAIN;
    }
    // The op: what was counted so far moves into block, which is used from
    // now on; a block smaller than this module's struct is refused (the
    // module would write past it), and the module keeps its own.
    int attach_counters(weft_btl_counters_t *block) noexcept
    {
        if (!block || block->size < sizeof(weft_btl_counters_t))
            return WEFT_ERR_NOT_SUPPORTED;
        const uint64_t size = block->size;
        std::memcpy(block, counters_, sizeof *block);
        block->size = size;
        counters_ = block;
        return WEFT_SUCCESS;
    }

protected:
    explicit ModuleBase(const weft_btl_component_t *component) noexcept
    {
        c_.size = sizeof c_;
        c_.component = component;
        c_.ops = &Ops<M>::table;
        c_.caps.size = sizeof c_.caps;
    }
    ~ModuleBase() = default;

    weft_btl_module_t c_{};

    // Protected like c_: a standard-layout class has one access for its data.
    weft_btl_counters_t own_counters_{sizeof(weft_btl_counters_t), 0, 0, 0, 0, 0, 0, 0, {}};
    weft_btl_counters_t *counters_ = &own_counters_;

private:
    static M *cast(weft_btl_module_t *m) noexcept
    {
        static_assert(std::is_standard_layout_v<ModuleBase> && offsetof(ModuleBase, c_) == 0,
                      "the runtime's weft_btl_module_t pointer must convert back to its ModuleBase");
        return static_cast<M *>(reinterpret_cast<ModuleBase *>(m));
    }
};

// The module objects of a component, with the entry points that need
// nothing but them. The component's init() passes its own creation step.
template <class M>
class Modules {
public:
    static std::vector<std::unique_ptr<M>> &all() noexcept
    {
        static std::vector<std::unique_ptr<M>> modules;
        return modules;
    }

    // init(): checks the arguments, refuses a second init, runs
    // create(all(), max_modules) (which appends at most max_modules
    // modules, and returns a status) under the exception policy, and hands
    // the modules out. A failed create leaves no module behind.
    template <class Create>
    static int init(const weft_host_t *host, const weft_component_t *self, weft_btl_module_t **out,
                    int max_modules, int *num_modules, Create &&create) noexcept
    {
        if (!num_modules)
            return WEFT_ERR_BAD_PARAM;
        *num_modules = 0;
        if (!out || max_modules < 1)
            return WEFT_ERR_BAD_PARAM;
        auto &modules = all();
        if (!modules.empty()) {
            host->log(self, WEFT_LOG_ERROR, "init called twice without finalize; finalize the first modules first");
            return WEFT_ERR_EXISTS;
        }
        if (int rc = cutil::guarded([&] { return create(modules, max_modules); }); rc != WEFT_SUCCESS) {
            modules.clear();
            return rc;
        }
        for (const auto &m : modules) {
            if (*num_modules == max_modules)
                break;
            out[(*num_modules)++] = m->c_module();
        }
        return WEFT_SUCCESS;
    }

    // init() of a component with one module: make(std::unique_ptr<M> &)
    // reads its configuration, creates the module and returns a status
    // (throwing is fine); the module's start(), when M has one, must succeed.
    template <class Make>
    static int init_one(const weft_host_t *host, const weft_component_t *self, weft_btl_module_t **out,
                        int max_modules, int *num_modules, Make &&make) noexcept
    {
        return init(host, self, out, max_modules, num_modules, [&](auto &modules, int) -> int {
            std::unique_ptr<M> m;
            if (int rc = make(m); rc != WEFT_SUCCESS)
                return rc;
            if (!m)
                return WEFT_ERR_NO_MEMORY;
            if constexpr (requires { { m->start() } -> std::convertible_to<int>; }) {
                if (int rc = m->start(); rc != WEFT_SUCCESS)
                    return rc;
            }
            modules.push_back(std::move(m));
            return WEFT_SUCCESS;
        });
    }

    static int start_connect(weft_btl_module_t *module, const weft_btl_peer_t *peer,
                             weft_btl_endpoint_t **endpoint) noexcept
    {
        if (!endpoint)
            return WEFT_ERR_BAD_PARAM;
        *endpoint = nullptr;
        M *m = M::from(module);
        if (!m || !peer)
            return WEFT_ERR_BAD_PARAM;
        try {
            return m->connect(peer, endpoint);
        } catch (...) {
            return cutil::current_exception_status();
        }
    }

    // The module op finalize: frees one module init() made. Refused for
    // anything else, and from inside its own upcalls (that would free the
    // module under the progress() that is delivering).
    static int release(weft_btl_module_t *module) noexcept
    {
        M *m = M::from(module);
        auto &modules = all();
        for (auto it = modules.begin(); m && it != modules.end(); ++it) {
            if (it->get() != m)
                continue;
            if (m->in_progress())
                return WEFT_ERR_BAD_PARAM;
            modules.erase(it);
            return WEFT_SUCCESS;
        }
        return WEFT_ERR_BAD_PARAM;
    }

    // The component's finalize(): safe after a failed init and after every
    // module was released.
    static int finalize(const weft_host_t *) noexcept
    {
        all().clear();
        return WEFT_SUCCESS;
    }
};

// The generated C ops table of M and its entries. Each entry checks the
// pointers it is given (a foreign or NULL one is WEFT_ERR_BAD_PARAM, never
// a crash), then calls M under the exception policy.
template <class M>
struct Ops {
    using E = typename M::Endpoint;
    // Inside each entry: try { return ...; } catch (...) { return failed(); }
    // A try block costs nothing until something throws (and the compiler
    // drops it around members declared noexcept); the mapping is out of line.
    static int failed() noexcept { return cutil::current_exception_status(); }

    static int reachable(weft_btl_module_t *m, const weft_btl_peer_t *peer, char *why, size_t why_len) noexcept
    {
        M *mod = M::from(m);
        if (!mod || !peer) {
            write_reason(why, why_len, "btl/%s: reachable() without a btl/%s module or a peer", M::kName, M::kName);
            return 0;
        }
        int rc;
        try {
            rc = mod->reachable(peer, why, why_len);
        } catch (...) {
            rc = failed();
        }
        if (rc < 0)
            write_reason(why, why_len, "btl/%s: could not decide reachability (status %d)", M::kName, rc);
        return rc == 1 ? 1 : 0;
    }
    static int card(weft_btl_module_t *m, void *buf, size_t *len) noexcept
    {
        M *mod = M::from(m);
        if (!mod || !len)
            return WEFT_ERR_BAD_PARAM;
        try {
            return mod->card(buf, len);
        } catch (...) {
            return failed();
        }
    }
    static int send(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt) noexcept
    {
        E *e = M::endpoint(ep);
        if (!e || iovcnt < 0 || (iovcnt > 0 && !iov))
            return WEFT_ERR_BAD_PARAM;
        try {
            return M::module_of(ep)->send(*e, am_id, iov, iovcnt);
        } catch (...) {
            return failed();
        }
    }
    static int sendi(weft_btl_endpoint_t *ep, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                     size_t payload_len) noexcept
    {
        E *e = M::endpoint(ep);
        if (!e)
            return WEFT_ERR_BAD_PARAM;
        try {
            return M::module_of(ep)->sendi(*e, am_id, hdr, hdr_len, payload, payload_len);
        } catch (...) {
            return failed();
        }
    }
    static int sendx(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt,
                     uint32_t flags) noexcept
    {
        E *e = M::endpoint(ep);
        if (!e || iovcnt < 0 || (iovcnt > 0 && !iov))
            return WEFT_ERR_BAD_PARAM;
        try {
            return M::module_of(ep)->sendx(*e, am_id, iov, iovcnt, flags);
        } catch (...) {
            return failed();
        }
    }
    // put and get are M's rdma(E &, bool is_put, void *local, ...): one
    // path for both directions (put only reads local).
    static int put(weft_btl_endpoint_t *ep, const void *local, size_t len, uint64_t remote_addr, const void *rkey,
                   size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx) noexcept
    {
        E *e = M::endpoint(ep);
        if (!e)
            return WEFT_ERR_BAD_PARAM;
        try {
            return M::module_of(ep)->rdma(*e, true, const_cast<void *>(local), len, remote_addr, rkey, rkey_len, cb,
                                          cb_ctx);
        } catch (...) {
            return failed();
        }
    }
    static int get(weft_btl_endpoint_t *ep, void *local, size_t len, uint64_t remote_addr, const void *rkey,
                   size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx) noexcept
    {
        E *e = M::endpoint(ep);
        if (!e)
            return WEFT_ERR_BAD_PARAM;
        try {
            return M::module_of(ep)->rdma(*e, false, local, len, remote_addr, rkey, rkey_len, cb, cb_ctx);
        } catch (...) {
            return failed();
        }
    }
    static int mem_register(weft_btl_module_t *m, void *addr, size_t len, weft_btl_reg_t *reg) noexcept
    {
        M *mod = M::from(m);
        if (!mod || !reg)
            return WEFT_ERR_BAD_PARAM;
        try {
            return mod->mem_register(addr, len, reg);
        } catch (...) {
            return failed();
        }
    }
    static int mem_deregister(weft_btl_module_t *m, weft_btl_reg_t *reg) noexcept
    {
        M *mod = M::from(m);
        if (!mod)
            return WEFT_ERR_BAD_PARAM;
        try {
            return mod->mem_deregister(reg);
        } catch (...) {
            return failed();
        }
    }
    static int progress(weft_btl_module_t *m) noexcept
    {
        M *mod = M::from(m);
        if (!mod)
            return WEFT_ERR_BAD_PARAM;
        try {
            return mod->progress();
        } catch (...) {
            return failed();
        }
    }
    static int wait_fd(weft_btl_module_t *m) noexcept
    {
        M *mod = M::from(m);
        if (!mod)
            return -1;
        try {
            const int fd = mod->wait_fd();
            return fd >= 0 ? fd : -1;
        } catch (...) {
            return -1;
        }
    }
    static int disconnect(weft_btl_endpoint_t *ep) noexcept
    {
        E *e = M::endpoint(ep);
        if (!e)
            return WEFT_ERR_BAD_PARAM;
        try {
            return M::module_of(ep)->disconnect(*e);
        } catch (...) {
            return failed();
        }
    }
    static int finalize(weft_btl_module_t *m) noexcept { return Modules<M>::release(m); }
    static int prepare_wait(weft_btl_module_t *m) noexcept
    {
        M *mod = M::from(m);
        if (!mod)
            return WEFT_ERR_BAD_PARAM;
        try {
            return mod->prepare_wait();
        } catch (...) {
            return failed();
        }
    }
    static int modex_ready(weft_btl_module_t *m) noexcept
    {
        M *mod = M::from(m);
        if (!mod)
            return WEFT_ERR_BAD_PARAM;
        try {
            return mod->modex_ready();
        } catch (...) {
            return failed();
        }
    }

    static int attach_counters(weft_btl_module_t *m, weft_btl_counters_t *block) noexcept
    {
        M *mod = M::from(m);
        return mod ? mod->attach_counters(block) : WEFT_ERR_BAD_PARAM;
    }

    static constexpr weft_btl_module_ops_t make() noexcept
    {
        weft_btl_module_ops_t t{};
        t.size = sizeof t;
        // Mandatory: the loader refuses a module without them.
        t.reachable = reachable;
        t.send = send;
        t.progress = progress;
        t.finalize = finalize;
        // Optional: present when M has the member.
        using B = std::byte;
        if constexpr (requires(M &m, void *buf, size_t *len) { m.card(buf, len); })
            t.card = card;
        if constexpr (requires(M &m, E &e, const void *p, size_t n) { m.sendi(e, uint8_t{}, p, n, p, n); })
            t.sendi = sendi;
        if constexpr (requires(M &m, E &e, const iovec *iov) { m.sendx(e, uint8_t{}, iov, 0, 0u); })
            t.sendx = sendx;
        if constexpr (requires(M &m, E &e, const void *p, void *q, weft_btl_rdma_cb_t cb) {
                          m.rdma(e, true, q, size_t{}, uint64_t{}, p, size_t{}, cb, q);
                      }) {
            t.put = put;
            t.get = get;
        }
        if constexpr (requires(M &m, B *p, weft_btl_reg_t *reg) {
                          m.mem_register(p, size_t{}, reg);
                          m.mem_deregister(reg);
                      }) {
            t.mem_register = mem_register;
            t.mem_deregister = mem_deregister;
        }
        if constexpr (requires(M &m) { m.wait_fd(); })
            t.wait_fd = wait_fd;
        if constexpr (requires(M &m, E &e) { m.disconnect(e); })
            t.disconnect = disconnect;
        if constexpr (requires(M &m) { m.prepare_wait(); })
            t.prepare_wait = prepare_wait;
        if constexpr (requires(M &m) { m.modex_ready(); })
            t.modex_ready = modex_ready;
        t.attach_counters = attach_counters;
        return t;
    }

    static constexpr weft_btl_module_ops_t table = make();
};

} // namespace weft::btl
