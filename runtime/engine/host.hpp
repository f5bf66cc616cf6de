// SPDX-License-Identifier: BSD-3-Clause
// What the messaging engine needs from the process runtime, and nothing
// more. The runtime (runtime/rte) implements it and builds the engine after
// itself, so the layers run one way: rte includes engine headers, no engine
// file includes an rte header (tests/unit/layers.sh checks it). The engine's
// unit tests give it a fake (tests/unit/engine_host_test.cc).
//
// An abstract class rather than a struct of std::functions: one object that
// outlives the engine, one override per service in a fake, and nothing here
// is on a per-message path. Every call is set-up (handlers, progress source)
// or slow path (connecting, failures, logging). Messages never pass through
// it: the runtime calls the handlers the engine registered as plain function
// pointers (as the btl's upcalls reach the runtime), and the engine sends
// through the btl's inline wrappers on the endpoint it took from here once.
#pragma once

#include <weft/btl.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/status.hpp"
#include "progress/progress.hpp"

namespace weft::log { class Logger; }

namespace weft::engine {

// An active-message handler: data is valid only during the call; ep is the
// endpoint it came on (ep->peer_rank is the sender).
using AmHandler = void (*)(void *ctx, weft_btl_endpoint_t *ep, const void *data, size_t len);
// Direct placement of a large message (btl.h, upcalls.place/placed): the
// handler of an active-message id may say where a message's bytes land
// before they are read, and is told when they have.
using PlaceHandler = int (*)(void *ctx, weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len,
                             weft_btl_placement_t *place);
using PlacedHandler = void (*)(void *ctx, weft_btl_endpoint_t *ep, uint64_t token, int status);
// Told when a peer's endpoints fail (death reported by PMIx, reset,
// unreachable on first use).
using PeerFailedHandler = void (*)(void *ctx, uint32_t rank, const std::string &why);

class Host {
public:
    virtual ~Host() = default;

    // The process's progress loop: the engine adds itself as a source, and
    // its blocking calls wait in it (wait_until is a template, inlined).
    virtual rt::ProgressEngine &progress() = 0;
    virtual log::Logger &logger() = 0;

    // Registers the handler of an active-message id (fn null: removes it).
    virtual Status set_handler(uint8_t am_id, AmHandler fn, void *ctx) = 0;
    // Optional placement for an id that has a handler (null fns remove it).
    virtual void set_place_handler(uint8_t am_id, PlaceHandler place, PlacedHandler placed, void *ctx) = 0;
    // One handler, told once per peer that fails after having been usable.
    virtual void set_peer_failed_handler(PeerFailedHandler fn, void *ctx) = 0;

    // Starts connecting to rank (non-blocking) if not already; an error
    // (UNREACHABLE, with the transports tried) when nothing reaches it.
    virtual Status start_connect(uint32_t rank) = 0;
    // rank's endpoints once it is connected, primary first, else empty.
    // Valid until the next progress pass.
    virtual std::span<weft_btl_endpoint_t *const> connected_endpoints(uint32_t rank) = 0;
};

} // namespace weft::engine
