// SPDX-License-Identifier: BSD-3-Clause
// The one list grammar used by every include/exclude list in weft:
// framework selection (btl=self,tcp / btl=^openib), interface lists
// (btl_tcp_if_include=eth0,10.0.0.0/8), device lists (mlx5_0:1).
//
//   list   := ['^'] item (',' item)*       '^' only as the very first character
//   item   := CIDR        10.1.0.0/16, fe80::/10
//           | address     192.168.1.5, ::1          (a /32 or /128 range)
//           | device:port mlx5_0:1
//           | name        eth0, docker*, br-*       ('*' and '?' are wildcards)
//
// Whitespace around items is ignored. An empty list selects everything.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

struct sockaddr;

namespace weft::params {

struct ListItem {
    enum class Kind { Name, Cidr, DevicePort };
    Kind kind = Kind::Name;
    std::string text;                 // as written (trimmed)
    std::string name;                 // Name: the pattern; DevicePort: the device
    int port = -1;                    // DevicePort only
    int family = 0;                   // Cidr: AF_INET or AF_INET6
    std::array<uint8_t, 16> addr{};   // Cidr: network address bytes
    int prefix = 0;                   // Cidr: prefix length
};

struct ListSpec {
    bool exclude = false;             // list began with '^'
    std::vector<ListItem> items;

    bool empty() const { return items.empty(); }
    // Membership, ignoring the include/exclude sense.
    bool contains_name(std::string_view name) const;
    bool contains_address(const struct sockaddr *addr) const;
    bool contains_device_port(std::string_view device, int port) const;
    // Selection: include list -> member; exclude list -> not a member; empty -> true.
    bool selects_name(std::string_view name) const;
    bool selects_address(const struct sockaddr *addr) const;
    bool selects_device_port(std::string_view device, int port) const;
    // Canonical text ("^a,b").
    std::string str() const;
};

// Parses text in the list grammar; the error message names the bad item and
// says what is accepted.
Result<ListSpec> parse_list(std::string_view text);

// Shell-style wildcard match ('*' any run, '?' one character).
bool glob_match(std::string_view pattern, std::string_view text);

} // namespace weft::params
