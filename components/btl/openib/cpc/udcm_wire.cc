// SPDX-License-Identifier: BSD-3-Clause
#include "udcm_wire.hpp"

#include <cstring>

namespace weft::openib::udcm {

namespace {

// Cursors over a buffer whose size was checked before they are made, so
// neither checks per field.
class Writer {
public:
    explicit Writer(uint8_t *p) : p_(p) {}
    template <class T> void put(const T &v)
    {
        std::memcpy(p_, &v, sizeof v);
        p_ += sizeof v;
    }
    void put_bytes(const uint8_t *src, size_t n)
    {
        std::memcpy(p_, src, n);
        p_ += n;
    }

private:
    uint8_t *p_;
};

class Reader {
public:
    explicit Reader(std::span<const uint8_t> b) : p_(b.data()) {}
    template <class T> T get()
    {
        T v{};
        std::memcpy(&v, p_, sizeof v);
        p_ += sizeof v;
        return v;
    }
    void get_bytes(uint8_t *dst, size_t n)
    {
        std::memcpy(dst, p_, n);
        p_ += n;
    }

private:
    const uint8_t *p_;
};

bool valid_type(uint8_t t) { return t >= 1 && t <= kMaxMsgType; }

bool known_reason(uint16_t r)
{
    switch (static_cast<RejectReason>(r)) {
    case RejectReason::no_resources:
    case RejectReason::timeout:
    case RejectReason::invalid_comm_id:
    case RejectReason::stale_connection:
    case RejectReason::consumer:
    case RejectReason::wrong_job:
    case RejectReason::simultaneous_connect:
        return true;
    }
    return false;
}

bool valid_qpn(uint32_t qpn) { return qpn >= kMinQpn && qpn <= kMaxQpn; }

std::string field_error(const char *field, uint64_t value, const char *expected)
{
    return std::string(field) + " " + std::to_string(value) + " out of range (" + expected + ")";
}

bool fail(std::string *why, std::string text)
{
    if (why)
        *why = std::move(text);
    return false;
}

} // namespace

const char *to_string(MsgType t)
{
    switch (t) {
    case MsgType::req: return "REQ";
    case MsgType::rep: return "REP";
    case MsgType::rtu: return "RTU";
    case MsgType::rej: return "REJ";
    case MsgType::mra: return "MRA";
    case MsgType::dreq: return "DREQ";
    case MsgType::drep: return "DREP";
    }
    return "unknown";
}

const char *to_string(RejectReason r)
{
    switch (r) {
    case RejectReason::no_resources: return "no resources (the acceptor could not prepare its queue pair)";
    case RejectReason::timeout: return "timeout";
    case RejectReason::invalid_comm_id: return "invalid connection id";
    case RejectReason::stale_connection: return "stale connection (an older connection is still in place)";
    case RejectReason::consumer: return "refused by the peer's openib";
    case RejectReason::wrong_job: return "the peer belongs to another job";
    case RejectReason::simultaneous_connect: return "simultaneous connect: the peer's request wins";
    }
    return "unknown reason";
}

uint64_t job_hash(std::string_view job_id)
{
    uint64_t h = 0xcbf29ce484222325ull;   // FNV-1a 64 offset basis
    for (unsigned char c : job_id) {
        h ^= c;
        h *= 0x100000001b3ull;            // FNV-1a 64 prime
    }
    return h;
}

size_t wire_size(MsgType t)
{
    switch (t) {
    case MsgType::req:
    case MsgType::rep: return kHeaderBytes + kAddressBodyBytes;
    case MsgType::rej: return kHeaderBytes + kRejectBodyBytes;
    case MsgType::mra: return kHeaderBytes + kMraBodyBytes;
    case MsgType::rtu:
    case MsgType::dreq:
    case MsgType::drep: return kHeaderBytes;
    }
    return 0;
}

size_t encode(const Message &m, std::span<uint8_t, kMaxMessageBytes> out)
{
    Writer w(out.data());
    w.put(kWireMagic);
    w.put(kWireVersion);
    w.put(static_cast<uint8_t>(m.type));
    w.put(uint16_t{0});
    w.put(m.job_hash);
    w.put(m.src_rank);
    w.put(m.dst_rank);
    w.put(m.src_id);
    w.put(m.dst_id);
    w.put(m.attempt);
    switch (m.type) {
    case MsgType::req:
    case MsgType::rep:
        w.put(m.rc.qpn);
        w.put(m.rc.psn);
        w.put(m.rc.lid);
        w.put(m.rc.mtu);
        w.put(uint8_t{0});
        w.put(m.rc.recv_credits);
        w.put_bytes(m.rc.gid, sizeof m.rc.gid);
        w.put(m.ud.qpn);
        w.put(m.ud.lid);
        w.put(uint16_t{0});
        w.put_bytes(m.ud.gid, sizeof m.ud.gid);
        break;
    case MsgType::rej:
        w.put(static_cast<uint16_t>(m.reason));
        w.put(static_cast<uint8_t>(m.rejected));
        w.put(uint8_t{0});
        break;
    case MsgType::mra:
        w.put(static_cast<uint8_t>(m.acknowledged));
        w.put(uint8_t{0});
        w.put(uint16_t{0});
        w.put(m.service_timeout_ms);
        break;
    case MsgType::rtu:
    case MsgType::dreq:
    case MsgType::drep:
        break;
    }
    return wire_size(m.type);
}

std::vector<uint8_t> encode(const Message &m)
{
    uint8_t buf[kMaxMessageBytes];
    const size_t n = encode(m, std::span<uint8_t, kMaxMessageBytes>(buf));
    return {buf, buf + n};
}

bool decode(std::span<const uint8_t> bytes, Message *out, std::string *why)
{
    if (bytes.size() < kHeaderBytes)
        return fail(why, "udcm message of " + std::to_string(bytes.size()) +
                             " bytes is shorter than its " + std::to_string(kHeaderBytes) +
                             "-byte header");
    Reader r(bytes);
    if (r.get<uint32_t>() != kWireMagic)
        return fail(why, "not a udcm message (bad magic)");
    if (const auto v = r.get<uint8_t>(); v != kWireVersion)
        return fail(why, "udcm message of wire version " + std::to_string(v) + ", this process speaks " +
                             std::to_string(kWireVersion) + " (mixed weft versions in one job?)");
    const auto type = r.get<uint8_t>();
    if (!valid_type(type))
        return fail(why, "unknown udcm message type " + std::to_string(type));
    Message m;
    m.type = static_cast<MsgType>(type);
    if (bytes.size() != wire_size(m.type))
        return fail(why, std::string("udcm ") + to_string(m.type) + " of " + std::to_string(bytes.size()) +
                             " bytes, expected " + std::to_string(wire_size(m.type)));
    if (r.get<uint16_t>() != 0)
        return fail(why, "udcm header's reserved bytes are not zero");
    m.job_hash = r.get<uint64_t>();
    m.src_rank = r.get<uint32_t>();
    m.dst_rank = r.get<uint32_t>();
    m.src_id = r.get<uint32_t>();
    m.dst_id = r.get<uint32_t>();
    m.attempt = r.get<uint32_t>();
    if (m.src_rank == m.dst_rank)
        return fail(why, "udcm message from rank " + std::to_string(m.src_rank) + " to itself");
    // Which ids may be 0 follows from who has a connection record (see the header).
    const bool src_may_be_zero = m.type == MsgType::rej || m.type == MsgType::drep;
    if (m.src_id == 0 && !src_may_be_zero)
        return fail(why, std::string("udcm ") + to_string(m.type) + " without a sender connection id");
    if (m.type == MsgType::req ? m.dst_id != 0 : m.dst_id == 0)
        return fail(why, std::string("udcm ") + to_string(m.type) +
                             (m.type == MsgType::req ? " names a receiver connection id (a REQ cannot know one)"
                                                     : " without a receiver connection id"));
    switch (m.type) {
    case MsgType::req:
    case MsgType::rep: {
        m.rc.qpn = r.get<uint32_t>();
        m.rc.psn = r.get<uint32_t>();
        m.rc.lid = r.get<uint16_t>();
        m.rc.mtu = r.get<uint8_t>();
        const auto pad1 = r.get<uint8_t>();
        m.rc.recv_credits = r.get<uint32_t>();
        r.get_bytes(m.rc.gid, sizeof m.rc.gid);
        m.ud.qpn = r.get<uint32_t>();
        m.ud.lid = r.get<uint16_t>();
        const auto pad2 = r.get<uint16_t>();
        r.get_bytes(m.ud.gid, sizeof m.ud.gid);
        if (pad1 != 0 || pad2 != 0)
            return fail(why, std::string("udcm ") + to_string(m.type) + " padding is not zero");
        if (!valid_qpn(m.rc.qpn))
            return fail(why, field_error("RC qpn", m.rc.qpn, "2..0xffffff"));
        if (m.rc.psn > kMaxPsn)
            return fail(why, field_error("RC psn", m.rc.psn, "24 bits"));
        if (m.rc.lid >= kFirstMulticastLid)
            return fail(why, field_error("RC lid", m.rc.lid, "a unicast LID below 0xc000, or 0 on RoCE"));
        if (m.rc.mtu < kMinMtu || m.rc.mtu > kMaxMtu)
            return fail(why, field_error("RC mtu", m.rc.mtu, "1..5, IBV_MTU_256..IBV_MTU_4096"));
        if (m.rc.recv_credits > kMaxRecvCredits)
            return fail(why, field_error("receive credits", m.rc.recv_credits, "at most 2^20"));
        if (!valid_qpn(m.ud.qpn))
            return fail(why, field_error("UD qpn", m.ud.qpn, "2..0xffffff"));
        if (m.ud.lid >= kFirstMulticastLid)
            return fail(why, field_error("UD lid", m.ud.lid, "a unicast LID below 0xc000, or 0 on RoCE"));
        break;
    }
    case MsgType::rej: {
        const auto reason = r.get<uint16_t>();
        const auto rejected = r.get<uint8_t>();
        if (r.get<uint8_t>() != 0)
            return fail(why, "udcm REJ padding is not zero");
        if (!known_reason(reason))
            return fail(why, "udcm REJ with unknown reason " + std::to_string(reason));
        if (!valid_type(rejected))
            return fail(why, "udcm REJ of unknown message type " + std::to_string(rejected));
        m.reason = static_cast<RejectReason>(reason);
        m.rejected = static_cast<MsgType>(rejected);
        break;
    }
    case MsgType::mra: {
        const auto acknowledged = r.get<uint8_t>();
        const auto pad1 = r.get<uint8_t>();
        const auto pad2 = r.get<uint16_t>();
        m.service_timeout_ms = r.get<uint32_t>();
        if (pad1 != 0 || pad2 != 0)
            return fail(why, "udcm MRA padding is not zero");
        // Only a REQ or a REP makes the receiver wait for a slow answer.
        if (acknowledged != static_cast<uint8_t>(MsgType::req) &&
            acknowledged != static_cast<uint8_t>(MsgType::rep))
            return fail(why, "udcm MRA acknowledging message type " + std::to_string(acknowledged) +
                                 " (only REQ or REP)");
        if (m.service_timeout_ms == 0 || m.service_timeout_ms > kMaxServiceTimeoutMs)
            return fail(why, field_error("MRA service timeout (ms)", m.service_timeout_ms, "1..600000"));
        m.acknowledged = static_cast<MsgType>(acknowledged);
        break;
    }
    case MsgType::rtu:
    case MsgType::dreq:
    case MsgType::drep:
        break;
    }
    *out = m;
    return true;
}

std::vector<uint8_t> encode_card(const UdAddress &ud)
{
    std::vector<uint8_t> out(kCardBytes);
    Writer w(out.data());
    w.put(kCardVersion);
    w.put(uint8_t{0});
    w.put(ud.lid);
    w.put(ud.qpn);
    w.put_bytes(ud.gid, sizeof ud.gid);
    return out;
}

bool decode_card(std::span<const uint8_t> bytes, UdAddress *out, std::string *why)
{
    if (bytes.size() != kCardBytes)
        return fail(why, "udcm card section of " + std::to_string(bytes.size()) + " bytes, expected " +
                             std::to_string(kCardBytes));
    Reader r(bytes);
    if (const auto v = r.get<uint8_t>(); v != kCardVersion)
        return fail(why, "udcm card of version " + std::to_string(v) + ", this process reads " +
                             std::to_string(kCardVersion) + " (mixed weft versions in one job?)");
    if (r.get<uint8_t>() != 0)
        return fail(why, "udcm card padding is not zero");
    UdAddress ud;
    ud.lid = r.get<uint16_t>();
    ud.qpn = r.get<uint32_t>();
    r.get_bytes(ud.gid, sizeof ud.gid);
    if (!valid_qpn(ud.qpn))
        return fail(why, field_error("udcm card UD qpn", ud.qpn, "2..0xffffff"));
    if (ud.lid >= kFirstMulticastLid)
        return fail(why, field_error("udcm card lid", ud.lid, "a unicast LID below 0xc000, or 0 on RoCE"));
    *out = ud;
    return true;
}

} // namespace weft::openib::udcm
