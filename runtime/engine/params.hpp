// SPDX-License-Identifier: BSD-3-Clause
// The engine's parameters (group "engine", params.cc) and the settings the
// engine is built with, read from them once by the runtime.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/framework.hpp"
#include "params/registry.hpp"

namespace weft::engine {

struct Config {
    uint32_t my_rank = 0, job_size = 1;
    size_t eager_limit_cap = 0;            // engine_base_eager_limit (0: the module's own)
    size_t eager_window = 4u << 20;        // engine_base_eager_window
    size_t chunk = 512u << 10;             // engine_base_rndv_chunk
    size_t rndv_first = 0;                 // engine_base_rndv_first (0: the Rts carries no data)
    bool rndv_rdma = true;                 // engine_base_rndv_rdma
    size_t rndv_split = 64u << 10;         // engine_base_rndv_split (0: never)
    std::chrono::milliseconds finalize_timeout{10000};   // engine_base_finalize_timeout
    // Not parameters: the counter page's size and name (the runtime's).
    size_t counter_modules = 0;            // btl modules, each with a block
    std::string job_id;
};

// For Framework::init (the runtime's param_groups and param_definitions
// include them; weft_info lists them).
FrameworkInfo param_group();
std::vector<params::Definition> param_definitions();
// The settings from the registered parameters, for this rank of a job.
Config read_config(const params::Registry &params, uint32_t rank, uint32_t job_size);

} // namespace weft::engine
