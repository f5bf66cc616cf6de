/* SPDX-License-Identifier: BSD-3-Clause */
/* The component ABI: what every loadable weft component exports.
 *
 * A component DSO named weft_<framework>_<component>.so exports one symbol,
 * weft_<framework>_<component>_component, a framework-specific struct whose
 * first member is a weft_component_t. The loader checks magic, ABI major,
 * struct size, framework and component name (against the file name) before
 * calling anything, and records why when a check fails.
 *
 * Components never link against libweft: everything they need from the
 * framework (parameters, logging, help messages, topology) comes through the
 * weft_host_t table passed to each entry point, so a component built by
 * another compiler or written in plain C still loads.
 *
 * Growth rules: new members go at the end of a struct; readers check
 * struct_size / size before touching a member (WEFT_HAS_MEMBER). A change that
 * cannot follow these rules bumps WEFT_COMPONENT_ABI_MAJOR. */
#ifndef WEFT_COMPONENT_H
#define WEFT_COMPONENT_H

#include <stddef.h>
#include <stdint.h>

#include <weft/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_COMPONENT_MAGIC UINT64_C(0x57454654434f4d50) /* "WEFTCOMP" */
#define WEFT_COMPONENT_ABI_MAJOR 1
#define WEFT_COMPONENT_ABI_MINOR 0
#define WEFT_NAME_MAX 32
#define WEFT_REASON_MAX 256

/* True when a struct that starts with its own size is long enough to have
 * the member (the libfabric FI_CHECK_OP rule). */
#define WEFT_HAS_MEMBER(ptr, type, member) \
    ((ptr) != NULL && (ptr)->size >= offsetof(type, member) + sizeof(((type *)0)->member))

#if defined(__GNUC__)
#define WEFT_EXPORT __attribute__((visibility("default")))
#else
#define WEFT_EXPORT
#endif

struct weft_host;

typedef struct weft_version {
    uint16_t major;
    uint16_t minor;
    uint16_t patch;
} weft_version_t;

/* What query() answers: can the component run here, and how eager is it. */
typedef struct weft_query_result {
    size_t size;                  /* = sizeof(weft_query_result_t), set by the caller */
    int available;                /* nonzero: usable on this host */
    int priority;                 /* higher is preferred; 0..100 by convention */
    char reason[WEFT_REASON_MAX]; /* why not available, or which devices it found */
} weft_query_result_t;

/* The header every component struct begins with. */
typedef struct weft_component {
    uint64_t magic;               /* WEFT_COMPONENT_MAGIC */
    uint16_t abi_major;           /* WEFT_COMPONENT_ABI_MAJOR at build time */
    uint16_t abi_minor;           /* WEFT_COMPONENT_ABI_MINOR at build time */
    uint32_t struct_size;         /* sizeof the whole framework-specific struct */
    char framework[WEFT_NAME_MAX];/* "btl" */
    char name[WEFT_NAME_MAX];     /* "tcp" */
    weft_version_t version;       /* the component's own version */

    /* open: register parameters only. No devices, no threads, no output:
     * weft_info calls it for components that cannot run here. */
    int (*open)(const struct weft_host *host);
    /* query: can it run on this host, with which priority; reason when not. */
    int (*query)(const struct weft_host *host, weft_query_result_t *result);
    /* finalize: release everything init() created. Safe after a failed init. */
    int (*finalize)(const struct weft_host *host);
} weft_component_t;

/* Initializer for the header, for use in a designated initializer:
 *   .base = WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "tcp", 1, 0, 0), */
#define WEFT_COMPONENT_HEADER(struct_type, fw, comp, vmaj, vmin, vpatch)                    \
    .magic = WEFT_COMPONENT_MAGIC, .abi_major = WEFT_COMPONENT_ABI_MAJOR,                   \
    .abi_minor = WEFT_COMPONENT_ABI_MINOR, .struct_size = sizeof(struct_type),             \
    .framework = fw, .name = comp, .version = {vmaj, vmin, vpatch}

#ifdef __cplusplus
}
#endif
#endif
