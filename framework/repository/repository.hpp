// SPDX-License-Identifier: BSD-3-Clause
// The component repository: finds component DSOs (weft_<fw>_<name>.so) in
// the component path, loads them with libltdl, checks the ABI header, and
// records every failure with its reason. With --disable-dlopen the same
// components come from a static table linked into libweft.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <weft/component.h>
#include <weft/host.h>

#include "core/status.hpp"

namespace weft::repository {

struct ComponentRecord {
    std::string framework;          // from the file name (or static table)
    std::string name;
    std::string path;               // file loaded, or "(static)"
    const weft_component_t *component = nullptr; // null when loading failed
    bool loaded = false;            // ABI checks passed
    std::string failure;            // why it failed to load/open, empty if fine
    bool opened = false;            // open() returned success
    bool queried = false;
    weft_query_result_t query{};    // filled by query()
    void *handle = nullptr;         // lt_dlhandle, owned by the Repository
    // Remarks worth a debug-level log line but not a failure: a newer ABI
    // minor, copies of the same component later in the path that were
    // ignored. The caller decides whether to print them.
    std::vector<std::string> notes;
};

class Repository {
public:
    Repository();
    ~Repository();   // closes every handle
    Repository(const Repository &) = delete;
    Repository &operator=(const Repository &) = delete;

    // Scans each directory for weft_<framework>_<name>.so (first directory
    // that has a component wins) and loads it. Only frameworks in
    // `frameworks` are considered (others are recorded as failed: unknown
    // framework); an empty `frameworks` accepts every framework name.
    // Directories that do not exist are skipped silently. A file whose name
    // does not split into framework and component (a '_' in the component
    // name) is recorded as failed. A framework/name pair already known (from
    // an earlier directory or add_static()) is not loaded again; the
    // existing record gets a note.
    void discover(const std::vector<std::string> &dirs, const std::vector<std::string> &frameworks);
    // Adds the components linked into this binary (--disable-dlopen); the
    // same header checks run on them. path = "(static)".
    void add_static();
    // Loads one file (used by discover; tests call it directly). Returns the
    // new record, loaded or failed; when the framework/name pair is already
    // known, returns that record instead (first one wins) without loading.
    ComponentRecord &load_file(const std::string &path);

    // Every record, loaded or failed, in discovery order.
    std::vector<ComponentRecord *> records();
    std::vector<ComponentRecord *> records(std::string_view framework);
    ComponentRecord *find(std::string_view framework, std::string_view name);

    // Calls open() on every loaded component of the framework (once).
    void open_all(std::string_view framework, const weft_host_t *host);
    // Calls query() on every opened component of the framework (once).
    void query_all(std::string_view framework, const weft_host_t *host);

    // Minimum struct_size per framework (the framework struct of ABI 1.0);
    // unknown frameworks use sizeof(weft_component_t).
    static size_t minimum_struct_size(std::string_view framework);

private:
    class Library; // owns one lt_dlhandle (repository.cc; no ltdl.h here)

    ComponentRecord &add_record(std::string framework, std::string name, std::string path);
    ComponentRecord &load(const std::string &path, std::string framework, std::string name);
    // Runs the ABI header checks; on failure sets rec.failure and returns false.
    static bool check_header(ComponentRecord &rec, const weft_component_t *c);

    // Declared before records_ so that records (which point into the
    // libraries) go first when the Repository is destroyed.
    std::vector<std::unique_ptr<Library>> libraries_;
    std::vector<std::unique_ptr<ComponentRecord>> records_;
};

// The result of applying a framework selection (btl=self,tcp / btl=^openib
// and <fw>_base_require) to the repository's records.
struct Selection {
    std::vector<ComponentRecord *> selected;    // in priority order
    struct Rejected { ComponentRecord *record; std::string reason; };
    std::vector<Rejected> rejected;             // every other component and why
    std::vector<std::string> warnings;          // e.g. unknown name in an exclude list
};

// include/exclude text is the framework parameter's value; require is the
// <fw>_base_require list. Errors: an unknown component named in an include
// list or in require (with did-you-mean and the available names), a required
// component that cannot be used (with its reason).
Result<Selection> select(std::vector<ComponentRecord *> records, std::string_view framework,
                         std::string_view include_exclude, std::string_view require);

} // namespace weft::repository
