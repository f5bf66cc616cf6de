// SPDX-License-Identifier: BSD-3-Clause
#include "rte/btl_layer.hpp"

#include <array>
#include <cstring>

#include "core/strings.hpp"

namespace weft::rt {

namespace {
// Modules one component may create (devices x ports); more is a bug or a
// very unusual machine, and the component is told the limit.
constexpr int kMaxModulesPerComponent = 32;
// A card larger than this cannot be a business card.
constexpr size_t kMaxCard = 64 * 1024;
} // namespace

BtlLayer::~BtlLayer() { close(); }

Status BtlLayer::open(Framework &fw, const weft_btl_upcalls_t &upcalls,
                      const weft_btl_process_t *process)
{
    auto sel = fw.select(WEFT_BTL_FRAMEWORK);
    if (!sel.ok())
        return sel.status();
    for (const auto &w : sel.value().warnings)
        fw.logger().write("btl", "base", WEFT_LOG_WARN, w);
    if (const auto *req = fw.params().find("btl_base_require"))
        for (const auto &item : req->as_list().items)
            required_.push_back(item.name);

    for (const auto &rej : sel.value().rejected)
        components_.push_back({rej.record->name, false, rej.reason});
    for (auto *rec : sel.value().selected) {
        const auto *comp = reinterpret_cast<const weft_btl_component_t *>(rec->component);
        ComponentVerdict v{rec->name, false, {}};
        if (!comp->init) {
            v.reason = "has no init entry point";
            components_.push_back(v);
            continue;
        }
        std::array<weft_btl_module_t *, kMaxModulesPerComponent> mods{};
        int n = 0;
        int rc = comp->init(fw.host(), mods.data(), kMaxModulesPerComponent, &n);
        if (rc != WEFT_SUCCESS || n <= 0) {
            v.reason = rc != WEFT_SUCCESS ? std::string("init failed: ") + weft_status_string(rc)
                                          : "init created no modules (" + std::string(rec->query.reason) + ")";
            components_.push_back(v);
            continue;
        }
        for (int i = 0; i < n && i < kMaxModulesPerComponent; ++i) {
            weft_btl_module_t *m = mods[i];
            if (const char *problem = weft_btl_module_abi_problem(m)) {
                fw.logger().write("btl", rec->name, WEFT_LOG_ERROR,
                                  "module " + std::to_string(i) + " does not follow the btl ABI 1.0 (" + problem +
                                      "); skipped: rebuild the component against this weft's weft/btl.h");
                continue;
            }
            weft_btl_module_set_upcalls(m, &upcalls);
            m->process = process;
            modules_.push_back({m, comp, i, "weft.btl." + rec->name + "." + std::to_string(i)});
        }
        v.used = true;
        v.reason = "priority " + std::to_string(rec->query.priority) + ", " + std::to_string(n) +
                   " module" + (n == 1 ? "" : "s") + "; " + rec->query.reason;
        components_.push_back(v);
    }
    for (const auto &req : required_)
        for (const auto &c : components_)
            if (c.name == req && !c.used)
                return Status(WEFT_ERR_NOT_AVAILABLE,
                              "btl_base_require=" + req + ": btl/" + req + " cannot be used: " +
                                  c.reason + "; remove it from btl_base_require to let weft fall back");
    return Status::success();
}

Status BtlLayer::publish_cards(PmixClient &pmix) const
{
    std::vector<std::byte> buf(1024);
    for (const auto &om : modules_) {
        size_t len = buf.size();
        int rc = weft_btl_card(om.module, buf.data(), &len);
        if (rc == WEFT_ERR_NOT_SUPPORTED)
            continue;   // publishes no card
        if (rc == WEFT_ERR_TRUNCATED && len <= kMaxCard) {
            buf.resize(len);
            rc = weft_btl_card(om.module, buf.data(), &len);
        }
        if (rc != WEFT_SUCCESS || len > buf.size())
            return Status(rc < 0 ? rc : WEFT_ERROR,
                          "btl/" + std::string(om.module->name) + ": cannot produce its business card: " +
                              weft_status_string(rc));
        if (Status st = pmix.put(om.card_key, std::span(buf.data(), len)); !st.ok())
            return st;
    }
    return Status::success();
}

int BtlLayer::peer_card(PmixClient &pmix, const weft_btl_module_t *m, uint32_t rank, void *buf, size_t *len) const
{
    if (!len || rank >= pmix.size())
        return WEFT_ERR_BAD_PARAM;
    for (const auto &om : modules_) {
        if (om.module != m)
            continue;
        auto card = pmix.get(rank, om.card_key);
        if (!card.ok())
            return WEFT_ERR_NOT_FOUND;
        const size_t room = *len;
        *len = card.value().size();
        if (room < card.value().size())
            return WEFT_ERR_TRUNCATED;
        if (!card.value().empty())
            std::memcpy(buf, card.value().data(), card.value().size());
        return WEFT_SUCCESS;
    }
    return WEFT_ERR_BAD_PARAM;   // not a module of this runtime
}

void BtlLayer::modex_ready(log::Logger &logger) const
{
    for (const auto &om : modules_) {
        const int rc = weft_btl_modex_ready(om.module);
        if (rc != WEFT_SUCCESS && rc != WEFT_ERR_NOT_SUPPORTED)
            logger.write("btl", om.component->base.name, WEFT_LOG_WARN,
                         "btl/" + std::string(om.module->name) +
                             ": could not finish its connections after the modex (" + weft_status_string(rc) +
                             "); the peers it could not wire connect by its other methods or fail with a reason");
    }
}

void BtlLayer::close()
{
    for (auto &om : modules_)
        weft_btl_finalize(om.module);
    modules_.clear();
}

} // namespace weft::rt
