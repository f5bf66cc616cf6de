// SPDX-License-Identifier: BSD-3-Clause
// Before anything is started: whether N ranks can exist at all under the
// limits that apply to this user and this machine. A job that cannot fit is
// refused with the limit named, instead of forking until the system says no.
#pragma once

#include "core/status.hpp"

namespace weftrun {

// The first limit that np ranks surely exceed, as a WEFT_ERR_NOT_AVAILABLE
// status whose message names it and how to change it: RLIMIT_NPROC
// (ulimit -u; not for root, which the kernel exempts), the pids cgroup,
// kernel.pid_max and kernel.threads-max, RLIMIT_NOFILE (ulimit -n: weftrun
// holds a PMIx connection per rank, and two pipes with tagged output), and
// the memory available (MemAvailable, or the memory cgroup's limit).
weft::Status check_room_for_ranks(int np, bool tag_output);

} // namespace weftrun
