// SPDX-License-Identifier: BSD-3-Clause
// Header-only C++ conveniences for component authors. Components do not link
// libweft; everything here calls through the weft_host_t table.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include <weft/host.h>

namespace weft::cutil {

// Bulk copies whose destination lies 1-31 bytes past the source modulo a
// 4 KiB page: x86's `rep movsb`, which glibc's memcpy uses from 4 KiB up
// (and the kernel for every process_vm_readv), sees the stores alias the
// loads still to come and crawls. On the 2-vCPU EPYC VM a 64 KiB copy took
// 21.6 us at those offsets against 1.3 us elsewhere (16 KiB 5.5 against
// 0.19). Whether a message hits it depends on the user's buffer and where
// the copy lands (a ring cell's payload, a collective's scratch), not on
// either address alone: any destination 1-31 bytes ahead counts.
inline constexpr size_t kPageAliasFrom = 2048;
inline bool page_alias_ahead(const void *dst, const void *src)
{
    const auto gap = (reinterpret_cast<uintptr_t>(dst) - reinterpret_cast<uintptr_t>(src)) & 4095u;
    return gap != 0 && gap < 32;
}

// The copy for those offsets: each 128-byte block is loaded whole before
// any of it is stored, so no load waits behind a store it only seems to
// alias. Half the speed of `rep movsb` at good offsets (256 KiB: 10 against
// 6 us), eight times it at these (against 86 us).
inline void copy_page_aliased(unsigned char *d, const unsigned char *s, size_t n)
{
    using Lane = unsigned char __attribute__((vector_size(16)));
    constexpr size_t kLanes = 8, kBlock = kLanes * sizeof(Lane);
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock) {
        Lane v[kLanes];
        for (size_t k = 0; k < kLanes; ++k)
            std::memcpy(&v[k], s + i + k * sizeof(Lane), sizeof(Lane));
        for (size_t k = 0; k < kLanes; ++k)
            std::memcpy(d + i + k * sizeof(Lane), &v[k], sizeof(Lane));
    }
    if (i < n)   // under a block: glibc's short copies do not use rep movsb
        std::memcpy(d + i, s + i, n - i);
}

// memcpy for the message paths: up to 48 bytes as two overlapping
// fixed-size copies (a few instructions, inlined), longer ones by memcpy,
// except at the page-aliased offsets above.
// A libc memcpy call for an 8-byte payload costs about 40 instructions, as
// much as the rest of a ring's publish. From 49 bytes the inlined copy (two
// pairs of 16-byte moves as GCC builds it for baseline x86-64) lost to
// glibc's, which picks its moves for the CPU: weft_bench's ping-pong of
// 52-64 bytes, which btl/scif's ring carries in two cells, took 0.84-0.93 of
// the time by memcpy (2-vCPU VM, 8 alternated jobs, paired; 48 and 68 bytes
// within 3%, message rates at 8-128 bytes within 3%).
inline void copy_bytes(void *dst, const void *src, size_t n)
{
    auto *d = static_cast<unsigned char *>(dst);
    const auto *s = static_cast<const unsigned char *>(src);
    if (n <= 16) {
        if (n >= 8) {
            std::memcpy(d, s, 8);
            std::memcpy(d + n - 8, s + n - 8, 8);
        } else if (n >= 4) {
            std::memcpy(d, s, 4);
            std::memcpy(d + n - 4, s + n - 4, 4);
        } else {
            for (size_t i = 0; i < n; ++i)
                d[i] = s[i];
        }
    } else if (n <= 32) {
        std::memcpy(d, s, 16);
        std::memcpy(d + n - 16, s + n - 16, 16);
    } else if (n <= 48) {
        std::memcpy(d, s, 32);
        std::memcpy(d + n - 32, s + n - 32, 32);
    } else if (n >= kPageAliasFrom && page_alias_ahead(d, s)) {
        copy_page_aliased(d, s, n);
    } else {
        std::memcpy(d, s, n);
    }
}

struct ParamSpec {
    const char *name;
    weft_param_type_t type;
    const char *default_value;
    int level;
    const char *help;
    const char *const *enumerators = nullptr;
    const char *const *synonyms = nullptr;
    const char *const *deprecated = nullptr;
};

// Registers each spec for owner; stops at and returns the first failure (the
// framework has already logged why).
template <size_t N>
int register_params(const weft_host_t *host, const weft_component_t *owner,
                    const ParamSpec (&specs)[N])
{
    for (const ParamSpec &s : specs) {
        weft_param_def_t d{};
        d.size = sizeof d;
        d.name = s.name;
        d.type = s.type;
        d.default_value = s.default_value;
        d.level = s.level;
        d.help = s.help;
        d.enumerators = s.enumerators;
        d.synonyms = s.synonyms;
        d.deprecated = s.deprecated;
        if (int rc = host->param_register(owner, &d); rc != WEFT_SUCCESS)
            return rc;
    }
    return WEFT_SUCCESS;
}

// Fills a query result: available with a priority, or not with a reason.
inline void set_reason(weft_query_result_t *r, const char *fmt, const char *arg = "")
{
    std::snprintf(r->reason, sizeof r->reason, fmt, arg);
}

// The status code of the exception being handled: the one mapping of
// exceptions to status codes (call it only inside a catch block). Out of
// line and cold, so a try block around a fast path costs nothing.
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
inline int current_exception_status() noexcept
{
    try {
        throw;
    } catch (const std::bad_alloc &) {
        return WEFT_ERR_NO_MEMORY;
    } catch (...) {
        return WEFT_ERROR;
    }
}

// Runs body, turning any escaping exception into a status code: a C entry
// point of a component must never let one through the ABI.
template <class Body>
int guarded(Body &&body) noexcept
{
    try {
        return body();
    } catch (...) {
        return current_exception_status();
    }
}

} // namespace weft::cutil
