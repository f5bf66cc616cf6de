// SPDX-License-Identifier: BSD-3-Clause
// The error path every weft.h call shares (messaging_api.cc defines it; the
// runtime's process_api.cc uses it too).
#pragma once

#include "core/status.hpp"

namespace weft {

// Keeps the message for weft_error_message() (per thread) and returns the
// status code.
int api_fail(const Status &st);

} // namespace weft
