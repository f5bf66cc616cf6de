/* SPDX-License-Identifier: BSD-3-Clause */
/* Services the framework offers to components, as a size-first C table.
 * A component receives a const weft_host_t * in every entry point and must
 * check WEFT_HAS_MEMBER before using a member added after ABI 1.0 (every
 * member declared here is part of 1.0). */
#ifndef WEFT_HOST_H
#define WEFT_HOST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <weft/component.h>

struct sockaddr;

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_param_type {
    WEFT_PARAM_BOOL = 0,   /* true/false, yes/no, on/off, 1/0 */
    WEFT_PARAM_INT = 1,    /* signed 64-bit; may have named values (enumerators "name=value") */
    WEFT_PARAM_SIZE = 2,   /* unsigned bytes with k/M/G/T suffixes (powers of 1024) */
    WEFT_PARAM_DOUBLE = 3,
    WEFT_PARAM_STRING = 4,
    WEFT_PARAM_ENUM = 5,   /* one of the enumerators */
    WEFT_PARAM_LIST = 6    /* comma list in the common list grammar (names, ^, CIDR, dev:port) */
} weft_param_type_t;

/* Levels 1..9 = {user, tuner, developer} x {basic, detail, all}. */
enum {
    WEFT_LEVEL_USER_BASIC = 1, WEFT_LEVEL_USER_DETAIL = 2, WEFT_LEVEL_USER_ALL = 3,
    WEFT_LEVEL_TUNER_BASIC = 4, WEFT_LEVEL_TUNER_DETAIL = 5, WEFT_LEVEL_TUNER_ALL = 6,
    WEFT_LEVEL_DEV_BASIC = 7, WEFT_LEVEL_DEV_DETAIL = 8, WEFT_LEVEL_DEV_ALL = 9
};

/* Verbosity levels, shared by every framework's <fw>_base_verbose. */
enum {
    WEFT_LOG_NONE = 0, WEFT_LOG_ERROR = 10, WEFT_LOG_WARN = 20, WEFT_LOG_INFO = 40,
    WEFT_LOG_DEBUG = 60, WEFT_LOG_TRACE = 80, WEFT_LOG_MAX = 100
};

typedef struct weft_param_def {
    size_t size;                      /* = sizeof(weft_param_def_t) */
    const char *name;                 /* short name: "if_include" becomes btl_tcp_if_include */
    weft_param_type_t type;
    const char *default_value;        /* text, parsed like any other source; NULL = empty */
    int level;                        /* 1..9 */
    const char *help;                 /* one or two sentences: what it does, what it accepts */
    const char *const *enumerators;   /* NULL-terminated; ENUM: names; INT: "name=value" */
    const char *const *synonyms;      /* NULL-terminated full names that also set this one */
    const char *const *deprecated;    /* NULL-terminated full names, accepted with a warning */
} weft_param_def_t;

typedef struct weft_host {
    size_t size;                      /* = sizeof(weft_host_t) of the framework */

    /* Parameters. Names passed to the getters are full names
     * ("btl_tcp_if_include"). Strings returned stay valid until the
     * framework finalizes. */
    int (*param_register)(const weft_component_t *owner, const weft_param_def_t *def);
    int (*param_get_bool)(const char *name, int *value);
    int (*param_get_int)(const char *name, int64_t *value);
    int (*param_get_size)(const char *name, uint64_t *value);
    int (*param_get_double)(const char *name, double *value);
    int (*param_get_string)(const char *name, const char **value); /* also ENUM and LIST text */

    /* Logging through the owner's framework verbosity (<fw>_base_verbose). */
    int (*log_enabled)(const weft_component_t *owner, int level);
    void (*log)(const weft_component_t *owner, int level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;

    /* Help catalog: prints topic from help-<fw>-<component>.txt with
     * arguments given as NULL-terminated "key", "value" pairs. Repeated
     * identical messages are aggregated. */
    void (*show_help)(const weft_component_t *owner, const char *topic,
                      const char *const *key_value_pairs);

    /* Common list grammar, on the value of list parameter `param`; name or
     * addr (struct sockaddr_in / sockaddr_in6) may be NULL.
     * list_selects: selection sense. An empty list selects everything, a
     * plain list selects its members, a '^' list everything else.
     * list_contains: membership only: does an entry match the name or the
     * address (CIDR)? Used for lists that are exclusions by meaning, such as
     * btl_tcp_if_exclude.
     * Both return 1 or 0, or a negative status if param is not a list. */
    int (*list_selects)(const char *param, const char *name, const struct sockaddr *addr);
    int (*list_contains)(const char *param, const char *name, const struct sockaddr *addr);
    /* 1 if the parameter's value came from somewhere other than its default
     * (a file, the environment, the command line), 0 if not, or negative
     * if there is no such parameter. Used to check mutually exclusive
     * parameters such as if_include / if_exclude. */
    int (*param_is_set)(const char *name);

    /* Topology (hwloc, loaded once by the framework; an XML file may stand
     * in for the machine). How far a network or OpenFabrics device (by OS
     * name: "eth0", "mlx5_0") is from this process's binding:
     * WEFT_DISTANCE_* (nearest first), or a negative status when hwloc does
     * not know the device or the topology cannot load. Components use it
     * to prefer the devices nearest to the process. Added in ABI 1.0. */
    int (*device_distance)(const char *os_device_name);

    /* 1 when this process speaks for the job about settings that every
     * process shares (rank 0 of a job; weft_info), else 0. A warning about
     * such a setting (an interface list naming no interface here) then
     * appears once per job, not once per rank. Part of ABI 1.0, like
     * every member above: a framework of ABI 1.0 always has it. */
    int (*speaks_for_job)(void);
} weft_host_t;

/* Distance classes returned by device_distance, nearest first. */
enum {
    WEFT_DISTANCE_NUMA = 0,     /* binding and device within one NUMA node */
    WEFT_DISTANCE_PACKAGE = 1,  /* within one package (socket) */
    WEFT_DISTANCE_MACHINE = 2,  /* the binding reaches another package */
    WEFT_DISTANCE_UNKNOWN = 3   /* no locality (virtual device) or spans packages */
};

#ifdef __cplusplus
}
#endif
#endif
