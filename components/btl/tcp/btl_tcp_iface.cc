// SPDX-License-Identifier: BSD-3-Clause
#include "btl_tcp_iface.hpp"

#include <arpa/inet.h>
#include <fnmatch.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <memory>

namespace weft::btl_tcp {

namespace {

unsigned mask_length(const sockaddr *mask)
{
    uint8_t bytes[16];
    size_t n = mask ? address_bytes(mask, bytes) : 0;
    unsigned bits = 0;
    for (size_t i = 0; i < n; ++i)
        bits += static_cast<unsigned>(std::popcount(bytes[i]));
    return bits;
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

bool is_address(const std::string &s)
{
    unsigned char buf[sizeof(in6_addr)];
    return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

} // namespace

std::vector<std::string> interface_names()
{
    std::vector<std::string> out;
    std::unique_ptr<struct if_nameindex, decltype(&if_freenameindex)> all(if_nameindex(),
                                                                          if_freenameindex);
    for (const struct if_nameindex *i = all.get(); i && i->if_index != 0; ++i)
        out.emplace_back(i->if_name);
    return out;
}

std::vector<std::string> names_matching_nothing(std::string_view list,
                                                const std::vector<std::string> &names)
{
    std::vector<std::string> out;
    list = trimmed(list);
    if (!list.empty() && list.front() == '^')
        list.remove_prefix(1);
    while (!list.empty()) {
        const size_t comma = list.find(',');
        const std::string item(trimmed(list.substr(0, comma)));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        if (item.empty() || item.find_first_of("/:") != std::string::npos || is_address(item))
            continue;
        const bool matched = std::any_of(names.begin(), names.end(), [&](const std::string &n) {
            return fnmatch(item.c_str(), n.c_str(), FNM_NOESCAPE) == 0;
        });
        if (!matched)
            out.push_back(item);
    }
    return out;
}

size_t address_bytes(const sockaddr *sa, uint8_t out[16])
{
    if (sa->sa_family == AF_INET) {
        std::memcpy(out, &reinterpret_cast<const sockaddr_in *>(sa)->sin_addr, 4);
        return 4;
    }
    if (sa->sa_family == AF_INET6) {
        std::memcpy(out, &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

bool same_subnet(const uint8_t *a, const uint8_t *b, size_t len, unsigned prefix)
{
    for (size_t i = 0; i < len && prefix > 0; ++i) {
        unsigned bits = prefix >= 8 ? 8 : prefix;
        auto mask = static_cast<uint8_t>(0xff00u >> bits);
        if ((a[i] & mask) != (b[i] & mask))
            return false;
        prefix -= bits;
    }
    return true;
}

bool is_link_local(const sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        uint32_t a = ntohl(reinterpret_cast<const sockaddr_in *>(sa)->sin_addr.s_addr);
        return (a >> 16) == 0xa9fe;   // 169.254/16
    }
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr);
    return false;
}

std::string describe(const sockaddr *sa, unsigned prefix)
{
    char text[INET6_ADDRSTRLEN] = "?";
    uint8_t bytes[16];
    if (size_t n = address_bytes(sa, bytes); n > 0)
        inet_ntop(sa->sa_family, bytes, text, sizeof text);
    std::string s = sa->sa_family == AF_INET6 ? "[" + std::string(text) + "]" : text;
    return s + "/" + std::to_string(prefix);
}

std::vector<IfAddr> list_interfaces(std::string *error)
{
    std::vector<IfAddr> out;
    ifaddrs *raw = nullptr;
    if (getifaddrs(&raw) != 0) {
        *error = std::string("getifaddrs failed: ") + std::strerror(errno);
        return out;
    }
    std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owned(raw, freeifaddrs);
    for (const ifaddrs *ifa = raw; ifa; ifa = ifa->ifa_next) {
        if (!ifa->ifa_addr || (ifa->ifa_addr->sa_family != AF_INET &&
                               ifa->ifa_addr->sa_family != AF_INET6))
            continue;
        IfAddr a;
        a.name = ifa->ifa_name;
        a.family = ifa->ifa_addr->sa_family;
        std::memcpy(&a.addr, ifa->ifa_addr,
                    a.family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
        a.prefix = mask_length(ifa->ifa_netmask);
        a.flags = ifa->ifa_flags;
        out.push_back(std::move(a));
    }
    return out;
}

bool choose_interfaces(const weft_host_t *host, const std::vector<IfAddr> &all,
                       const std::function<int(const char *)> &distance,
                       std::vector<Chosen> *out, std::vector<std::string> *skipped,
                       std::string *error)
{
    out->clear();
    const bool include = host->param_is_set("btl_tcp_if_include") == 1;
    if (include && host->param_is_set("btl_tcp_if_exclude") == 1) {
        *error = "btl_tcp_if_include and btl_tcp_if_exclude are both set; they are mutually "
                 "exclusive: unset one of them";
        return false;
    }
    // One module per interface name: its first IPv4 address, else its first
    // routable IPv6 one. A second address of the same interface would be a
    // second path over the same wire, which striping cannot use.
    std::map<std::string, Chosen> by_name;
    std::vector<std::string> order;
    for (const IfAddr &a : all) {
        const auto *sa = reinterpret_cast<const sockaddr *>(&a.addr);
        auto skip = [&](const char *why) { skipped->push_back(a.name + " " + describe(sa, a.prefix) + " (" + why + ")"); };
        if (a.family != AF_INET && a.family != AF_INET6)
            continue;
        if (!(a.flags & IFF_UP)) {
            skip("down");
            continue;
        }
        if (is_link_local(sa)) {
            skip("link-local address");
            continue;
        }
        if (include) {
            if (host->list_selects("btl_tcp_if_include", a.name.c_str(), sa) != 1) {
                skip("not in btl_tcp_if_include");
                continue;
            }
        } else if (host->list_contains("btl_tcp_if_exclude", a.name.c_str(), sa) != 0) {
            skip("in btl_tcp_if_exclude");
            continue;
        }
        auto it = by_name.find(a.name);
        if (it == by_name.end()) {
            Chosen c;
            c.addr = a;
            c.loopback = (a.flags & IFF_LOOPBACK) != 0;
            c.distance = WEFT_DISTANCE_UNKNOWN;   // asked below, only if there is a choice
            by_name.emplace(a.name, c);
            order.push_back(a.name);
        } else if (it->second.addr.family == AF_INET6 && a.family == AF_INET) {
            it->second.addr = a;   // IPv4 preferred: the peers' cards nearly always have it
        }
    }
    for (const auto &name : order)
        out->push_back(by_name.at(name));
    // Distances only order NICs against each other: with one NIC there is
    // nothing to order, and asking would load the whole hwloc topology
    // (tens of milliseconds of start-up per process).
    const auto nics = std::count_if(out->begin(), out->end(), [](const Chosen &c) { return !c.loopback; });
    if (nics > 1)
        for (Chosen &c : *out)
            if (!c.loopback) {
                int d = distance(c.addr.name.c_str());
                c.distance = d < 0 || d > WEFT_DISTANCE_UNKNOWN ? WEFT_DISTANCE_UNKNOWN : d;
            }
    // Nearest first; loopback last (it only serves this node). Stable: among
    // equals the kernel's order stays.
    std::stable_sort(out->begin(), out->end(), [](const Chosen &a, const Chosen &b) {
        if (a.loopback != b.loopback)
            return !a.loopback;
        return a.distance < b.distance;
    });
    return true;
}

} // namespace weft::btl_tcp
