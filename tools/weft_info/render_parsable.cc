// SPDX-License-Identifier: BSD-3-Clause
// weft_info --parsable: one fact per line, colon separated, in the style of
// `ompi_info --parsable` so scripts written for one read the other:
//
//   version:weft:<v>
//   config:<key>:<value>
//   path:component:present|absent:<dir>
//   path:param_file:system|user:present|absent:<file>
//   framework:<fw>:description:<text>
//   mca:<fw>:<comp>:version:component:<x.y.z>
//   mca:<fw>:<comp>:version:abi:<major.minor>
//   mca:<fw>:<comp>:path:<file or (static)>
//   mca:<fw>:<comp>:status:loaded | status:failed:<reason>
//   mca:<fw>:<comp>:note:<text>
//   mca:<fw>:<comp>:param:<name>:value:<v>
//                               :source:<default|environment|command line|file (path:line)|...>
//                               :level:<1..9>
//                               :type:<bool|int|size|double|string|enum|list>
//                               :help:<text>                 (when there is help)
//                               :enumerator:value:<int>:<name>  (Open MPI order)
//                               :deprecated:no
//                               :synonym:name:<syn>          (every synonym)
//                               :synonym:deprecated:<syn>    (synonyms that warn)
//   topology:<key>:<value>, topology:device:<name>:<key>:<value>
//
// Framework-wide parameters (btl_base_*, and the selection parameter `btl`
// itself) use component "base", as Open MPI prints mca:btl:base:param:btl.
// The core groups use framework "mca" and "topology" with component "base".
// Free text (values, help, reasons, paths) is always the last field, so it
// may contain colons; newlines in it become spaces.
#include "weft_info/info.hpp"

namespace weft::info {
namespace {

class Out {
public:
    void line(const std::string &s) { out_ += one_line(s) + '\n'; }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

void component_lines(Out &o, const ComponentFact &c)
{
    const std::string pre = "mca:" + c.framework + ":" + c.name + ":";
    if (!c.version.empty())
        o.line(pre + "version:component:" + c.version);
    if (!c.abi.empty())
        o.line(pre + "version:abi:" + c.abi);
    o.line(pre + "path:" + c.path);
    o.line(pre + (c.ok ? std::string("status:loaded") : "status:failed:" + c.failure));
    for (const auto &n : c.notes)
        o.line(pre + "note:" + n);
}

void param_lines(Out &o, const ParamGroup &g, const params::Param &p)
{
    const std::string pre = "mca:" + g.framework + ":" + g.component + ":param:" + p.full_name() + ":";
    const auto &d = p.def();
    o.line(pre + "value:" + p.text());
    o.line(pre + "source:" + p.origin().describe());
    o.line(pre + "level:" + std::to_string(d.level));
    o.line(pre + "type:" + params::type_name(p.type()));
    if (!d.help.empty())
        o.line(pre + "help:" + d.help);
    for (const auto &[name, value] : enumerators(p))
        o.line(pre + "enumerator:value:" + value + ":" + name);
    o.line(pre + "deprecated:no");
    for (const auto &s : d.synonyms)
        o.line(pre + "synonym:name:" + s);
    for (const auto &s : d.deprecated) {
        o.line(pre + "synonym:name:" + s);
        o.line(pre + "synonym:deprecated:" + s);
    }
}

} // namespace

std::string render_parsable(const Report &r)
{
    Out o;
    const BuildFacts &b = r.build;
    if (r.show_build) {
        o.line("version:weft:" + b.version);
        o.line("config:configure_args:" + b.configure_args);
        o.line(std::string("config:dlopen:") + (b.dlopen ? "yes" : "no"));
        o.line("config:sanitizers:" + b.sanitizers);
        for (const auto &c : b.components_built)
            o.line("config:component_built:" + c);
        o.line(std::string("config:build_tree:") + (b.build_tree ? "yes" : "no"));
        for (const auto &d : b.component_path)
            o.line(std::string("path:component:") + (d.exists ? "present:" : "absent:") + d.path);
        for (const auto &f : b.param_files)
            o.line("path:param_file:" + f.kind + ":" + (f.exists ? "present:" : "absent:") + f.path);
    }
    if (r.show_frameworks) {
        for (const auto &f : r.frameworks) {
            o.line("framework:" + f.name + ":description:" + f.description);
            o.line("framework:" + f.name + ":kind:" +
                   (f.core ? "core" : f.known ? "components" : "unknown"));
            for (const auto &c : f.components)
                component_lines(o, c);
        }
    }
    if (r.show_params) {
        for (const auto &g : r.params) {
            // Without the framework listing, say which component the
            // parameters belong to (as ompi_info --param does).
            if (!r.show_frameworks && g.component_fact)
                component_lines(o, *g.component_fact);
            for (const auto *p : g.params)
                param_lines(o, g, *p);
        }
    }
    if (r.show_failed && !r.show_frameworks)
        for (const auto *c : r.failed)
            component_lines(o, *c);
    if (r.show_topology) {
        const TopologyFacts &t = r.topology;
        o.line("topology:source:" + t.source);
        o.line("topology:binding:" + t.binding);
        o.line(std::string("topology:bound:") + (t.bound ? "yes" : "no"));
        std::string numa;
        for (size_t i = 0; i < t.numa_nodes.size(); ++i)
            numa += (i ? "," : "") + std::to_string(t.numa_nodes[i]);
        o.line("topology:binding_numa_nodes:" + numa);
        o.line("topology:packages:" + std::to_string(t.packages));
        o.line("topology:numa_nodes:" + std::to_string(t.numa_total));
        o.line("topology:cores:" + std::to_string(t.cores));
        o.line("topology:pus:" + std::to_string(t.pus));
        for (const auto &d : t.devices) {
            const std::string pre = "topology:device:" + d.name + ":";
            o.line(pre + "kind:" + topology::kind_name(d.kind));
            o.line(pre + "distance:" + topology::distance_name(d.distance));
            o.line(pre + "package:" + std::to_string(d.package));
            o.line(pre + "numa_node:" + std::to_string(d.numa_node));
            o.line(pre + "cpuset:" + d.cpuset);
            o.line(pre + "pci:" + d.pci_bus_id);
        }
    }
    return o.take();
}

} // namespace weft::info
