// SPDX-License-Identifier: BSD-3-Clause
#include "btl_tcp_wire.hpp"

#include <cstring>

namespace weft::btl_tcp {

namespace {

constexpr uint32_t kCardMagic = 0x43504354;    // "TCPC"
constexpr uint32_t kHelloMagic = 0x48504354;   // "TCPH"
constexpr size_t kCardHeaderBytes = 4 + 2 + 2 + kSecretBytes;
constexpr size_t kCardEntryBytes = 1 + 1 + 1 + 1 + 2 + 2 + 16;

// A cursor over bytes that cannot run past the end.
class Writer {
public:
    explicit Writer(std::byte *p) : p_(p) {}
    template <class T> void put(const T &v) { std::memcpy(p_, &v, sizeof v); p_ += sizeof v; }
    void put_bytes(const void *src, size_t n) { std::memcpy(p_, src, n); p_ += n; }

private:
    std::byte *p_;
};

class Reader {
public:
    explicit Reader(std::span<const std::byte> b) : b_(b) {}
    template <class T> T get()
    {
        T v{};
        std::memcpy(&v, b_.data() + at_, sizeof v);
        at_ += sizeof v;
        return v;
    }
    void get_bytes(void *dst, size_t n) { std::memcpy(dst, b_.data() + at_, n); at_ += n; }

private:
    std::span<const std::byte> b_;
    size_t at_ = 0;
};

} // namespace

std::vector<std::byte> encode_card(const Card &card)
{
    std::vector<std::byte> out(kCardHeaderBytes + card.entries.size() * kCardEntryBytes);
    Writer w(out.data());
    w.put(kCardMagic);
    w.put(kProtocolVersion);
    w.put(static_cast<uint16_t>(card.entries.size()));
    w.put_bytes(card.secret, kSecretBytes);
    for (const CardEntry &e : card.entries) {
        w.put(e.family);
        w.put(e.prefix);
        w.put(static_cast<uint8_t>(e.loopback ? 1 : 0));
        w.put(uint8_t{0});
        w.put(e.port);
        w.put(uint16_t{0});
        w.put_bytes(e.addr, 16);
    }
    return out;
}

std::string decode_card(std::span<const std::byte> bytes, Card *out)
{
    if (bytes.size() < kCardHeaderBytes)
        return "card too short (" + std::to_string(bytes.size()) + " bytes)";
    Reader r(bytes);
    if (r.get<uint32_t>() != kCardMagic)
        return "not a btl/tcp card (bad magic)";
    if (uint16_t v = r.get<uint16_t>(); v != kProtocolVersion)
        return "card of protocol version " + std::to_string(v) + ", this process speaks " +
               std::to_string(kProtocolVersion) + " (mixed weft versions in one job?)";
    const uint16_t count = r.get<uint16_t>();
    if (count > kMaxCardEntries || bytes.size() != kCardHeaderBytes + count * kCardEntryBytes)
        return "card length " + std::to_string(bytes.size()) + " does not match its " +
               std::to_string(count) + " entries";
    Card card;
    r.get_bytes(card.secret, kSecretBytes);
    for (uint16_t i = 0; i < count; ++i) {
        CardEntry e;
        e.family = r.get<uint8_t>();
        e.prefix = r.get<uint8_t>();
        uint8_t lo = r.get<uint8_t>();
        r.get<uint8_t>();
        e.port = r.get<uint16_t>();
        r.get<uint16_t>();
        r.get_bytes(e.addr, 16);
        if ((e.family != 4 && e.family != 6) || e.prefix > (e.family == 4 ? 32 : 128) || lo > 1 ||
            e.port == 0)
            return "card entry " + std::to_string(i) + " is malformed";
        e.loopback = lo == 1;
        card.entries.push_back(e);
    }
    *out = std::move(card);
    return "";
}

void encode_hello(const Hello &h, std::byte out[kHelloBytes])
{
    Writer w(out);
    w.put(kHelloMagic);
    w.put(kProtocolVersion);
    w.put(static_cast<uint16_t>(h.kind));
    w.put(h.rank);
    w.put(h.link);
    w.put(h.links);
    w.put_bytes(h.secret, kSecretBytes);
    w.put_bytes(h.job_id, kJobIdBytes);
}

std::string decode_hello(std::span<const std::byte> bytes, Hello *out)
{
    if (bytes.size() != kHelloBytes)
        return "handshake of " + std::to_string(bytes.size()) + " bytes, expected " +
               std::to_string(kHelloBytes);
    Reader r(bytes);
    if (r.get<uint32_t>() != kHelloMagic)
        return "bad handshake magic (not a weft btl/tcp peer)";
    if (uint16_t v = r.get<uint16_t>(); v != kProtocolVersion)
        return "protocol version " + std::to_string(v) + ", expected " + std::to_string(kProtocolVersion);
    Hello h;
    const auto kind = r.get<uint16_t>();
    if (kind < 1 || kind > 4)
        return "unknown handshake kind " + std::to_string(kind);
    h.kind = static_cast<HelloKind>(kind);
    h.rank = r.get<uint32_t>();
    h.link = r.get<uint32_t>();
    h.links = r.get<uint32_t>();
    r.get_bytes(h.secret, kSecretBytes);
    r.get_bytes(h.job_id, kJobIdBytes);
    if (h.links < 1 || h.links > 64 || h.link >= h.links)
        return "link " + std::to_string(h.link) + " of " + std::to_string(h.links) + " is out of range";
    if (std::memchr(h.job_id, '\0', kJobIdBytes) == nullptr)
        return "job id is not terminated";
    *out = h;
    return "";
}

std::string decode_frame(std::span<const std::byte> bytes, size_t max_payload, FrameHeader *out)
{
    if (frame_valid(bytes, max_payload, out))
        return "";
    // Invalid: find out why (the checks below are frame_valid's, one by one).
    if (bytes.size() < kFrameHeaderBytes)
        return "truncated frame header";
    Reader r(bytes);
    FrameHeader h;
    h.len = r.get<uint32_t>();
    h.am_id = r.get<uint8_t>();
    h.kind = r.get<uint8_t>();
    const auto check = r.get<uint8_t>();
    const auto zero = r.get<uint8_t>();
    h.total = r.get<uint32_t>();
    if (check != kFrameCheck || zero != 0)
        return "frame check bytes wrong (stream out of sync)";
    switch (h.kind) {
    case kFrameMessage:
        if (h.total != h.len)
            return "message frame with inconsistent lengths";
        break;
    case kFrameClose:
        if (h.len != 0 || h.total != 0)
            return "close frame with a payload";
        break;
    default:
        return "unknown frame kind " + std::to_string(h.kind);
    }
    if (h.total > max_payload)
        return "frame of " + std::to_string(h.total) + " bytes exceeds the limit of " +
               std::to_string(max_payload);
    return "invalid frame header";   // unreachable while the two agree (fuzzed)
}

} // namespace weft::btl_tcp
