// SPDX-License-Identifier: BSD-3-Clause
// btl/tcp interface choice: which network interfaces become modules. The
// choice is a pure function of an interface list and the parameters, so the
// tests feed it made-up lists (docker0, veth*, link-local, ...) and an XML
// topology instead of this machine's interfaces.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <weft/host.h>

namespace weft::btl_tcp {

// One address of one interface, as getifaddrs reports it.
struct IfAddr {
    std::string name;
    int family = AF_UNSPEC;          // AF_INET or AF_INET6
    sockaddr_storage addr{};
    unsigned prefix = 0;             // netmask length
    unsigned flags = 0;              // IFF_*
};

// An interface chosen to carry a module: its one listening address.
struct Chosen {
    IfAddr addr;
    bool loopback = false;
    int distance = 3;                // WEFT_DISTANCE_* from the process binding
};

// This machine's interfaces (getifaddrs); empty with *error set on failure.
std::vector<IfAddr> list_interfaces(std::string *error);

// The interfaces that get a module, nearest to the binding first, loopback
// last. host gives the list parameters; distance(name) is usually
// host->device_distance. Returns false with *error when the parameters are
// contradictory (if_include and if_exclude both set). *skipped collects
// "name (why)" for each interface left out, for messages.
bool choose_interfaces(const weft_host_t *host, const std::vector<IfAddr> &all,
                       const std::function<int(const char *)> &distance,
                       std::vector<Chosen> *out, std::vector<std::string> *skipped,
                       std::string *error);

// Names of this machine's interfaces, with or without an address
// (if_nameindex); empty if the kernel will not say.
std::vector<std::string> interface_names();

// The name entries of an interface list (the text of btl_tcp_if_include,
// in the framework's list grammar) that match none of `names`: a typo or an
// interface this host lacks. Addresses, CIDR ranges and device:port entries
// are not names and are never reported.
std::vector<std::string> names_matching_nothing(std::string_view list,
                                                const std::vector<std::string> &names);

bool is_link_local(const sockaddr *sa);
// "10.0.0.1/24" or "[fe80::1]/64".
std::string describe(const sockaddr *sa, unsigned prefix);
// Address bytes of sa (4 or 16), or 0 bytes if not inet.
size_t address_bytes(const sockaddr *sa, uint8_t out[16]);
// Do a and b (family, 4 or 16 bytes each) agree in their first prefix bits?
bool same_subnet(const uint8_t *a, const uint8_t *b, size_t len, unsigned prefix);

} // namespace weft::btl_tcp
