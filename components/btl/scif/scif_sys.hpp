// Small owners of kernel resources used by the SCIF library: a descriptor
// and a shared mapping. Each closes or unmaps exactly once, so no error path
// leaks a socket or a ring.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <utility>

namespace weft::scif {

class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(UniqueFd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    UniqueFd &operator=(UniqueFd &&o) noexcept
    {
        if (this != &o) {
            reset();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;

    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }
    void reset(int fd = -1)
    {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = fd;
    }
    explicit operator bool() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

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
