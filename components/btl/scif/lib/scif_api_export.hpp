// SPDX-License-Identifier: BSD-3-Clause
// Visibility of the C API: exported from libweft_scif (built with
// -DWEFT_SCIF_EXPORT_API), hidden inside the btl/scif component, so a
// program that links libweft_scif and loads the component never mixes two
// endpoint tables through symbol interposition.
#pragma once

#ifdef WEFT_SCIF_EXPORT_API
#define WEFT_SCIF_API __attribute__((visibility("default")))
#else
#define WEFT_SCIF_API __attribute__((visibility("hidden")))
#endif
