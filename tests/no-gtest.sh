#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
echo "GoogleTest was not found at configure time: install libgtest-dev (contrib/install-deps) and re-run configure" >&2
exit 1
