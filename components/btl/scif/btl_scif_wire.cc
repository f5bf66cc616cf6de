// SPDX-License-Identifier: BSD-3-Clause
#include "btl_scif_wire.hpp"

#include <cstring>

namespace weft::btl_scif {

bool parse_card(const void *bytes, size_t len, Card *out)
{
    if (!bytes || len != sizeof(Card))
        return false;
    std::memcpy(out, bytes, sizeof *out);
    return out->magic == kCardMagic && out->version == kCardVersion && out->port != 0 && out->pid != 0;
}

bool parse_hello(const void *bytes, size_t len, HelloHead *head, const char **job, size_t *job_len)
{
    if (!bytes || len < sizeof(HelloHead) || len > sizeof(HelloHead) + kMaxJobId)
        return false;
    std::memcpy(head, bytes, sizeof *head);
    *job = static_cast<const char *>(bytes) + sizeof(HelloHead);
    *job_len = len - sizeof(HelloHead);
    return true;
}

bool parse_rkey(const void *bytes, size_t len, Rkey *out)
{
    if (!bytes || len != sizeof(Rkey))
        return false;
    std::memcpy(out, bytes, sizeof *out);
    return out->magic == kRkeyMagic && out->base + out->length >= out->base;
}

} // namespace weft::btl_scif
