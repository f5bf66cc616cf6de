// SPDX-License-Identifier: BSD-3-Clause
// Card encoding of btl/openib: little-endian, length-prefixed, checked
// field by field on the way in (a card comes from another process).
#include "btl_openib_wire.hpp"

#include <cstring>

namespace weft::openib {

namespace {

void put_bytes(std::vector<uint8_t> &out, const void *p, size_t n)
{
    const auto *b = static_cast<const uint8_t *>(p);
    out.insert(out.end(), b, b + n);
}

template <class T>
void put_le(std::vector<uint8_t> &out, T v)
{
    for (size_t i = 0; i < sizeof(T); ++i)
        out.push_back(static_cast<uint8_t>(uint64_t(v) >> (8 * i)));
}

class Reader {
public:
    explicit Reader(std::span<const uint8_t> b) : b_(b) {}
    template <class T>
    bool le(T *v)
    {
        if (b_.size() - at_ < sizeof(T))
            return false;
        uint64_t x = 0;
        for (size_t i = 0; i < sizeof(T); ++i)
            x |= uint64_t(b_[at_ + i]) << (8 * i);
        at_ += sizeof(T);
        *v = static_cast<T>(x);
        return true;
    }
    bool bytes(void *dst, size_t n)
    {
        if (b_.size() - at_ < n)
            return false;
        if (n)                         // an empty section has no buffer (dst may be null)
            std::memcpy(dst, b_.data() + at_, n);
        at_ += n;
        return true;
    }
    bool done() const { return at_ == b_.size(); }
    size_t left() const { return b_.size() - at_; }

private:
    std::span<const uint8_t> b_;
    size_t at_ = 0;
};

} // namespace

std::vector<uint8_t> encode_card(const Card &card)
{
    std::vector<uint8_t> out;
    put_le<uint32_t>(out, kCardMagic);
    put_bytes(out, card.gid, sizeof card.gid);
    put_le<uint16_t>(out, card.lid);
    put_le<uint8_t>(out, card.roce ? 1 : 0);
    put_le<uint64_t>(out, card.subnet_prefix);
    put_le<uint8_t>(out, static_cast<uint8_t>(card.sections.size()));
    for (const CardSection &s : card.sections) {
        put_le<uint8_t>(out, static_cast<uint8_t>(s.cpc.size()));
        put_bytes(out, s.cpc.data(), s.cpc.size());
        put_le<uint16_t>(out, static_cast<uint16_t>(s.data.size()));
        put_bytes(out, s.data.data(), s.data.size());
    }
    return out;
}

bool decode_card(std::span<const uint8_t> bytes, Card *card, std::string *why)
{
    Reader r(bytes);
    uint32_t magic = 0;
    uint8_t roce = 0, nsec = 0;
    if (!r.le(&magic) || magic != kCardMagic) {
        *why = "not a btl/openib card of this version (bad magic; is every process running the same weft?)";
        return false;
    }
    if (!r.bytes(card->gid, sizeof card->gid) || !r.le(&card->lid) || !r.le(&roce) ||
        !r.le(&card->subnet_prefix) || !r.le(&nsec)) {
        *why = "card truncated in its port address";
        return false;
    }
    if (roce > 1 || nsec > kMaxSections) {
        *why = "card has an invalid link layer or " + std::to_string(nsec) + " cpc sections (at most " +
               std::to_string(kMaxSections) + ")";
        return false;
    }
    card->roce = roce == 1;
    card->sections.clear();
    for (unsigned i = 0; i < nsec; ++i) {
        uint8_t name_len = 0;
        uint16_t data_len = 0;
        CardSection s;
        if (!r.le(&name_len) || name_len == 0 || name_len > 16 || r.left() < name_len) {
            *why = "card section " + std::to_string(i) + " has a bad cpc name";
            return false;
        }
        s.cpc.resize(name_len);
        r.bytes(s.cpc.data(), name_len);
        if (!r.le(&data_len) || data_len > kMaxSectionBytes || r.left() < data_len) {
            *why = "card section '" + s.cpc + "' is truncated or longer than " + std::to_string(kMaxSectionBytes);
            return false;
        }
        s.data.resize(data_len);
        r.bytes(s.data.data(), data_len);
        card->sections.push_back(std::move(s));
    }
    if (!r.done()) {
        *why = "card has " + std::to_string(r.left()) + " trailing bytes";
        return false;
    }
    return true;
}

} // namespace weft::openib
