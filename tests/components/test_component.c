/* SPDX-License-Identifier: BSD-3-Clause */
/* Test components for the repository tests: one source, built once per
 * variant (tests/components/local.mk) into a real DSO weft_btl_<name>.so.
 * Each variant breaks exactly one thing the loader must catch, or behaves in
 * one way open_all()/query_all() must record.
 *
 * Written in C on purpose: the component ABI promises that a component in
 * plain C, built without libweft, loads.
 *
 *   -DTEST_NAME=<name>   the component name (file and symbol)
 *   -DTEST_<VARIANT>     what to break; none = a good component */
#include <stdio.h>

#include <weft/btl.h>

#ifndef TEST_NAME
#error "build with -DTEST_NAME=<component name>"
#endif

#define TC_CAT3_(a, b, c) a##b##c
#define TC_CAT3(a, b, c) TC_CAT3_(a, b, c)
#define TC_STR_(x) #x
#define TC_STR(x) TC_STR_(x)

#define TC_SYMBOL TC_CAT3(weft_btl_, TEST_NAME, _component)
#define TC_NAME TC_STR(TEST_NAME)

#ifdef TEST_WRONGNAME
#define TC_STRUCT_NAME "other"   /* the file says wrongname */
#else
#define TC_STRUCT_NAME TC_NAME
#endif

#ifdef TEST_WRONGFW
#define TC_STRUCT_FW "pml"       /* the file says btl */
#else
#define TC_STRUCT_FW "btl"
#endif

#ifdef TEST_BADMAGIC
#define TC_MAGIC UINT64_C(0x0123456789abcdef)
#else
#define TC_MAGIC WEFT_COMPONENT_MAGIC
#endif

#ifdef TEST_BADABI
#define TC_ABI_MAJOR 99
#else
#define TC_ABI_MAJOR WEFT_COMPONENT_ABI_MAJOR
#endif

#ifdef TEST_NEWMINOR
#define TC_ABI_MINOR (WEFT_COMPONENT_ABI_MINOR + 3)
#else
#define TC_ABI_MINOR WEFT_COMPONENT_ABI_MINOR
#endif

#ifdef TEST_BADSIZE
#define TC_STRUCT_SIZE sizeof(weft_component_t)   /* the btl part is missing */
#else
#define TC_STRUCT_SIZE sizeof(weft_btl_component_t)
#endif

/* A symbol nobody defines, referenced as data: the GOT entry for it is a
 * GLOB_DAT relocation, which the dynamic linker resolves when the file is
 * loaded even with lazy binding, so dlopen itself fails. */
#ifdef TEST_UNDEFDATA
extern int weft_test_data_nobody_defines;
#endif
/* A function nobody defines: a lazily bound PLT entry, which would only fail
 * (killing the process) when called. The loader binds components eagerly so
 * that this also fails at load time. */
#ifdef TEST_UNDEFFUNC
extern int weft_test_function_nobody_defines(void);
#endif
/* Defined in libweft_test_absent.so, which is not on any search path when
 * the test runs: dlopen fails with "cannot open shared object file". */
#ifdef TEST_NEEDLIB
extern int weft_test_absent_helper(void);
#endif

#ifndef TEST_OPENFAIL
static const char *const no_names[] = {NULL};
#endif

static int tc_open(const weft_host_t *host);
static int tc_query(const weft_host_t *host, weft_query_result_t *result);
static int tc_finalize(const weft_host_t *host) { (void)host; return WEFT_SUCCESS; }

static int tc_init(const weft_host_t *host, struct weft_btl_module **modules, int max_modules,
                   int *num_modules)
{
    (void)host; (void)modules; (void)max_modules;
    *num_modules = 0;
    return WEFT_SUCCESS;
}

static int tc_start_connect(struct weft_btl_module *module, const struct weft_btl_peer *peer,
                            struct weft_btl_endpoint **endpoint)
{
    (void)module; (void)peer; (void)endpoint;
    return WEFT_ERR_NOT_SUPPORTED;
}

/* nosym: the classic mistake of a component built with -fvisibility=hidden
 * that forgot WEFT_EXPORT: the struct exists but is not exported. */
#ifdef TEST_NOSYM
#define TC_VISIBILITY
#else
#define TC_VISIBILITY WEFT_EXPORT
#endif

TC_VISIBILITY const weft_btl_component_t TC_SYMBOL = {
    .base = {
        .magic = TC_MAGIC,
        .abi_major = TC_ABI_MAJOR,
        .abi_minor = TC_ABI_MINOR,
        .struct_size = TC_STRUCT_SIZE,
        .framework = TC_STRUCT_FW,
        .name = TC_STRUCT_NAME,
        .version = {1, 2, 3},
        .open = tc_open,
        .query = tc_query,
        .finalize = tc_finalize,
    },
    .init = tc_init,
    .start_connect = tc_start_connect,
};

static int tc_open(const weft_host_t *host)
{
#if defined(TEST_UNDEFDATA)
    if (weft_test_data_nobody_defines)
        return WEFT_ERROR;
#elif defined(TEST_UNDEFFUNC)
    if (weft_test_function_nobody_defines())
        return WEFT_ERROR;
#elif defined(TEST_NEEDLIB)
    if (weft_test_absent_helper())
        return WEFT_ERROR;
#endif
#ifdef TEST_OPENFAIL
    (void)host;
    return WEFT_ERR_NOT_AVAILABLE;
#else
    weft_param_def_t prio = {0};
    prio.size = sizeof prio;
    prio.name = "priority";
    prio.type = WEFT_PARAM_INT;
    prio.default_value = "50";
    prio.level = WEFT_LEVEL_TUNER_DETAIL;
    prio.help = "Selection priority of this test component.";
    prio.synonyms = no_names;
    prio.deprecated = no_names;
    return host->param_register(&TC_SYMBOL.base, &prio);
#endif
}

static int tc_query(const weft_host_t *host, weft_query_result_t *result)
{
#ifdef TEST_UNAVAIL
    (void)host;
    result->available = 0;
    result->priority = 0;
    snprintf(result->reason, sizeof result->reason, "no test device on this host");
#else
    int64_t priority = 50;
    if (host->param_get_int("btl_" TC_NAME "_priority", &priority) != WEFT_SUCCESS)
        priority = 50;
    result->available = 1;
    result->priority = (int)priority;
    snprintf(result->reason, sizeof result->reason, "test component %s", TC_NAME);
#endif
    return WEFT_SUCCESS;
}
