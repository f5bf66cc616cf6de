// SPDX-License-Identifier: BSD-3-Clause
#include "engine/wire.hpp"

#include <cstring>

namespace weft::engine::wire {

const char *type_name(Type t)
{
    switch (t) {
    case Type::Eager: return "eager";
    case Type::Put: return "put";
    case Type::Rts: return "rts";
    case Type::Ack: return "ack";
    case Type::GetReq: return "get";
    case Type::Reply: return "reply";
    case Type::Fin: return "fin";
    case Type::Cts: return "cts";
    case Type::Data: return "data";
    case Type::Credit: return "credit";
    case Type::PutReq: return "putreq";
    case Type::PutDone: return "putdone";
    case Type::Tagged: return "tagged";
    }
    return "?";
}

namespace {

size_t header_size(uint8_t type)
{
    switch (static_cast<Type>(type)) {
    case Type::Eager: return sizeof(Eager);
    case Type::Put: return sizeof(Put);
    case Type::Rts: return sizeof(Rts);
    case Type::Ack:
    case Type::Fin: return sizeof(Ack);
    case Type::GetReq: return sizeof(GetReq);
    case Type::Reply: return sizeof(Reply);
    case Type::Cts: return sizeof(Cts);
    case Type::Data: return sizeof(Data);
    case Type::Credit: return sizeof(Credit);
    case Type::PutReq: return sizeof(PutReq);
    case Type::PutDone: return sizeof(PutDone);
    case Type::Tagged: return sizeof(Tagged);
    }
    return 0;
}

// The payload length a header announces, for the types that carry one
// (Tagged's is the rest of the frame).
bool announced_payload(const Frame &f, uint64_t *len)
{
    switch (f.type) {
    case Type::Tagged: *len = f.payload.size(); return true;
    case Type::Eager: *len = read<Eager>(f).length; return true;
    case Type::Put: *len = read<Put>(f).length; return true;
    case Type::Rts: {
        const auto r = read<Rts>(f);
        *len = uint64_t{r.rkey_len} + r.first;
        return true;
    }
    case Type::Reply: *len = read<Reply>(f).length; return true;
    case Type::Data: *len = read<Data>(f).length; return true;
    case Type::PutReq: *len = read<PutReq>(f).rkey_len; return true;
    default: *len = 0; return true;
    }
}

} // namespace

bool parse(std::span<const std::byte> bytes, Frame *frame, std::string *why)
{
    if (bytes.empty()) {
        *why = "empty frame";
        return false;
    }
    const uint8_t type = static_cast<uint8_t>(bytes[0]);
    const size_t hs = header_size(type);
    if (hs == 0) {
        *why = "unknown frame type " + std::to_string(type);
        return false;
    }
    if (bytes.size() < hs) {
        *why = std::string(type_name(static_cast<Type>(type))) + " frame of " +
               std::to_string(bytes.size()) + " bytes, shorter than its " + std::to_string(hs) +
               "-byte header";
        return false;
    }
    frame->type = static_cast<Type>(type);
    frame->header = bytes.first(hs);
    frame->payload = bytes.subspan(hs);
    uint64_t want = 0;
    announced_payload(*frame, &want);
    if (want != frame->payload.size()) {
        *why = std::string(type_name(frame->type)) + " frame announces " + std::to_string(want) +
               " payload bytes but carries " + std::to_string(frame->payload.size());
        return false;
    }
    if (frame->type == Type::Eager || frame->type == Type::Put || frame->type == Type::Rts ||
        frame->type == Type::GetReq) {
        const uint8_t portal = static_cast<uint8_t>(bytes[1]);
        if (portal >= 64) {
            *why = "portal " + std::to_string(portal) + " out of range";
            return false;
        }
    }
    const size_t rkey_len = frame->type == Type::Rts      ? read<Rts>(*frame).rkey_len
                            : frame->type == Type::PutReq ? read<PutReq>(*frame).rkey_len
                                                          : 0;
    if (rkey_len > 64) {
        *why = std::string(type_name(frame->type)) + " rkey of " + std::to_string(rkey_len) + " bytes (at most 64)";
        return false;
    }
    if (frame->type == Type::Rts) {
        const auto r = read<Rts>(*frame);
        if (r.first > r.length) {
            *why = "rts carries " + std::to_string(r.first) + " bytes of a put of " + std::to_string(r.length);
            return false;
        }
    }
    return true;
}

} // namespace weft::engine::wire
