// SPDX-License-Identifier: BSD-3-Clause
// Framework selection: which of a framework's components take part, from
// the framework parameter (btl=self,tcp / btl=^openib) and the
// <fw>_base_require list, with a reason for every component left out.
//
// The messages are the user interface here: a typo in btl= must say what
// was meant and what exists, and a required transport that cannot run must
// say why and how to get going anyway.
#include "repository/repository.hpp"

#include <algorithm>
#include <set>

#include "params/list.hpp"
#include "params/registry.hpp"
#include "core/strings.hpp"

namespace weft::repository {

namespace {

using str::join;

// Suggestions further away than this are guesses, not typo fixes.
constexpr size_t kMaxSuggestDistance = 3;

// The nearest known name, or "" when none is close. A candidate is only
// offered when it is within kMaxSuggestDistance and shares something with
// what was typed: replacing every character of a short name ("x" -> "tcp")
// is not a typo.
std::string nearest(std::string_view typed, const std::vector<std::string> &known)
{
    std::string best;
    size_t best_d = kMaxSuggestDistance + 1;
    for (const auto &k : known) {   // known is sorted: ties go to the first name
        size_t d = params::edit_distance(typed, k, kMaxSuggestDistance);
        if (d < best_d && d < std::max(typed.size(), k.size())) {
            best = k;
            best_d = d;
        }
    }
    return best;
}

// "no btl component named 'slef' (did you mean 'self'?); available: self, tcp"
std::string unknown_component(std::string_view framework, std::string_view typed,
                              const std::vector<std::string> &known)
{
    std::string msg = "no " + std::string(framework) + " component named '" + params::shown_name(typed) + "'";
    if (std::string s = nearest(typed, known); !s.empty())
        msg += " (did you mean '" + s + "'?)";
    msg += "; available: " + (known.empty() ? std::string("none") : join(known, ", "));
    return msg;
}

bool is_wildcard(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

// Does the list item name a known component? Wildcards count when they
// match at least one.
bool item_known(const params::ListItem &item, const std::vector<std::string> &known)
{
    for (const auto &k : known)
        if (is_wildcard(item.name) ? params::glob_match(item.name, k) : item.name == k)
            return true;
    return false;
}

// A framework list holds component names only; CIDR ranges and device:port
// items belong to interface and device lists.
Status check_names_only(const params::ListSpec &spec, const std::string &param)
{
    for (const auto &item : spec.items)
        if (item.kind != params::ListItem::Kind::Name)
            return Status(WEFT_ERR_BAD_VALUE,
                          param + ": '" + item.text +
                              "' is not a component name (this list takes component names, "
                              "optionally with '^' first to exclude them)");
    return Status::success();
}

} // namespace

Result<Selection> select(std::vector<ComponentRecord *> records, std::string_view framework,
                         std::string_view include_exclude, std::string_view require)
{
    const std::string fw(framework);
    records.erase(std::remove_if(records.begin(), records.end(),
                                 [&](ComponentRecord *r) { return !r || r->framework != fw; }),
                  records.end());

    // Every component this framework knows, loaded or not: naming one that
    // failed to load is not a typo, it gets its failure as the reason.
    std::vector<std::string> known;
    for (auto *r : records)
        if (!r->name.empty())
            known.push_back(r->name);
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());

    // ---- btl=... ----
    const std::string list_param = fw + "=" + std::string(include_exclude);
    auto parsed = params::parse_list(include_exclude);
    if (!parsed.ok())
        return Status(WEFT_ERR_BAD_VALUE, list_param + ": " + parsed.status().message());
    const params::ListSpec &spec = parsed.value();
    if (Status st = check_names_only(spec, list_param); !st.ok())
        return st;

    Selection sel;
    for (const auto &item : spec.items) {
        if (item_known(item, known))
            continue;
        std::string msg = list_param + ": " + unknown_component(fw, item.name, known);
        if (!spec.exclude)
            return Status(WEFT_ERR_NOT_FOUND, msg);
        // Excluding something that does not exist changes nothing; it may
        // well be a component this build simply does not have.
        sel.warnings.push_back(msg + "; ignoring it");
    }

