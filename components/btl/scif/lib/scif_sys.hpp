// SPDX-License-Identifier: BSD-3-Clause
// Small owners of kernel resources used by the SCIF library: a shared
// mapping (and, from the framework, a descriptor). Each closes or unmaps
// exactly once, so no error path leaks a socket or a ring.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <utility>

#include <weft/unique_fd.hpp>

namespace weft::scif {

// The descriptor owner is weft::UniqueFd (<weft/unique_fd.hpp>), shared with
// the components.

class Mapping {
public:
    Mapping() = default;
    Mapping(void *addr, size_t len) : addr_(addr), len_(len) {}
    ~Mapping() { reset(); }
    Mapping(Mapping &&o) noexcept
        : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0))
    {
    }
    Mapping &operator=(Mapping &&o) noexcept
    {
        if (this != &o) {
            reset();
            addr_ = std::exchange(o.addr_, nullptr);
            len_ = std::exchange(o.len_, 0);
        }
        return *this;
    }
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;

    // Maps len bytes of fd shared, read-write; an empty Mapping on failure
    // (errno says why).
    static Mapping shared(int fd, size_t len)
    {
        void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        return p == MAP_FAILED ? Mapping() : Mapping(p, len);
    }
    std::byte *data() const { return static_cast<std::byte *>(addr_); }
    size_t size() const { return len_; }
    explicit operator bool() const { return addr_ != nullptr; }
    void reset()
    {
        if (addr_)
            ::munmap(addr_, len_);
        addr_ = nullptr;
        len_ = 0;
    }

private:
    void *addr_ = nullptr;
    size_t len_ = 0;
};

} // namespace weft::scif
