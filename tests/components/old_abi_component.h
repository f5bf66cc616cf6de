/* SPDX-License-Identifier: BSD-3-Clause */
/* What tests/unit/btl_abi_test.cc reads back from weft_btl_oldabi
 * (tests/components/old_abi_component.c) through its module's module_ctx. */
#ifndef WEFT_TEST_OLD_ABI_COMPONENT_H
#define WEFT_TEST_OLD_ABI_COMPONENT_H

/* The byte the module's own memory after its declared size holds; the
 * runtime must never write there. */
#define OLDABI_CANARY 0xA5

typedef struct oldabi_report {
    int tail_op_calls;      /* calls that reached an op beyond ops->size */
    int finalized;
} oldabi_report_t;

#endif
