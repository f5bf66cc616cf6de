// SPDX-License-Identifier: BSD-3-Clause
// weft_info --json: the facts of --parsable as one JSON object. Sections
// appear under the same conditions as in the other forms:
//   "version", "config", "paths"   build information
//   "frameworks"                   [{name, description, kind, components: [...]}]
//   "params"                       [{framework, component, name, value, source, ...}]
//   "failed"                       [component, ...] (--show-failed)
//   "topology"                     {...} (--topology)
#include "weft_info/info.hpp"
#include "weft_info/json.hpp"

namespace weft::info {
namespace {

void component_json(JsonWriter &j, const ComponentFact &c)
{
    j.begin_object();
    j.string("framework", c.framework);
    j.string("name", c.name);
    if (c.version.empty())
        j.null("version");
    else
        j.string("version", c.version);
    if (c.abi.empty())
        j.null("abi");
    else
        j.string("abi", c.abi);
    j.string("path", c.path);
    j.string("status", c.ok ? "loaded" : "failed");
    if (!c.ok)
        j.string("reason", c.failure);
    if (!c.notes.empty()) {
        j.begin_array("notes");
        for (const auto &n : c.notes)
            j.string(n);
        j.end_array();
    }
    j.end_object();
}

void param_json(JsonWriter &j, const ParamGroup &g, const params::Param &p)
{
    const auto &d = p.def();
    j.begin_object();
    j.string("name", p.full_name());
    j.string("framework", g.framework);
    j.string("component", g.component);
    j.string("value", p.text());
    j.string("source", p.origin().describe());
    j.number("level", d.level);
    j.string("type", params::type_name(p.type()));
    j.string("help", d.help);
    auto en = enumerators(p);
    if (!en.empty()) {
        j.begin_array("enumerators");
        for (const auto &[name, value] : en) {
            j.begin_object();
            j.string("name", name);
            if (value.empty())
                j.null("value");
            else
                j.number("value", std::stoll(value));
            j.end_object();
        }
        j.end_array();
    }
    j.boolean("deprecated", false);
    j.begin_array("synonyms");
    for (const auto &s : d.synonyms) {
        j.begin_object();
        j.string("name", s);
        j.boolean("deprecated", false);
        j.end_object();
    }
    for (const auto &s : d.deprecated) {
        j.begin_object();
        j.string("name", s);
        j.boolean("deprecated", true);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

} // namespace

std::string render_json(const Report &r)
{
    JsonWriter j;
    j.begin_object();
    const BuildFacts &b = r.build;
    if (r.show_build) {
        j.string("version", b.version);
        j.begin_object("config");
        j.string("configure_args", b.configure_args);
        j.boolean("dlopen", b.dlopen);
        j.string("sanitizers", b.sanitizers);
        j.begin_array("components_built");
        for (const auto &c : b.components_built)
            j.string(c);
        j.end_array();
        j.boolean("build_tree", b.build_tree);
        j.end_object();
        j.begin_object("paths");
        j.begin_array("component_path");
        for (const auto &d : b.component_path) {
            j.begin_object();
            j.string("path", d.path);
            j.boolean("exists", d.exists);
            j.end_object();
        }
        j.end_array();
        j.begin_array("param_files");
        for (const auto &f : b.param_files) {
            j.begin_object();
            j.string("kind", f.kind);
            j.string("path", f.path);
            j.boolean("exists", f.exists);
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    if (r.show_frameworks) {
        j.begin_array("frameworks");
        for (const auto &f : r.frameworks) {
            j.begin_object();
            j.string("name", f.name);
            j.string("description", f.description);
            j.string("kind", f.core ? "core" : f.known ? "components" : "unknown");
            j.begin_array("components");
            for (const auto &c : f.components)
                component_json(j, c);
            j.end_array();
            j.end_object();
        }
        j.end_array();
    }
    if (r.show_params) {
        j.number("level", r.level);
        j.begin_array("params");
        for (const auto &g : r.params)
            for (const auto *p : g.params)
                param_json(j, g, *p);
        j.end_array();
    }
    if (r.show_failed) {
        j.begin_array("failed");
        for (const auto *c : r.failed)
            component_json(j, *c);
        j.end_array();
    }
    if (r.show_topology) {
        const TopologyFacts &t = r.topology;
        j.begin_object("topology");
        j.string("source", t.source);
        j.string("binding", t.binding);
        j.boolean("bound", t.bound);
        j.begin_array("binding_numa_nodes");
        for (int n : t.numa_nodes)
            j.number({}, n);
        j.end_array();
        j.number("packages", t.packages);
        j.number("numa_nodes", t.numa_total);
        j.number("cores", t.cores);
        j.number("pus", t.pus);
        j.begin_array("devices");
        for (const auto &d : t.devices) {
            j.begin_object();
            j.string("name", d.name);
            j.string("kind", topology::kind_name(d.kind));
            j.string("distance", topology::distance_name(d.distance));
            j.number("package", d.package);
            j.number("numa_node", d.numa_node);
            j.string("cpuset", d.cpuset);
            j.string("pci", d.pci_bus_id);
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_object();
    return j.str();
}

} // namespace weft::info
