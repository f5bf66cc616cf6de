// SPDX-License-Identifier: BSD-3-Clause
// btl/openib registration cache (see btl_openib_rcache.hpp).
#include "btl_openib_rcache.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weft::openib {

namespace {

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

uintptr_t page_size()
{
    static const uintptr_t p = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    return p;
}

} // namespace

std::string memlock_limit_text()
{
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
        return "unknown";
    if (rl.rlim_cur == RLIM_INFINITY)
        return "unlimited";
    return std::to_string(rl.rlim_cur / 1024) + " KiB";
}

RegCache::RegCache(ibv_pd *pd, std::string device, size_t limit, bool leave_pinned,
                   weft_btl_counters_t *const *counters)
    : pd_(pd), counters_(counters), device_(std::move(device)), limit_(limit), leave_pinned_(leave_pinned)
{
}

RegCache::~RegCache()
{
    for (auto &[base, r] : by_base_)
        if (r.mr)
            ibv_dereg_mr(r.mr);
}

RegCache::Region *RegCache::find(uintptr_t base, uintptr_t end)
{
    // The region starting at or before base with the highest start; regions
    // may overlap (each was registered for its own range), so look back a few.
    auto it = by_base_.upper_bound(base);
    for (int look = 0; look < 4 && it != by_base_.begin(); ++look) {
        --it;
        Region &r = it->second;
        if (r.base <= base && r.base + r.length >= end)
            return &r;
    }
    return nullptr;
}

RegCache::Region *RegCache::acquire(const void *addr, size_t len, std::string *why)
{
    const uintptr_t pg = page_size();
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    const uintptr_t base = a & ~(pg - 1);
    const uintptr_t end = (a + (len ? len : 1) + pg - 1) & ~(pg - 1);
    if (Region *r = find(base, end)) {
        if (r->users++ == 0)
            idle_.erase(r->idle);
        ++(*counters_)->reg_cache_hits;
        return r;
    }
    const size_t length = end - base;
    if (bytes_ + length > limit_)
        evict_idle(bytes_ + length - limit_);
    ibv_mr *mr = ibv_reg_mr(pd_, reinterpret_cast<void *>(base), length, kAccess);
    if (!mr && (errno == ENOMEM || errno == EAGAIN) && evict_idle(length))
        mr = ibv_reg_mr(pd_, reinterpret_cast<void *>(base), length, kAccess);
    if (!mr) {
        const int err = errno;
        *why = "btl/openib: cannot register " + std::to_string(length) + " bytes on " + device_ +
               " (ibv_reg_mr: " + std::strerror(err) + "). This process has " + std::to_string(bytes_) +
               " bytes registered; its locked-memory limit (ulimit -l) is " + memlock_limit_text() +
               ". Raise it: 'ulimit -l unlimited' in the shell that starts weftrun, or a memlock line in "
               "/etc/security/limits.conf (LimitMEMLOCK= for systemd services)";
        // EFAULT is not about the limit: the pages cannot be pinned at all.
        if (err == EFAULT)
            *why += ". Here, though, the range is not mapped with read and write access (freed memory, or a "
                    "PROT_NONE or read-only mapping?): no limit makes it registrable";
        return nullptr;
    }
    auto [it, inserted] = by_base_.try_emplace(base);
    if (!inserted) {
        // A smaller region starts at the same page: the new one covers it,
        // but it may still have users, so the new one gets its own key slot
        // only when the old one is idle.
        if (it->second.users == 0) {
            drop(&it->second);
            it = by_base_.try_emplace(base).first;
        } else {
            ibv_dereg_mr(mr);
            *why = "btl/openib: internal: overlapping registrations at one page";
            return nullptr;
        }
    }
    Region &r = it->second;
    r.mr = mr;
    r.base = base;
    r.length = length;
    r.users = 1;
    bytes_ += length;
    ++(*counters_)->registrations;
    return &r;
}

void RegCache::release(Region *r)
{
    if (!r || r->users <= 0)
        return;
    if (--r->users > 0)
        return;
    if (!leave_pinned_) {
        drop(r);
        return;
    }
    r->idle = idle_.insert(idle_.end(), r);
    if (bytes_ > limit_)
        evict_idle(bytes_ - limit_);
}

void RegCache::drop(Region *r)
{
    if (r->users == 0 && leave_pinned_) {
        for (auto it = idle_.begin(); it != idle_.end(); ++it)
            if (*it == r) {
                idle_.erase(it);
                break;
            }
    }
    if (r->mr)
        ibv_dereg_mr(r->mr);
    bytes_ -= r->length;
    by_base_.erase(r->base);
}

bool RegCache::evict_idle(size_t want)
{
    size_t freed = 0;
    while (freed < want && !idle_.empty()) {
        Region *r = idle_.front();
        idle_.pop_front();
        freed += r->length;
        if (r->mr)
            ibv_dereg_mr(r->mr);
        bytes_ -= r->length;
        by_base_.erase(r->base);
    }
    return freed > 0;
}

} // namespace weft::openib
