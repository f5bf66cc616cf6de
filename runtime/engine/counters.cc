// SPDX-License-Identifier: BSD-3-Clause
#include "engine/counters.hpp"

#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace weft::engine {

namespace {

constexpr uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

} // namespace

CounterPage::CounterPage(uint32_t rank, uint32_t job_size, size_t modules, std::string_view job_id)
{
    weft_counters_header_t h{};
    h.magic = WEFT_COUNTERS_MAGIC;
    h.version = WEFT_COUNTERS_VERSION;
    h.header_size = sizeof h;
    h.rank = rank;
    h.job_size = job_size;
    h.pid = getpid();
    h.start_realtime_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                    std::chrono::system_clock::now().time_since_epoch())
                                                    .count());
    h.state = WEFT_COUNTERS_RUNNING;
    std::memcpy(h.job_id, job_id.data(), std::min(job_id.size(), sizeof h.job_id - 1));
    h.process_offset = round_up(sizeof h, 64);
    h.process_size = sizeof(weft_process_counters_t);
    // Each peer on its own cache lines: the engine writes one peer's while
    // a reader walks them all.
    h.peer_offset = round_up(h.process_offset + h.process_size, 64);
    h.peer_stride = round_up(sizeof(weft_peer_counters_t), 64);
    h.peer_count = job_size;
    h.module_offset = h.peer_offset + h.peer_stride * job_size;
    h.module_stride = round_up(sizeof(weft_module_counters_t), 64);
    h.module_count = modules;
    const long page = sysconf(_SC_PAGESIZE);
    size_ = round_up(h.module_offset + h.module_stride * modules, page > 0 ? static_cast<uint64_t>(page) : 4096);
    h.page_size = size_;

    // A memfd, sealed at its size so that a reader may trust it; private
    // memory when that fails (old kernel, seccomp), so counting goes on.
    UniqueFd fd(memfd_create(WEFT_COUNTERS_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd)
        why_private_ = std::string("memfd_create: ") + std::strerror(errno);
    else if (ftruncate(fd.get(), static_cast<off_t>(size_)) != 0)
        why_private_ = std::string("ftruncate of the counter memfd: ") + std::strerror(errno);
    else if (void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0); p != MAP_FAILED) {
        base_ = p;
        (void)fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
        fd_ = std::move(fd);
    } else
        why_private_ = std::string("mmap of the counter memfd: ") + std::strerror(errno);
    if (!base_) {
        void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED)
            base_ = p;
        else {
            heap_ = std::make_unique<std::byte[]>(size_);
            base_ = heap_.get();
        }
    }
    std::memcpy(base_, &h, sizeof h);
    for (uint32_t r = 0; r < job_size; ++r)
        peer(r).primary_module = -1;
    for (size_t i = 0; i < modules; ++i)
        module(i).btl.size = sizeof(weft_btl_counters_t);
}

CounterPage::~CounterPage()
{
    if (base_ && !heap_)
        munmap(base_, size_);
}

} // namespace weft::engine
