// SPDX-License-Identifier: BSD-3-Clause
// The registration cache of btl/openib: one memory region per registered
// range, shared by every user whose buffer lies inside it (a window of 64
// sends from one buffer registers it once), released when its last user
// goes. With btl_openib_leave_pinned an unused region stays registered for
// the next user, up to btl_openib_reg_limit bytes, least recently used first
// out. Leaving memory pinned is only safe while the application does not
// free and remap those pages (there are no memory hooks), so it is off by
// default.
//
// A registration that fails says how much this process has registered, the
// locked-memory limit and how to raise it: the error users of RDMA meet
// most, and the one least often explained.
#pragma once

#include <infiniband/verbs.h>
#include <weft/btl.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <string>

namespace weft::openib {

class RegCache {
public:
    struct Region {
        ibv_mr *mr = nullptr;
        uintptr_t base = 0;
        size_t length = 0;
        int users = 0;
        std::list<Region *>::iterator idle;   // position in idle_ when users == 0
    };

    // counters: where the module's counters are (the pointer moves when
    // the runtime attaches its block): registrations and cache hits go there.
    RegCache(ibv_pd *pd, std::string device, size_t limit, bool leave_pinned,
             weft_btl_counters_t *const *counters);
    ~RegCache();
    RegCache(const RegCache &) = delete;
    RegCache &operator=(const RegCache &) = delete;

    // The region covering [addr, addr+len), registered if needed; nullptr
    // with *why (which says what to do) when the device refuses.
    Region *acquire(const void *addr, size_t len, std::string *why);
    void release(Region *r);

    size_t registered_bytes() const { return bytes_; }
    size_t regions() const { return by_base_.size(); }

private:
    Region *find(uintptr_t base, uintptr_t end);
    void drop(Region *r);
    bool evict_idle(size_t want);

    ibv_pd *pd_;
    weft_btl_counters_t *const *counters_;
    std::string device_;
    size_t limit_;
    bool leave_pinned_;
    size_t bytes_ = 0;
    std::map<uintptr_t, Region> by_base_;
    std::list<Region *> idle_;    // unused regions, least recently used first
};

// "ulimit -l" as text: "unlimited" or "65536 KiB".
std::string memlock_limit_text();

} // namespace weft::openib
