// SPDX-License-Identifier: BSD-3-Clause
// Makes the kernel refuse process_vm_readv/writev to this process and its
// future children, for real: a seccomp filter (no new privileges, then
// SECCOMP_SET_MODE_FILTER) that answers EPERM to both system calls on this
// architecture, as docker's default profile does. Call it only in a forked
// child: the filter cannot be removed.
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace weft::test {

// true once process_vm_readv fails with EPERM here (checked by a call).
inline bool forbid_process_vm()
{
#if defined(__x86_64__)
    constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
    return false;
#endif
    sock_filter filter[] = {
        // Another architecture's numbers mean other calls: leave them alone.
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
        return false;
    uint64_t word = 1, got = 0;
    iovec l{&got, sizeof got}, r{&word, sizeof word};
    return ::process_vm_readv(::getpid(), &l, 1, &r, 1, 0) < 0 && errno == EPERM;
}

// Runs body() (returning an exit code) in a forked child under
// forbid_process_vm(). The child's code, 77 when no filter can be installed
// here, 128+signal if it died, -1 if it outlived the bound (then killed;
// the bound is a hang guard, not a threshold).
template <class Body>
int run_without_process_vm(Body body, int limit_s = 120)
{
    const pid_t pid = ::fork();
    if (pid == 0)
        ::_exit(forbid_process_vm() ? body() : 77);
    for (int i = 0; i < limit_s * 100; ++i) {
        int st = 0;
        if (::waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        pollfd none{};
        ::poll(&none, 0, 10);   // a pause between checks of a child we own
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return -1;
}

} // namespace weft::test
