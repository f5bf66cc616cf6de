// SPDX-License-Identifier: BSD-3-Clause
// weft_info --explain: the transport choice for this host, per peer class,
// in the three output formats.
#include "weft_info/info.hpp"
#include "weft_info/json.hpp"

namespace weft::info {

namespace {

std::string caps_text(const weft_btl_caps_t &c)
{
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "exclusivity %u, priority %d, latency %.2f us, bandwidth %.0f MB/s, eager limit %zu",
                  c.exclusivity, c.priority, c.latency_us, c.bandwidth_mbs, c.eager_limit);
    return buf;
}

std::string pretty(const rt::Explanation &ex)
{
    std::string s = "Components (btl):\n";
    for (const auto &c : ex.components)
        s += "  " + c.name + ": " + (c.used ? "in use" : "not used") + ": " + c.reason + "\n";
    s += "Modules:\n";
    for (const auto &m : ex.modules)
        s += "  " + m.name + ": " + caps_text(m.caps) + "\n";
    if (ex.modules.empty())
        s += "  (none)\n";
    for (const auto &k : ex.classes) {
        s += std::string("Peer class ") + rt::peer_class_name(k.peer_class) + ": " + k.choice.summary();
        if (!k.choice.reachable())
            s += k.choice.require_error.empty() ? " (unreachable)" : " (error: " + k.choice.require_error + ")";
        s += "\n" + k.choice.details("  ");
    }
    return s;
}

std::string parsable(const rt::Explanation &ex)
{
    std::string s;
    for (const auto &c : ex.components)
        s += "explain:component:" + c.name + ":" + (c.used ? "used" : "unused") + ":" + one_line(c.reason) + "\n";
    for (const auto &m : ex.modules)
        s += "explain:module:" + m.name + ":caps:" + caps_text(m.caps) + "\n";
    for (const auto &k : ex.classes) {
        const std::string cls = rt::peer_class_name(k.peer_class);
        s += "explain:class:" + cls + ":transports:" + k.choice.summary() + "\n";
        s += "explain:class:" + cls + ":reachable:" + (k.choice.reachable() ? "yes" : "no") + "\n";
        for (const auto &v : k.choice.verdicts)
            s += "explain:class:" + cls + ":module:" + v.module + ":" + rt::role_name(v.role) + ":" +
                 one_line(v.reason) + "\n";
        if (!k.choice.require_error.empty())
            s += "explain:class:" + cls + ":error:" + one_line(k.choice.require_error) + "\n";
    }
    return s;
}

std::string json(const rt::Explanation &ex)
{
    JsonWriter j;
    j.begin_object();
    j.begin_array("components");
    for (const auto &c : ex.components) {
        j.begin_object();
        j.string("name", c.name);
        j.boolean("used", c.used);
        j.string("reason", c.reason);
        j.end_object();
    }
    j.end_array();
    j.begin_array("modules");
    for (const auto &m : ex.modules) {
        j.begin_object();
        j.string("name", m.name);
        j.string("component", m.component);
        j.number("exclusivity", m.caps.exclusivity);
        j.number("priority", m.caps.priority);
        j.number("eager_limit", static_cast<int64_t>(m.caps.eager_limit));
        j.end_object();
    }
    j.end_array();
    j.begin_array("peer_classes");
    for (const auto &k : ex.classes) {
        j.begin_object();
        j.string("class", rt::peer_class_name(k.peer_class));
        j.string("transports", k.choice.summary());
        j.boolean("reachable", k.choice.reachable());
        if (!k.choice.require_error.empty())
            j.string("error", k.choice.require_error);
        j.begin_array("modules");
        for (const auto &v : k.choice.verdicts) {
            j.begin_object();
            j.string("module", v.module);
            j.string("role", rt::role_name(v.role));
            j.string("reason", v.reason);
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.end_object();
    return j.str();
}

} // namespace

std::string render_explain(const rt::Explanation &ex, Options::Format format)
{
    switch (format) {
    case Options::Format::Parsable: return parsable(ex);
    case Options::Format::Json: return json(ex);
    case Options::Format::Pretty: break;
    }
    return pretty(ex);
}

} // namespace weft::info
