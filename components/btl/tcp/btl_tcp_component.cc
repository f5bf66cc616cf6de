// SPDX-License-Identifier: BSD-3-Clause
// btl/tcp: the TCP transport. This file holds the component entry points:
// open registers the parameters, query and init choose the interfaces
// (btl_tcp_iface.*), init opens one module per chosen interface
// (btl_tcp_module.*).
#include <sys/random.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <weft/btl_base.hpp>

#include "btl_tcp_iface.hpp"
#include "btl_tcp_module.hpp"

namespace {

using namespace weft::btl_tcp;

int tcp_open(const weft_host_t *host);
int tcp_query(const weft_host_t *host, weft_query_result_t *result);
int tcp_finalize(const weft_host_t *host);
int tcp_init(const weft_host_t *host, weft_btl_module **modules, int max_modules, int *num_modules);
using Modules = weft::btl::Modules<TcpModule>;

} // namespace

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_tcp_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "tcp", 1, 0, 0),
             .open = tcp_open, .query = tcp_query, .finalize = tcp_finalize},
    .init = tcp_init,
    .start_connect = Modules::start_connect,
};

namespace {

const weft_component_t *self() { return &weft_btl_tcp_component.base; }

// Virtual bridges and container links: using them between hosts is the
// classic cause of hangs (USER-PAINS §4), so they are skipped unless asked.
constexpr const char *kDefaultExclude = "docker*,virbr*,veth*,br-*";

const weft::cutil::ParamSpec kParams[] = {
    {"if_include", WEFT_PARAM_LIST, "", WEFT_LEVEL_USER_BASIC,
     "Interfaces to use, as names or CIDR ranges (eth0,10.1.0.0/16). Mutually exclusive with "
     "btl_tcp_if_exclude."},
    {"if_exclude", WEFT_PARAM_LIST, kDefaultExclude, WEFT_LEVEL_USER_BASIC,
     "Interfaces never to use, as names (wildcards allowed) or CIDR ranges. Link-local "
     "addresses are always skipped; loopback is used only for peers on the same node."},
    {"links", WEFT_PARAM_INT, "2", WEFT_LEVEL_TUNER_BASIC,
     "TCP connections per peer and interface (1 to 16); rendezvous data is spread over them, "
     "everything else keeps to the first. Every process of a job must use the same value."},
    {"eager_limit", WEFT_PARAM_SIZE, "64k", WEFT_LEVEL_TUNER_BASIC,
     "Largest message sent eagerly (in one go, without a rendezvous)."},
    {"sndbuf", WEFT_PARAM_SIZE, "4M", WEFT_LEVEL_TUNER_DETAIL,
     "SO_SNDBUF for data sockets; 0, or more than net.core.wmem_max allows, keeps the kernel's "
     "autotuning."},
    {"rcvbuf", WEFT_PARAM_SIZE, "4M", WEFT_LEVEL_TUNER_DETAIL,
     "SO_RCVBUF for data sockets; 0, or more than net.core.rmem_max allows, keeps the kernel's "
     "autotuning."},
    {"priority", WEFT_PARAM_INT, "10", WEFT_LEVEL_TUNER_DETAIL,
     "Selection priority among transports that reach the same peer (higher wins); a module "
     "gets up to 3 more the nearer its NIC is to the process binding."},
    {"max_send", WEFT_PARAM_SIZE, "64M", WEFT_LEVEL_TUNER_DETAIL,
     "Largest payload of one send() (256 bytes to 4G-1); the runtime splits larger messages. "
     "Frames announcing more are refused as hostile."},
    {"max_queued", WEFT_PARAM_INT, "4096", WEFT_LEVEL_TUNER_DETAIL,
     "Messages per endpoint that may wait for the socket before send() answers WEFT_ERR_AGAIN "
     "(at least 1)."},
    {"handshake_timeout", WEFT_PARAM_DOUBLE, "10", WEFT_LEVEL_TUNER_DETAIL,
     "Seconds a connection may take for its handshake; slower ones are closed (and counted as "
     "refused when incoming)."},
    {"keepalive_time", WEFT_PARAM_INT, "30", WEFT_LEVEL_TUNER_DETAIL,
     "Seconds of silence before TCP keepalive probes a peer (TCP_KEEPIDLE); with "
     "keepalive_intvl and keepalive_probes it bounds how long a vanished host goes unnoticed."},
    {"keepalive_intvl", WEFT_PARAM_INT, "5", WEFT_LEVEL_TUNER_DETAIL,
     "Seconds between keepalive probes (TCP_KEEPINTVL)."},
    {"keepalive_probes", WEFT_PARAM_INT, "4", WEFT_LEVEL_TUNER_DETAIL,
     "Unanswered keepalive probes before the connection fails (TCP_KEEPCNT)."},
};

int tcp_open(const weft_host_t *host)
{
    if (int rc = weft::cutil::register_params(host, self(), kParams); rc != WEFT_SUCCESS)
        return rc;
    // Both lists set by the user is ambiguous: refuse instead of guessing.
    if (host->param_is_set("btl_tcp_if_include") == 1 &&
        host->param_is_set("btl_tcp_if_exclude") == 1) {
        const char *inc = "", *exc = "";
        host->param_get_string("btl_tcp_if_include", &inc);
        host->param_get_string("btl_tcp_if_exclude", &exc);
        const char *args[] = {"include", inc, "exclude", exc, nullptr};
        host->show_help(self(), "include-and-exclude", args);
        return WEFT_ERR_BAD_VALUE;
    }
    return WEFT_SUCCESS;
}

int distance_of(const weft_host_t *host, const char *name)
{
    if (!WEFT_HAS_MEMBER(host, weft_host_t, device_distance) || !host->device_distance)
        return WEFT_DISTANCE_UNKNOWN;
    return host->device_distance(name);
}

// The interfaces that get modules; false with *error when the parameters conflict.
bool chosen_interfaces(const weft_host_t *host, std::vector<Chosen> *chosen,
                       std::vector<std::string> *skipped, std::string *error)
{
    std::vector<IfAddr> all = list_interfaces(error);
    if (all.empty() && !error->empty())
        return false;
    return choose_interfaces(host, all, [host](const char *n) { return distance_of(host, n); }, chosen,
                             skipped, error);
}

std::string join(const std::vector<std::string> &items)
{
    std::string s;
    for (const auto &i : items)
        s += (s.empty() ? "" : ", ") + i;
    return s.empty() ? "none" : s;
}

// btl_tcp_if_include naming an interface this host lacks is worth a word
// even when tcp is not used (then nothing else would say it): query() runs
// in every process whether or not tcp is selected, and the process that
// speaks for the job says it, once.
void warn_about_absent_interfaces(const weft_host_t *host)
{
    if (!WEFT_HAS_MEMBER(host, weft_host_t, speaks_for_job) || !host->speaks_for_job ||
        host->speaks_for_job() != 1 || host->param_is_set("btl_tcp_if_include") != 1)
        return;
    const char *include = "";
    host->param_get_string("btl_tcp_if_include", &include);
    const std::vector<std::string> here = interface_names();
    if (here.empty())
        return;   // the kernel would not list them: nothing to compare with
    for (const std::string &name : names_matching_nothing(include, here))
        host->log(self(), WEFT_LOG_WARN,
                  "btl_tcp_if_include=%s: no interface on this host is named '%s' (it has: %s); "
                  "that entry selects nothing",
                  include, name.c_str(), join(here).c_str());
}

int tcp_query(const weft_host_t *host, weft_query_result_t *result)
{
    warn_about_absent_interfaces(host);
    std::vector<Chosen> chosen;
    std::vector<std::string> skipped;
    std::string error;
    int64_t priority = 10;
    host->param_get_int("btl_tcp_priority", &priority);
    result->priority = static_cast<int>(priority);
    if (!chosen_interfaces(host, &chosen, &skipped, &error)) {
        weft::cutil::set_reason(result, "%s", error.c_str());
        return WEFT_SUCCESS;
    }
    std::vector<std::string> names;
    for (const auto &c : chosen)
        names.push_back(c.addr.name + (c.loopback ? " (this node only)" : ""));
    if (chosen.empty()) {
        weft::cutil::set_reason(result, "no usable interface (skipped: %s; check "
                                        "btl_tcp_if_include/btl_tcp_if_exclude)",
                                join(skipped).c_str());
        return WEFT_SUCCESS;
    }
    result->available = 1;
    weft::cutil::set_reason(result, "interfaces: %s", join(names).c_str());
    return WEFT_SUCCESS;
}

// What the modules of this process share (they point to it): init()
// makes it before the modules, finalize() drops it after them.
std::unique_ptr<Identity> &identity()
{
    static std::unique_ptr<Identity> id;
    return id;
}

int refuse_value(const weft_host_t *host, const char *name, const std::string &value, const char *accepted)
{
    const char *args[] = {"name", name, "value", value.c_str(), "accepted", accepted, nullptr};
    host->show_help(self(), "bad-value", args);
    return WEFT_ERR_BAD_VALUE;
}

int read_config(const weft_host_t *host, TcpConfig *c)
{
    int64_t priority = c->priority, max_queued = static_cast<int64_t>(c->max_queued), links = c->links;
    int64_t ka_time = c->keepalive_time, ka_intvl = c->keepalive_intvl, ka_probes = c->keepalive_probes;
    uint64_t eager = c->eager_limit, max_send = c->max_send, sndbuf = c->sndbuf, rcvbuf = c->rcvbuf;
    double hs = c->handshake_timeout;
    host->param_get_int("btl_tcp_priority", &priority);
    host->param_get_size("btl_tcp_eager_limit", &eager);
    host->param_get_size("btl_tcp_max_send", &max_send);
    host->param_get_size("btl_tcp_sndbuf", &sndbuf);
    host->param_get_size("btl_tcp_rcvbuf", &rcvbuf);
    host->param_get_int("btl_tcp_max_queued", &max_queued);
    host->param_get_int("btl_tcp_links", &links);
    host->param_get_double("btl_tcp_handshake_timeout", &hs);
    host->param_get_int("btl_tcp_keepalive_time", &ka_time);
    host->param_get_int("btl_tcp_keepalive_intvl", &ka_intvl);
    host->param_get_int("btl_tcp_keepalive_probes", &ka_probes);
    if (max_send < 256 || max_send > UINT32_MAX)
        return refuse_value(host, "btl_tcp_max_send", std::to_string(max_send), "256 to 4G-1 bytes");
    if (links < 1 || links > 16)
        return refuse_value(host, "btl_tcp_links", std::to_string(links), "1 to 16");
    if (max_queued < 1)
        return refuse_value(host, "btl_tcp_max_queued", std::to_string(max_queued), "1 or more");
    if (!(hs > 0))
        return refuse_value(host, "btl_tcp_handshake_timeout", std::to_string(hs), "seconds above 0");
    if (ka_time < 1 || ka_intvl < 1 || ka_probes < 1 || ka_time > 32767 || ka_intvl > 32767 || ka_probes > 127)
        return refuse_value(host, "btl_tcp_keepalive_*",
                            std::to_string(ka_time) + "/" + std::to_string(ka_intvl) + "/" + std::to_string(ka_probes),
                            "time and intvl 1..32767 seconds, probes 1..127");
    c->priority = static_cast<int>(priority);
    c->eager_limit = static_cast<size_t>(eager);
    c->max_send = static_cast<size_t>(max_send);
    c->sndbuf = static_cast<size_t>(sndbuf);
    c->rcvbuf = static_cast<size_t>(rcvbuf);
    c->max_queued = static_cast<size_t>(max_queued);
    c->links = static_cast<unsigned>(links);
    c->handshake_timeout = hs;
    c->keepalive_time = static_cast<int>(ka_time);
    c->keepalive_intvl = static_cast<int>(ka_intvl);
    c->keepalive_probes = static_cast<int>(ka_probes);
    return WEFT_SUCCESS;
}

// Opens one module per chosen interface into modules (Modules::init's
// creation step).
int init_modules(const weft_host_t *host, std::vector<std::unique_ptr<TcpModule>> &modules, int max_modules)
{
    TcpConfig config;
    if (int rc = read_config(host, &config); rc != WEFT_SUCCESS)
        return rc;
    std::vector<Chosen> chosen;
    std::vector<std::string> skipped;
    std::string error;
    if (!chosen_interfaces(host, &chosen, &skipped, &error)) {
        host->log(self(), WEFT_LOG_ERROR, "%s", error.c_str());
        return WEFT_ERR_BAD_VALUE;
    }
    auto id = std::make_unique<Identity>();
    // A per-process secret: a connector must present it (read from this
    // process's card in the modex) before its connection reaches the runtime.
    if (getrandom(id->secret, kSecretBytes, 0) != static_cast<ssize_t>(kSecretBytes)) {
        host->log(self(), WEFT_LOG_ERROR, "getrandom failed; cannot make the connection secret");
        return WEFT_ERR_IO;
    }
    for (const Chosen &c : chosen) {
        if (static_cast<int>(modules.size()) >= max_modules) {
            host->log(self(), WEFT_LOG_WARN, "more usable interfaces than the %d modules allowed; %s unused",
                      max_modules, c.addr.name.c_str());
            break;
        }
        auto m = std::make_unique<TcpModule>(host, &weft_btl_tcp_component, config, c, id.get());
        uint16_t port = 0;
        if (std::string err = m->open(&port); !err.empty()) {
            host->log(self(), WEFT_LOG_WARN, "interface %s skipped: %s", c.addr.name.c_str(), err.c_str());
            continue;
        }
        CardEntry e;
        uint8_t bytes[16];
        size_t n = address_bytes(reinterpret_cast<const sockaddr *>(&c.addr.addr), bytes);
        e.family = n == 4 ? 4 : 6;
        e.prefix = static_cast<uint8_t>(c.addr.prefix);
        e.loopback = c.loopback;
        e.port = port;
        std::memcpy(e.addr, bytes, n);
        id->entries.push_back(e);
        id->has_loopback = id->has_loopback || c.loopback;
        modules.push_back(std::move(m));
    }
    if (modules.empty()) {
        std::string inc, exc;
        const char *v = "";
        host->param_get_string("btl_tcp_if_include", &v);
        inc = v;
        host->param_get_string("btl_tcp_if_exclude", &v);
        exc = v;
        const std::string seen = join(skipped);
        const char *args[] = {"host", "this host", "seen", seen.c_str(), "include", inc.c_str(),
                              "exclude", exc.c_str(), nullptr};
        host->show_help(self(), "no-interfaces", args);
    }
    identity() = std::move(id);
    return WEFT_SUCCESS;
}

int tcp_init(const weft_host_t *host, weft_btl_module **modules, int max_modules, int *num_modules)
{
    return Modules::init(host, self(), modules, max_modules, num_modules,
                         [&](auto &owned, int max) { return init_modules(host, owned, max); });
}

int tcp_finalize(const weft_host_t *host)
{
    Modules::finalize(host);   // the modules first: they point to the identity
    identity().reset();
    return WEFT_SUCCESS;
}

} // namespace
