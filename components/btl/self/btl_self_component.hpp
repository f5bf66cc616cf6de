// What the btl/self sources share about the component itself.
#pragma once

#include <weft/btl.h>

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_self_component;

namespace weft::btl_self {

// Frees the module init() created (the module op finalize). Refused with
// WEFT_ERR_BAD_PARAM for anything but that module.
int release_module(weft_btl_module_t *m);

} // namespace weft::btl_self
