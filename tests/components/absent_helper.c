/* SPDX-License-Identifier: BSD-3-Clause */
/* A helper library that weft_btl_needlib.so depends on. The test makes sure
 * it cannot be found at load time, to check that the loader reports the
 * missing dependency by name instead of libltdl's "file not found". */
int weft_test_absent_helper(void);

int weft_test_absent_helper(void) { return 0; }
