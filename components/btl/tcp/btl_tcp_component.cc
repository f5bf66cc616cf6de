// btl/tcp: the TCP transport. This file holds the component entry points:
// open registers the parameters, query finds the usable interfaces. The data
// path (modules, connections) arrives with the runtime's btl module
// interface.
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <set>
#include <string>

#include <weft/btl.h>
#include <weft/component_util.hpp>

namespace {

int tcp_open(const weft_host_t *host);
int tcp_query(const weft_host_t *host, weft_query_result_t *result);
int tcp_finalize(const weft_host_t *) { return WEFT_SUCCESS; }

int tcp_init(const weft_host_t *, weft_btl_module **, int, int *num_modules)
{
    *num_modules = 0;   // modules arrive with the runtime's btl module interface
    return WEFT_SUCCESS;
}

int tcp_start_connect(weft_btl_module *, const weft_btl_peer *, weft_btl_endpoint **)
{
    return WEFT_ERR_NOT_SUPPORTED;
}

} // namespace

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_tcp_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "tcp", 0, 1, 0),
             .open = tcp_open, .query = tcp_query, .finalize = tcp_finalize},
    .init = tcp_init,
    .start_connect = tcp_start_connect,
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
    {"links", WEFT_PARAM_INT, "1", WEFT_LEVEL_TUNER_BASIC,
     "TCP connections per peer and interface; large messages are striped across them."},
    {"eager_limit", WEFT_PARAM_SIZE, "64k", WEFT_LEVEL_TUNER_BASIC,
     "Largest message sent eagerly (in one go, without a rendezvous)."},
    {"sndbuf", WEFT_PARAM_SIZE, "0", WEFT_LEVEL_TUNER_DETAIL,
     "SO_SNDBUF for data sockets; 0 keeps the kernel's autotuning."},
    {"rcvbuf", WEFT_PARAM_SIZE, "0", WEFT_LEVEL_TUNER_DETAIL,
     "SO_RCVBUF for data sockets; 0 keeps the kernel's autotuning."},
    {"priority", WEFT_PARAM_INT, "10", WEFT_LEVEL_TUNER_DETAIL,
     "Selection priority among transports that reach the same peer (higher wins)."},
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

bool link_local(const sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        uint32_t a = ntohl(reinterpret_cast<const sockaddr_in *>(sa)->sin_addr.s_addr);
        return (a >> 16) == 0xa9fe;   // 169.254/16
    }
    const auto *a6 = &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr;
    return IN6_IS_ADDR_LINKLOCAL(a6);
}

bool interface_allowed(const weft_host_t *host, const ifaddrs *ifa)
{
    if (host->param_is_set("btl_tcp_if_include") == 1)
        return host->list_selects("btl_tcp_if_include", ifa->ifa_name, ifa->ifa_addr) == 1;
    return host->list_contains("btl_tcp_if_exclude", ifa->ifa_name, ifa->ifa_addr) == 0;
}

int tcp_query(const weft_host_t *host, weft_query_result_t *result)
{
    ifaddrs *raw = nullptr;
    if (getifaddrs(&raw) != 0) {
        weft::cutil::set_reason(result, "getifaddrs failed; cannot list network interfaces");
        return WEFT_SUCCESS;
    }
    std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> list(raw, freeifaddrs);
    std::set<std::string> usable, seen;
    bool loopback = false;
    for (const ifaddrs *ifa = raw; ifa; ifa = ifa->ifa_next) {
        if (!ifa->ifa_addr || (ifa->ifa_addr->sa_family != AF_INET &&
                               ifa->ifa_addr->sa_family != AF_INET6))
            continue;
        if (!(ifa->ifa_flags & IFF_UP) || link_local(ifa->ifa_addr))
            continue;
        seen.insert(ifa->ifa_name);
        if (!interface_allowed(host, ifa))
            continue;
        if (ifa->ifa_flags & IFF_LOOPBACK)
            loopback = true;
        else
            usable.insert(ifa->ifa_name);
    }
    int64_t priority = 10;
    host->param_get_int("btl_tcp_priority", &priority);
    result->priority = static_cast<int>(priority);
    std::string names;
    for (const auto &n : usable)
        names += (names.empty() ? "" : ",") + n;
    if (!usable.empty()) {
        result->available = 1;
        weft::cutil::set_reason(result, "interfaces: %s", names.c_str());
    } else if (loopback) {
        // Loopback alone still serves peers on this node.
        result->available = 1;
        weft::cutil::set_reason(result, "loopback only (peers on this node)");
    } else {
        std::string s;
        for (const auto &n : seen)
            s += (s.empty() ? "" : ",") + n;
        weft::cutil::set_reason(result, "no usable interface (seen: %s; check "
                                           "btl_tcp_if_include/btl_tcp_if_exclude)",
                                   s.empty() ? "none" : s.c_str());
    }
    return WEFT_SUCCESS;
}

} // namespace
