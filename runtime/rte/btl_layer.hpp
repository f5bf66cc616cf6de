// SPDX-License-Identifier: BSD-3-Clause
// The runtime's side of the btl framework: which components take part (the
// framework's selection), the modules their init() created, and each
// module's business card in the modex. The runtime reaches transports only
// through this and the C interface in weft/btl.h.
#pragma once

#include <string>
#include <vector>

#include <weft/btl.h>

#include "core/framework.hpp"
#include "core/status.hpp"
#include "log/log.hpp"
#include "rte/pmix_client.hpp"

namespace weft::rt {

struct OpenModule {
    weft_btl_module_t *module;
    const weft_btl_component_t *component;
    int index;              // among its component's modules
    std::string card_key;   // modex key: weft.btl.<component>.<index>
};

// A component the selection took or left out, and why (weft_info --explain
// and unreachable errors list them all).
struct ComponentVerdict {
    std::string name;
    bool used = false;      // created at least one module
    std::string reason;
};

class BtlLayer {
public:
    BtlLayer() = default;
    ~BtlLayer();
    BtlLayer(const BtlLayer &) = delete;
    BtlLayer &operator=(const BtlLayer &) = delete;

    // Selects the btl components (btl=, btl_base_require), calls init() on
    // each and gives every module the upcalls. An error for a required
    // component that cannot run or created no module.
    // process: who this process is (kept by the caller for the modules'
    // lifetime).
    Status open(Framework &fw, const weft_btl_upcalls_t &upcalls, const weft_btl_process_t *process);
    // Publishes every module's card under its key.
    Status publish_cards(PmixClient &pmix) const;
    // The card rank published for module m (the peer_card upcall): copies
    // it into buf (*len: room on entry, size on return). A weft status.
    int peer_card(PmixClient &pmix, const weft_btl_module_t *m, uint32_t rank, void *buf, size_t *len) const;
    // After the modex fence: each module's modex_ready op, where it has
    // one. A module's failure is logged (as a warning naming the module)
    // and does not fail the init: the module fails or falls back per peer.
    void modex_ready(log::Logger &logger) const;
    // finalize() of every module (components are finalized by the framework).
    void close();

    const std::vector<OpenModule> &modules() const { return modules_; }
    const std::vector<ComponentVerdict> &components() const { return components_; }
    const std::vector<std::string> &required() const { return required_; }

private:
    std::vector<OpenModule> modules_;
    std::vector<ComponentVerdict> components_;
    std::vector<std::string> required_;
};

} // namespace weft::rt
