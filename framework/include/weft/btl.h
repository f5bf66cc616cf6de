/* The btl (byte transfer layer) framework: transport components.
 * ABI: a weft_btl_component_t begins with weft_component_t; init creates
 * modules (one per usable device/NIC/port) and start_connect begins a
 * non-blocking connection. The module operations table arrives with the
 * runtime; until then a module is opaque here. */
#ifndef WEFT_BTL_H
#define WEFT_BTL_H

#include <weft/component.h>
#include <weft/host.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_BTL_FRAMEWORK "btl"

struct weft_btl_module;
struct weft_btl_peer;
struct weft_btl_endpoint;

typedef struct weft_btl_component {
    weft_component_t base;

    /* init: create up to max_modules modules for the devices query() found,
     * storing them in modules[] and their count in *num_modules. */
    int (*init)(const weft_host_t *host, struct weft_btl_module **modules,
                int max_modules, int *num_modules);
    /* start_connect: begin a non-blocking connection from module to peer;
     * *endpoint is usable for sends once the module reports it connected. */
    int (*start_connect)(struct weft_btl_module *module, const struct weft_btl_peer *peer,
                         struct weft_btl_endpoint **endpoint);
} weft_btl_component_t;

#ifdef __cplusplus
}
#endif
#endif
