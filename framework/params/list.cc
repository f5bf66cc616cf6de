// SPDX-License-Identifier: BSD-3-Clause
// The common list grammar (see list.hpp).
#include "params/list.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cctype>
#include <cstring>
#include "core/strings.hpp"

namespace weft::params {
namespace {

using str::trim;

const char *kGrammar =
    "accepted: comma-separated names (eth0, docker*), CIDR ranges (10.0.0.0/8, fe80::/10), "
    "addresses, or device:port (mlx5_0:1), optionally all excluded by a single leading '^'";

bool valid_name(std::string_view s)
{
    for (char c : s) {
        unsigned char u = static_cast<unsigned char>(c);
        if (!std::isalnum(u) && c != '_' && c != '-' && c != '.' && c != '*' && c != '?')
            return false;
    }
    return !s.empty();
}

bool all_digits(std::string_view s)
{
    if (s.empty())
        return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c)))
            return false;
    return true;
}

// Parses an address (no prefix) into item; true on success.
bool parse_address(std::string_view text, ListItem &item)
{
    std::string s(text);
    if (inet_pton(AF_INET, s.c_str(), item.addr.data()) == 1) {
        item.family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, s.c_str(), item.addr.data()) == 1) {
        item.family = AF_INET6;
        return true;
    }
    return false;
}

Result<ListItem> parse_item(std::string_view text, std::string_view whole)
{
    ListItem item;
    item.text = std::string(text);
    auto bad = [&](const std::string &why) {
        return Status(WEFT_ERR_BAD_VALUE,
                      "bad list entry '" + item.text + "' in \"" + std::string(whole) + "\": " + why +
                          " (" + kGrammar + ")");
    };
    if (text.empty())
        return bad("empty entry");
    if (text.find('^') != std::string_view::npos)
        return bad("'^' is allowed only as the first character of the whole list, where it "
                   "excludes every entry; a list cannot mix included and excluded entries");

    if (auto slash = text.find('/'); slash != std::string_view::npos) {
        std::string_view addr = text.substr(0, slash), bits = text.substr(slash + 1);
        if (!parse_address(addr, item))
            return bad("'" + std::string(addr) + "' is not an IPv4 or IPv6 address");
        if (!all_digits(bits) || bits.size() > 3)
            return bad("prefix length '" + std::string(bits) + "' is not a number");
        item.prefix = std::stoi(std::string(bits));
        int max = item.family == AF_INET ? 32 : 128;
        if (item.prefix > max)
            return bad("prefix length " + std::to_string(item.prefix) + " exceeds " +
                       std::to_string(max));
        item.kind = ListItem::Kind::Cidr;
        return item;
    }
    if (parse_address(text, item)) {
        item.kind = ListItem::Kind::Cidr;
        item.prefix = item.family == AF_INET ? 32 : 128;
        return item;
    }
    if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
        std::string_view dev = text.substr(0, colon), port = text.substr(colon + 1);
        if (!valid_name(dev) || dev.find(':') != std::string_view::npos || !all_digits(port) ||
            port.size() > 5)
            return bad("expected device:port such as mlx5_0:1");
        item.kind = ListItem::Kind::DevicePort;
        item.name = std::string(dev);
        item.port = std::stoi(std::string(port));
        return item;
    }
    if (!valid_name(text))
        return bad("names may contain letters, digits, '_', '-', '.', and the wildcards '*' '?'");
    item.kind = ListItem::Kind::Name;
    item.name = std::string(text);
    return item;
}

bool prefix_matches(const ListItem &item, const uint8_t *addr)
{
    int full = item.prefix / 8, rest = item.prefix % 8;
    if (std::memcmp(item.addr.data(), addr, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
    return (item.addr[full] & mask) == (addr[full] & mask);
}

} // namespace

bool glob_match(std::string_view pattern, std::string_view text)
{
    // Iterative matcher with single backtrack point for '*'.
    size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

Result<ListSpec> parse_list(std::string_view text)
{
    ListSpec spec;
    std::string_view body = trim(text);
    if (!body.empty() && body.front() == '^') {
        spec.exclude = true;
        body = trim(body.substr(1));
        if (body.empty())
            return Status(WEFT_ERR_BAD_VALUE, "bad list \"" + std::string(text) +
                                                  "\": '^' must be followed by what to exclude");
    }
    if (body.empty())
        return spec;
    size_t start = 0;
    while (start <= body.size()) {
        size_t comma = body.find(',', start);
        std::string_view piece = trim(body.substr(start, comma == std::string_view::npos
                                                             ? std::string_view::npos
                                                             : comma - start));
        auto item = parse_item(piece, text);
        if (!item.ok())
            return item.status();
        spec.items.push_back(std::move(item.value()));
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    return spec;
}

bool ListSpec::contains_name(std::string_view name) const
{
    for (const auto &it : items)
        if (it.kind == ListItem::Kind::Name && glob_match(it.name, name))
            return true;
    return false;
}

bool ListSpec::contains_address(const struct sockaddr *sa) const
{
    if (!sa)
        return false;
    const uint8_t *bytes = nullptr;
    int family = sa->sa_family;
    if (family == AF_INET)
        bytes = reinterpret_cast<const uint8_t *>(
            &reinterpret_cast<const sockaddr_in *>(sa)->sin_addr);
    else if (family == AF_INET6)
        bytes = reinterpret_cast<const uint8_t *>(
            &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr);
    else
        return false;
    for (const auto &it : items)
        if (it.kind == ListItem::Kind::Cidr && it.family == family && prefix_matches(it, bytes))
            return true;
    return false;
}

bool ListSpec::contains_device_port(std::string_view device, int port) const
{
    for (const auto &it : items) {
        if (it.kind == ListItem::Kind::Name && glob_match(it.name, device))
            return true;   // a bare device name means all of its ports
        if (it.kind == ListItem::Kind::DevicePort && it.port == port && glob_match(it.name, device))
            return true;
    }
    return false;
}

bool ListSpec::selects_name(std::string_view name) const
{
    return empty() || (contains_name(name) != exclude);
}

bool ListSpec::selects_address(const struct sockaddr *addr) const
{
    return empty() || (contains_address(addr) != exclude);
}

bool ListSpec::selects_device_port(std::string_view device, int port) const
{
    return empty() || (contains_device_port(device, port) != exclude);
}

std::string ListSpec::str() const
{
    std::string out = exclude ? "^" : "";
    for (size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += ',';
        out += items[i].text;
    }
    return out;
}

} // namespace weft::params
