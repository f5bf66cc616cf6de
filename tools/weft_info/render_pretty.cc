// SPDX-License-Identifier: BSD-3-Clause
// weft_info's human-readable form, laid out like ompi_info: a right-aligned
// label, a colon, and the value wrapped under itself at 79 columns.
#include "weft_info/info.hpp"
#include "core/strings.hpp"

namespace weft::info {
namespace {

using weft::str::join;

constexpr size_t kLabelWidth = 24;
constexpr size_t kWidth = 79;

class Out {
public:
    // "               Label: value", wrapped at word boundaries.
    void field(const std::string &label, const std::string &value)
    {
        std::string head = label.size() < kLabelWidth
                               ? std::string(kLabelWidth - label.size(), ' ') + label
                               : label;
        wrapped(head + ": ", one_line(value));
    }
    // Continuation text under the value column.
    void more(const std::string &value) { wrapped(std::string(kLabelWidth + 2, ' '), one_line(value)); }
    void blank() { out_ += '\n'; }
    std::string take() { return std::move(out_); }

private:
    void wrapped(const std::string &head, const std::string &text)
    {
        const size_t indent = kLabelWidth + 2;
        std::string line = head;
        size_t room = line.size() < kWidth ? kWidth - line.size() : 20;
        size_t pos = 0;
        bool first_word = true;
        while (pos < text.size()) {
            size_t sp = text.find(' ', pos);
            std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
            pos = sp == std::string::npos ? text.size() : sp + 1;
            if (word.empty())
                continue;
            size_t need = word.size() + (first_word ? 0 : 1);
            if (!first_word && need > room) {
                out_ += line + '\n';
                line = std::string(indent, ' ');
                room = kWidth - indent;
                first_word = true;
                need = word.size();
            }
            if (!first_word)
                line += ' ';
            line += word;
            room = need > room ? 0 : room - need;
            first_word = false;
        }
        out_ += line + '\n';
    }

    std::string out_;
};

std::string component_summary(const ComponentFact &c)
{
    std::string s = c.name;
    if (!c.version.empty())
        s += " (component v" + c.version + ", ABI v" + c.abi + ")";
    s += c.ok ? ": loaded" : ": failed: " + c.failure;
    return s;
}

void component_block(Out &o, const ComponentFact &c, bool with_file)
{
    o.field("MCA " + c.framework, component_summary(c));
    if (with_file || !c.ok)
        o.more("file: " + c.path);
    for (const auto &n : c.notes)
        o.more("note: " + n);
}

void param_block(Out &o, const ParamGroup &g, const params::Param &p)
{
    const auto &d = p.def();
    o.field("MCA " + g.framework + " " + g.component,
            "parameter \"" + p.full_name() + "\" (current value: \"" + p.text() +
                "\", data source: " + p.origin().describe() + ", level: " + level_text(d.level) +
                ", type: " + params::type_name(p.type()) + ")");
    if (!d.help.empty())
        o.more(d.help);
    auto en = enumerators(p);
    if (!en.empty()) {
        std::vector<std::string> items;
        for (const auto &[name, value] : en)
            items.push_back(p.type() == params::Type::Enum || value.empty() ? name
                                                                            : name + "=" + value);
        std::string tail = p.type() == params::Type::Int ? ", or an integer" : "";
        o.more("Valid values: " + join(items, ", ") + tail);
    }
    if (!d.synonyms.empty())
        o.more("Synonyms: " + join(d.synonyms, ", "));
    if (!d.deprecated.empty())
        o.more("Deprecated synonyms: " + join(d.deprecated, ", "));
}

} // namespace

std::string render_pretty(const Report &r)
{
    Out o;
    const BuildFacts &b = r.build;
    if (r.show_build) {
        o.field("Package", "weft " + b.version);
        o.field("Configure command line", b.configure_args.empty() ? "(none)" : b.configure_args);
        o.field("Component loading", b.dlopen ? "dlopen (libltdl)" : "static (--disable-dlopen)");
        o.field("Sanitizers", b.sanitizers);
        o.field("Components built", b.components_built.empty() ? "(none)" : join(b.components_built, ", "));
        o.field("Running from", b.build_tree ? "build tree (uninstalled)" : "installation");
        for (size_t i = 0; i < b.component_path.size(); ++i) {
            std::string v = b.component_path[i].path +
                            (b.component_path[i].exists ? "" : " (not present)");
            if (!b.dlopen)
                v += " (unused: components are linked in)";
            if (i == 0)
                o.field("Component path", v);
            else
                o.more(v);
        }
        for (const auto &f : b.param_files)
            o.field("Param file (" + f.kind + ")", f.path + (f.exists ? "" : " (not present)"));
    }
    if (r.show_frameworks) {
        for (const auto &f : r.frameworks) {
            o.field("Framework " + f.name, f.description);
            if (f.core)
                continue;
            if (f.components.empty())
                o.field("MCA " + f.name, "(no components)");
            for (const auto &c : f.components)
                component_block(o, c, false);
        }
    }
    if (r.show_params) {
        for (const auto &g : r.params) {
            if (!r.show_frameworks && g.component_fact)
                component_block(o, *g.component_fact, false);
            for (const auto *p : g.params)
                param_block(o, g, *p);
        }
    }
    if (r.show_failed) {
        if (r.failed.empty())
            o.field("Failed components", "none: every component found loaded and opened");
        for (const auto *c : r.failed)
            component_block(o, *c, true);
    }
    if (r.show_topology) {
        const TopologyFacts &t = r.topology;
        o.field("Topology source", t.source);
        o.field("Binding", t.binding + (t.bound ? "" : " (not bound: the whole machine)"));
        std::vector<std::string> numa;
        for (int n : t.numa_nodes)
            numa.push_back(std::to_string(n));
        o.field("Binding NUMA nodes", numa.empty() ? "(unknown)" : join(numa, ", "));
        o.field("Packages", std::to_string(t.packages));
        o.field("NUMA nodes", std::to_string(t.numa_total));
        o.field("Cores", std::to_string(t.cores));
        o.field("PUs", std::to_string(t.pus));
        o.field("Devices", t.devices.empty() ? "none found"
                                             : std::to_string(t.devices.size()) +
                                                   " (nearest to the binding first)");
        for (const auto &d : t.devices) {
            o.field("Device " + d.name,
                    std::string(topology::kind_name(d.kind)) + ", " +
                        topology::distance_name(d.distance) + ", PCI " +
                        (d.pci_bus_id.empty() ? "(none)" : d.pci_bus_id) + ", package " +
                        (d.package < 0 ? "?" : std::to_string(d.package)) + ", NUMA node " +
                        (d.numa_node < 0 ? "?" : std::to_string(d.numa_node)) + ", CPUs " +
                        (d.cpuset.empty() ? "?" : d.cpuset));
        }
    }
    return o.take();
}

} // namespace weft::info
