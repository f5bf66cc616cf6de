// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/rank_env.hpp"

#include <cstdlib>
#include <cstring>
#include <map>

namespace weftrun {

namespace {
// Keeps the first-seen order so the ranks' environment reads like weftrun's.
class EnvBuilder {
public:
    void set(const std::string &name, const std::string &value)
    {
        auto it = index_.find(name);
        std::string entry = name + "=" + value;
        if (it != index_.end()) { entries_[it->second] = std::move(entry); return; }
        index_.emplace(name, entries_.size());
        entries_.push_back(std::move(entry));
    }
    std::vector<std::string> take() { return std::move(entries_); }

private:
    std::map<std::string, size_t> index_;
    std::vector<std::string> entries_;
};
} // namespace

std::vector<std::string> build_rank_env(const Options &o, const JobEnv &job, char **base,
                                        std::vector<std::string> &warnings)
{
    EnvBuilder b;
    for (char **e = base; e && *e; ++e) {
        const char *eq = std::strchr(*e, '=');
        if (!eq) continue;
        b.set(std::string(*e, static_cast<size_t>(eq - *e)), eq + 1);
    }
    for (const auto &x : o.exports) {
        if (x.has_value) { b.set(x.name, x.value); continue; }
        // Local ranks inherit weftrun's environment anyway; -x VAR only
        // matters when VAR is missing, which is worth a word.
        if (const char *v = std::getenv(x.name.c_str())) b.set(x.name, v);
        else warnings.push_back("-x " + x.name + ": " + x.name +
                                " is not set in weftrun's environment, so the ranks do not get it "
                                "(use -x " + x.name + "=VALUE to give it a value)");
    }
    // The framework reads WEFT_MCA_<name>; names are checked by the ranks,
    // which know every component's parameters.
    if (!o.report.empty())
        b.set("WEFT_MCA_rte_base_report", o.report);   // an explicit --mca below still wins
    for (const auto &[name, value] : o.mca) b.set("WEFT_MCA_" + name, value);
    b.set("WEFT_LAUNCHER", "weftrun");
    b.set("WEFT_SESSION_DIR", job.session_dir);
    b.set("WEFT_TOPOLOGY_XML", job.topology_xml);
    // The one topology fact a rank needs at init (is the node
    // oversubscribed?), so it need not load hwloc at all.
    if (job.node_cores > 0) b.set("WEFT_NODE_CORES", std::to_string(job.node_cores));
    return b.take();
}

char **make_c_env(const std::vector<std::string> &env)
{
    auto **out = static_cast<char **>(std::calloc(env.size() + 1, sizeof(char *)));
    if (!out) return nullptr;
    for (size_t i = 0; i < env.size(); ++i) {
        out[i] = strdup(env[i].c_str());
        if (!out[i]) { free_c_env(out); return nullptr; }
    }
    return out;
}

void free_c_env(char **env)
{
    if (!env) return;
    for (char **e = env; *e; ++e) std::free(*e);
    std::free(env);
}

} // namespace weftrun