    // ---- each component: taken, or why not ----
    for (auto *r : records) {
        std::string reason;
        if (!spec.selects_name(r->name))
            reason = (spec.exclude ? "excluded by " : "not listed in ") + list_param;
        else if (!r->loaded)
            reason = "failed to load: " + r->failure;
        else if (!r->failure.empty())
            reason = r->failure;   // "open() failed: ..."
        else if (!r->opened)
            reason = "not opened";
        else if (!r->queried)
            reason = "not queried";
        else if (!r->query.available)
            reason = std::string("not available: ") +
                     (r->query.reason[0] ? r->query.reason : "query() gave no reason");
        if (reason.empty())
            sel.selected.push_back(r);
        else
            sel.rejected.push_back({r, std::move(reason)});
    }
    std::stable_sort(sel.selected.begin(), sel.selected.end(),
                     [](const ComponentRecord *a, const ComponentRecord *b) {
                         if (a->query.priority != b->query.priority)
                             return a->query.priority > b->query.priority;
                         return a->name < b->name;
                     });

    // ---- <fw>_base_require ----
    const std::string require_param = fw + "_base_require";
    auto req = params::parse_list(require);
    if (!req.ok())
        return Status(WEFT_ERR_BAD_VALUE,
                      require_param + "=" + std::string(require) + ": " + req.status().message());
    if (req.value().exclude)
        return Status(WEFT_ERR_BAD_VALUE,
                      require_param + "=" + std::string(require) +
                          ": '^' is not accepted here; list the components that must be used "
                          "(to keep a component out, use " + fw + "=^name)");
    if (Status st = check_names_only(req.value(), require_param + "=" + std::string(require));
        !st.ok())
        return st;

    std::vector<std::string> problems;
    int code = WEFT_SUCCESS;   // of the first problem: what the caller sees first
    auto problem = [&](int c, std::string msg) {
        if (code == WEFT_SUCCESS)
            code = c;
        problems.push_back(std::move(msg));
    };
    std::set<std::string> seen;
    for (const auto &item : req.value().items) {
        const std::string &name = item.name;
        if (!seen.insert(name).second)
            continue;
        if (is_wildcard(name)) {
            problem(WEFT_ERR_BAD_VALUE, require_param + "=" + std::string(require) + ": '" +
                                            name + "' is a pattern; name each required "
                                            "component exactly");
            continue;
        }
        if (!std::binary_search(known.begin(), known.end(), name)) {
            problem(WEFT_ERR_NOT_FOUND, require_param + "=" + std::string(require) + ": " +
                                            unknown_component(fw, name, known));
            continue;
        }
        if (std::any_of(sel.selected.begin(), sel.selected.end(),
                        [&](const ComponentRecord *r) { return r->name == name; }))
            continue;
        std::string why = "not selected";
        for (const auto &rj : sel.rejected)
            if (rj.record->name == name) {
                why = rj.reason;
                break;
            }
        while (!why.empty() && (why.back() == '.' || why.back() == ' '))
            why.pop_back();   // the sentence gets its own full stop
        std::string msg = fw + "/" + name + " is required by " + require_param +
                          " but not usable: " + why + ".";
        if (!spec.selects_name(name))
            msg += " Add it to " + fw + "= (or remove the exclusion), or remove it from " +
                   require_param + " to allow falling back.";
        else
            msg += " Remove it from " + require_param + " to allow falling back.";
        problem(WEFT_ERR_NOT_AVAILABLE, std::move(msg));
    }
    // Every problem at once, one per line: fixing them one run at a time is
    // tedious when several required components are affected.
    if (!problems.empty())
        return Status(code, join(problems, "\n"));
    return sel;
}

} // namespace weft::repository
