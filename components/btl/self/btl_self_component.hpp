// SPDX-License-Identifier: BSD-3-Clause
// What the btl/self sources share about the component itself.
#pragma once

#include <weft/btl.h>

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_self_component;
