// SPDX-License-Identifier: BSD-3-Clause
// The end-of-job report (rte_base_report, weftrun --report): at
// weft_finalize every rank sends a copy of its counter page to rank 0,
// which prints what went where: transports and bytes per peer class, the
// slowest pair by measured bandwidth, the deepest unexpected queue, every
// fallback and retry with its reason.
#pragma once

#include <span>
#include <string>

#include "core/status.hpp"
#include "engine/counter_view.hpp"

namespace weft::engine { class Engine; class CounterPage; }

namespace weft::rt {

// The gather and, on rank 0, the report as setting says ("text": on
// stderr; "json:FILE": into FILE). Collective: every rank calls it.
Status gather_report(engine::Engine &engine, const engine::CounterPage &page, const std::string &setting);

// The report of a job from its ranks' pages (rank order; each valid()).
// seconds: how long the job ran. A pure function, for the golden test.
std::string render_report(std::span<const engine::CounterView> pages, double seconds, bool json);

} // namespace weft::rt
