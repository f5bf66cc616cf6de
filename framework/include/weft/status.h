/* SPDX-License-Identifier: BSD-3-Clause */
/* weft status codes: every C entry point returns one of these.
 * Zero is success; errors are negative so "rc < 0" is the failure test. */
#ifndef WEFT_STATUS_H
#define WEFT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_status {
    WEFT_SUCCESS = 0,
    WEFT_ERROR = -1,               /* generic failure; the message says more */
    WEFT_ERR_BAD_PARAM = -2,       /* a caller passed something invalid */
    WEFT_ERR_NOT_FOUND = -3,       /* a name, file or object does not exist */
    WEFT_ERR_NOT_SUPPORTED = -4,   /* this component or build cannot do that */
    WEFT_ERR_NOT_AVAILABLE = -5,   /* cannot run here (no device, no library) */
    WEFT_ERR_NO_MEMORY = -6,
    WEFT_ERR_ABI = -7,             /* component ABI mismatch */
    WEFT_ERR_IO = -8,              /* a file or system call failed */
    WEFT_ERR_BAD_VALUE = -9,       /* a parameter value cannot be parsed */
    WEFT_ERR_UNREACHABLE = -10,    /* no transport reaches the peer */
    WEFT_ERR_EXISTS = -11,         /* already registered or present */
    WEFT_ERR_TRUNCATED = -12,      /* output buffer too small */
    WEFT_ERR_AGAIN = -13,          /* not yet; retry */
    WEFT_ERR_TIMEOUT = -14,        /* a bounded wait ran out */
    WEFT_ERR_OVERFLOW = -15,       /* an event queue was full: events were dropped */
    WEFT_ERR_NO_MATCH = -16,       /* no match entry accepted the message; it was dropped */
    WEFT_ERR_CANCELED = -17        /* a receive was canceled before a message matched it */
} weft_status_t;

/* A short, static, human-readable name of a status code. */
const char *weft_status_string(int status);

#ifdef __cplusplus
}
#endif
#endif
