// btl/tcp component internals shared by the module files.
#pragma once

#include <weft/btl.h>

namespace weft::btl_tcp {

// Frees module m (the finalize op). WEFT_ERR_BAD_PARAM if it is not a live
// btl/tcp module or is inside its own progress().
int release_module(weft_btl_module_t *m);

} // namespace weft::btl_tcp
