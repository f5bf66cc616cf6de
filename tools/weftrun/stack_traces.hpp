// SPDX-License-Identifier: BSD-3-Clause
// What a job that ran past --timeout was doing: each live rank's PMIx state
// as weftrun saw it and, with --get-stack-traces, the stack of every thread
// of it, taken by gdb in batch mode before the ranks are killed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "weftrun/judge.hpp"

namespace weftrun {

using SayFn = std::function<void(const std::string &)>;

// One line per rank still running: "rank 1 (pid 4242): called PMIx_Finalize"
// (stuck after it: in its exit) or "in the job, not finalized" or "never
// connected to PMIx". fences: how many fences the whole job completed.
void describe_live_ranks(const std::vector<RankState> &ranks, unsigned fences, const SayFn &say);

// gdb -batch on each live rank, its output on weftrun's stderr, at most
// per_rank_s seconds each (gdb that hangs is killed). Says what to install
// when gdb is missing and what to allow when ptrace is refused.
void print_stack_traces(const std::vector<RankState> &ranks, int per_rank_s, const SayFn &say);

} // namespace weftrun
