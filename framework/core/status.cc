// SPDX-License-Identifier: BSD-3-Clause
#include "core/status.hpp"

extern "C" const char *weft_status_string(int status)
{
    switch (status) {
    case WEFT_SUCCESS: return "success";
    case WEFT_ERROR: return "error";
    case WEFT_ERR_BAD_PARAM: return "invalid argument";
    case WEFT_ERR_NOT_FOUND: return "not found";
    case WEFT_ERR_NOT_SUPPORTED: return "not supported";
    case WEFT_ERR_NOT_AVAILABLE: return "not available here";
    case WEFT_ERR_NO_MEMORY: return "out of memory";
    case WEFT_ERR_ABI: return "component ABI mismatch";
    case WEFT_ERR_IO: return "I/O error";
    case WEFT_ERR_BAD_VALUE: return "bad parameter value";
    case WEFT_ERR_UNREACHABLE: return "peer unreachable";
    case WEFT_ERR_EXISTS: return "already exists";
    case WEFT_ERR_TRUNCATED: return "truncated";
    case WEFT_ERR_AGAIN: return "try again";
    case WEFT_ERR_TIMEOUT: return "timed out";
    case WEFT_ERR_OVERFLOW: return "event queue overflow";
    case WEFT_ERR_NO_MATCH: return "no matching entry";
    case WEFT_ERR_CANCELED: return "canceled";
    default: return "unknown status";
    }
}
