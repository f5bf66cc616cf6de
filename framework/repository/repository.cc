// SPDX-License-Identifier: BSD-3-Clause
// The component repository: finding, loading and checking components.
//
// Nothing here prints. Every problem (a file that will not load, a header
// that does not match, an open() that fails) is stored in the component's
// record, because only the caller knows whether the user cares: a failure of
// a component the user did not ask for is noise, while weft_info
// --show-failed lists them all.
#include "weft_config.h"   // WEFT_HAVE_DLOPEN

#include "repository/repository.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <system_error>

#include <weft/btl.h>

#ifdef WEFT_HAVE_DLOPEN
#include <dlfcn.h>
#include <ltdl.h>
#endif

// ---- components linked in (--disable-dlopen) --------------------------------
//
// configure writes one WEFT_STATIC_COMPONENT(fw, name) line per component
// into static_components.h (build tree). Each framework names its component
// struct type weft_<fw>_component_t and every such struct begins with
// `weft_component_t base`, so the macro can declare the symbol with its real
// type and take &sym.base: no declaration under a different type (undefined
// behaviour, and it would let a symbol of the wrong kind link silently). A
// new framework only has to have its header included here.
#include "core/strings.hpp"

#define WEFT_STATIC_COMPONENT(fw, name) \
    extern "C" const weft_##fw##_component_t weft_##fw##_##name##_component;
#include "repository/static_components.h"
#undef WEFT_STATIC_COMPONENT

namespace weft::repository {

namespace {

using str::join;

struct StaticComponent {
    const char *framework;
    const char *name;
    const weft_component_t *component;
};

#define WEFT_STATIC_COMPONENT(fw, name) {#fw, #name, &weft_##fw##_##name##_component.base},
// The trailing sentinel keeps the array non-empty in dlopen builds, where
// the generated header has no entries.
const StaticComponent kStaticComponents[] = {
#include "repository/static_components.h"
    {nullptr, nullptr, nullptr},
};
#undef WEFT_STATIC_COMPONENT

constexpr std::string_view kPrefix = "weft_";
constexpr std::string_view kSuffix = ".so";

// A fixed-size name field of the ABI header as a string, without trusting
// the component to have terminated it.
std::string field(const char (&text)[WEFT_NAME_MAX])
{
    return std::string(text, strnlen(text, WEFT_NAME_MAX));
}

std::string hex64(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
    return buf;
}

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

// Splits the file name of `path`, "weft_<fw>_<name>.so", into fw and name.
// Framework names never contain '_', so the first '_' after the prefix ends
// the framework; the component name may not contain one either, because the
// symbol weft_<fw>_<name>_component would then be ambiguous. Returns an empty
// string on success, else why the name is not acceptable (fw/name are still
// filled as well as they could be, so the failure has a record to live in).
std::string split_file_name(const std::string &path, std::string &fw, std::string &name)
{
    const std::string file = std::filesystem::path(path).filename().string();
    fw.clear();
    name.clear();
    const std::string form =
        "file " + path + ": name does not have the form weft_<framework>_<component>.so";
    if (!std::string_view(file).starts_with(kPrefix) || !std::string_view(file).ends_with(kSuffix) ||
        file.size() <= kPrefix.size() + kSuffix.size())
        return form;
    std::string_view stem(file);
    stem = stem.substr(kPrefix.size(), stem.size() - kPrefix.size() - kSuffix.size());
    const size_t us = stem.find('_');
    fw = std::string(stem.substr(0, us));
    if (us == std::string_view::npos || us == 0)
        return form;
    name = std::string(stem.substr(us + 1));
    if (name.empty())
        return form;
    if (name.find('_') != std::string::npos)
        return "file " + path + ": component name " + in_quotes(name) +
               " contains '_' (the name must be weft_<framework>_<component>.so with no '_' "
               "in either part, so that the symbol weft_" + fw + "_<component>_component "
               "is unambiguous)";
    if (name.size() >= WEFT_NAME_MAX || fw.size() >= WEFT_NAME_MAX)
        return "file " + path + ": framework and component names are limited to " +
               std::to_string(WEFT_NAME_MAX - 1) + " characters (the size of the name "
               "fields of the component struct)";
    return {};
}

#ifdef WEFT_HAVE_DLOPEN
// libltdl keeps global state and is not thread-safe; every call into it goes
// through this mutex. lt_dlinit/lt_dlexit are reference-counted inside
// libltdl too (other libraries in the process, hwloc for one, may use it),
// so each Library holds one reference and the last one out shuts it down.
std::mutex &ltdl_mutex()
{
    static std::mutex m;
    return m;
}

std::string ltdl_error(const char *fallback)
{
    const char *e = lt_dlerror();
    return e ? e : fallback;
}
#endif

} // namespace

// ---- Library: one open component file -----------------------------------------

#ifdef WEFT_HAVE_DLOPEN
class Repository::Library {
public:
    // Opens `path`; on failure returns null and sets *error to the reason.
    static std::unique_ptr<Library> open(const std::string &path, std::string *error)
    {
        // Load once with plain dlopen(RTLD_NOW) first, for two reasons.
        // libltdl binds lazily (RTLD_LAZY) and so would accept a component
        // with an undefined *function* reference, which then kills the
        // process with "symbol lookup error" the first time it is called,
        // possibly in a component the user never selected. And when a load
        // fails, lt_dlerror() often says only "file not found" (it tries
        // several loaders and reports the last), while dlerror() names the
        // real problem: the missing dependency, the undefined symbol, the
        // wrong ELF class. Keeping this handle open until libltdl has
        // opened the file means libltdl gets the object we already fully
        // relocated; the extra reference is dropped right after.
        dlerror();
        void *probe = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!probe) {
            const char *e = dlerror();
            *error = e ? e : "dlopen failed without a reason";
            return nullptr;
        }

        std::lock_guard<std::mutex> lock(ltdl_mutex());
        std::unique_ptr<Library> lib;
        if (lt_dlinit() != 0) {
            *error = "cannot initialize libltdl: " + ltdl_error("unknown error");
            lt_dlexit();   // lt_dlinit counted this reference even though it failed
        } else {
            lt_dladvise advise;
            lt_dlhandle h = nullptr;
            if (lt_dladvise_init(&advise) == 0) {
                // Local: components must not see each other's symbols (or
                // satisfy each other's undefined ones). No lt_dladvise_ext:
                // we always pass the full file name, and trying ".la"/".so"
                // variants could pick up a different file than the one the
                // record names.
                lt_dladvise_local(&advise);
                h = lt_dlopenadvise(path.c_str(), advise);
                lt_dladvise_destroy(&advise);
            }
            if (h) {
                lib.reset(new Library(h));
            } else {
                *error = ltdl_error("libltdl could not open the file");
                lt_dlexit();
            }
        }
        dlclose(probe);
        return lib;
    }

    // A component that passed its checks stays mapped for the life of the
    // process (RTLD_NODELETE, set on the loaded object). A process loads its
    // components once, so unloading gains nothing; and the libraries they
    // pull in (libibverbs and its providers) keep thread-local state that
    // does not survive being unmapped and reloaded: LeakSanitizer's scan of
    // the threads' TLS crashed on it after many framework restarts in the
    // unit tests. Components that failed are still closed.
    static void keep_resident(const std::string &path)
    {
        if (void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE))
            dlclose(h);
    }

    ~Library()
    {
        std::lock_guard<std::mutex> lock(ltdl_mutex());
        lt_dlclose(handle_);
        lt_dlexit();
    }
    Library(const Library &) = delete;
    Library &operator=(const Library &) = delete;

    void *symbol(const std::string &name) const
    {
        std::lock_guard<std::mutex> lock(ltdl_mutex());
        return lt_dlsym(handle_, name.c_str());
    }
    void *handle() const { return handle_; }

private:
    explicit Library(lt_dlhandle h) : handle_(h) {}
    lt_dlhandle handle_;
};
#else
// --disable-dlopen: libltdl is not linked; nothing is ever opened.
class Repository::Library {};
#endif

// ---- Repository -----------------------------------------------------------------

Repository::Repository() = default;

Repository::~Repository()
{
    // Records point into the libraries: drop them first, then close the
    // libraries in reverse order of opening (a later component may have
    // been loaded while an earlier one was resident; unwinding in reverse
    // is the conventional safe order).
    records_.clear();
    while (!libraries_.empty())
        libraries_.pop_back();
}

size_t Repository::minimum_struct_size(std::string_view framework)
{
    // The size of the framework struct as ABI 1.0 defined it: the end of
    // its last 1.0 member. Written this way rather than sizeof() so that
    // members added later (which older components do not have) do not raise
    // the minimum and reject components that are still compatible.
    if (framework == WEFT_BTL_FRAMEWORK)
        return offsetof(weft_btl_component_t, start_connect) +
               sizeof(weft_btl_component_t::start_connect);
    return sizeof(weft_component_t);
}

ComponentRecord &Repository::add_record(std::string framework, std::string name, std::string path)
{
    auto rec = std::make_unique<ComponentRecord>();
    rec->framework = std::move(framework);
    rec->name = std::move(name);
    rec->path = std::move(path);
    records_.push_back(std::move(rec));
    return *records_.back();
}

bool Repository::check_header(ComponentRecord &rec, const weft_component_t *c)
{
    const std::string what = rec.path == "(static)"
                                 ? "static component " + rec.framework + "/" + rec.name
                                 : "file " + rec.path;
    if (c->magic != WEFT_COMPONENT_MAGIC) {
        rec.failure = what + ": bad component magic: expected " + hex64(WEFT_COMPONENT_MAGIC) +
                      " (\"WEFTCOMP\"), found " + hex64(c->magic) +
                      " (not a weft component, or a corrupt or foreign file)";
        return false;
    }
    if (c->abi_major != WEFT_COMPONENT_ABI_MAJOR) {
        rec.failure = what + ": component ABI version mismatch: expected major " +
                      std::to_string(WEFT_COMPONENT_ABI_MAJOR) + " (this weft has ABI " +
                      std::to_string(WEFT_COMPONENT_ABI_MAJOR) + "." +
                      std::to_string(WEFT_COMPONENT_ABI_MINOR) + "), found " +
                      std::to_string(c->abi_major) + "." + std::to_string(c->abi_minor) +
                      "; rebuild the component against this weft";
        return false;
    }
    const size_t min_size = minimum_struct_size(rec.framework);
    if (c->struct_size < min_size) {
        rec.failure = what + ": component struct too small for framework " + rec.framework +
                      ": expected struct_size >= " + std::to_string(min_size) + ", found " +
                      std::to_string(c->struct_size) +
                      " (built against a different " + rec.framework + " header?)";
        return false;
    }
    const std::string fw = field(c->framework);
    if (fw != rec.framework) {
        rec.failure = what + ": framework mismatch: expected " + in_quotes(rec.framework) +
                      " (from the file name), found " + in_quotes(fw) + " in the component struct";
        return false;
    }
    const std::string name = field(c->name);
    if (name != rec.name) {
        rec.failure = what + ": component name mismatch: expected " + in_quotes(rec.name) +
                      " (from the file name), found " + in_quotes(name) + " in the component struct";
        return false;
    }
    // A different minor is compatible by the growth rules (readers check
    // sizes before touching newer members); worth a debug line only.
    if (c->abi_minor != WEFT_COMPONENT_ABI_MINOR)
        rec.notes.push_back(what + ": built for component ABI " + std::to_string(c->abi_major) +
                            "." + std::to_string(c->abi_minor) + ", this weft has " +
                            std::to_string(WEFT_COMPONENT_ABI_MAJOR) + "." +
                            std::to_string(WEFT_COMPONENT_ABI_MINOR) +
                            " (minor versions are compatible)");
    return true;
}

ComponentRecord &Repository::load(const std::string &path, std::string framework, std::string name)
{
    ComponentRecord &rec = add_record(std::move(framework), std::move(name), path);
#ifdef WEFT_HAVE_DLOPEN
    std::string error;
    std::unique_ptr<Library> lib = Library::open(path, &error);
    if (!lib) {
        rec.failure = "cannot load file " + path + ": " + error;
        return rec;
    }
    const std::string symbol = "weft_" + rec.framework + "_" + rec.name + "_component";
    const auto *c = static_cast<const weft_component_t *>(lib->symbol(symbol));
    if (!c) {
        rec.failure = "file " + path + " does not export symbol " + symbol +
                      " (not a weft component, or built for another name)";
        return rec;   // lib goes out of scope: handle closed
    }
    if (!check_header(rec, c))
        return rec;
    rec.component = c;
    rec.loaded = true;
    rec.handle = lib->handle();
    Library::keep_resident(path);
    libraries_.push_back(std::move(lib));
#else
    rec.failure = "cannot load file " + path +
                  ": this weft was configured with --disable-dlopen, so components are linked "
                  "into libweft and component files are not loaded (rebuild without "
                  "--disable-dlopen to use them)";
#endif
    return rec;
}

ComponentRecord &Repository::load_file(const std::string &path)
{
    std::string fw, name;
    std::string bad = split_file_name(path, fw, name);
    if (!bad.empty()) {
        ComponentRecord &rec = add_record(fw, name, path);
        rec.failure = bad;
        return rec;
    }
    if (ComponentRecord *existing = find(fw, name)) {
        existing->notes.push_back("ignored " + path + ": " + fw + "/" + name +
                                  " already provided by " + existing->path +
                                  " (the first in the component path wins)");
        return *existing;
    }
    return load(path, std::move(fw), std::move(name));
}

void Repository::discover(const std::vector<std::string> &dirs,
                          const std::vector<std::string> &frameworks)
{
    namespace fs = std::filesystem;
    for (const auto &dir : dirs) {
        if (dir.empty())
            continue;
        std::error_code ec;
        fs::directory_iterator it(dir, ec);
        if (ec)
            continue;   // missing or unreadable directory: skipped silently
        std::vector<std::string> files;
        for (const auto &entry : it) {
            std::error_code dec;
            const std::string file = entry.path().filename().string();
            if (!file.starts_with(kPrefix) || !file.ends_with(kSuffix) || entry.is_directory(dec))
                continue;
            files.push_back(file);
        }
        // Directory order is arbitrary; sorted order makes records (and
        // weft_info output) reproducible.
        std::sort(files.begin(), files.end());

        for (const auto &file : files) {
            const std::string path = (fs::path(dir) / file).string();
            std::string fw, name;
            std::string bad = split_file_name(path, fw, name);
            if (bad.empty() && !frameworks.empty() &&
                std::find(frameworks.begin(), frameworks.end(), fw) == frameworks.end())
                bad = "file " + path + ": unknown framework " + in_quotes(fw) +
                      " (this weft knows: " + join(frameworks, ", ") + ")";
            if (ComponentRecord *existing = find(fw, name); existing && !name.empty()) {
                existing->notes.push_back("ignored " + path + ": " + fw + "/" + name +
                                          " already provided by " + existing->path +
                                          " (the first in the component path wins)");
                continue;
            }
            if (!bad.empty()) {
                // Not loaded at all: running the constructors of a file we
                // will not use is a risk with no benefit.
                ComponentRecord &rec = add_record(fw, name, path);
                rec.failure = bad;
                continue;
            }
            load(path, std::move(fw), std::move(name));
        }
    }
}

void Repository::add_static()
{
    for (const StaticComponent *s = kStaticComponents; s->framework; ++s) {
        if (ComponentRecord *existing = find(s->framework, s->name)) {
            existing->notes.push_back(std::string("ignored the static copy of ") + s->framework +
                                      "/" + s->name + ": already provided by " + existing->path);
            continue;
        }
        ComponentRecord &rec = add_record(s->framework, s->name, "(static)");
        if (!check_header(rec, s->component))
            continue;
        rec.component = s->component;
        rec.loaded = true;
    }
}

std::vector<ComponentRecord *> Repository::records()
{
    std::vector<ComponentRecord *> out;
    out.reserve(records_.size());
    for (auto &r : records_)
        out.push_back(r.get());
    return out;
}

std::vector<ComponentRecord *> Repository::records(std::string_view framework)
{
    std::vector<ComponentRecord *> out;
    for (auto &r : records_)
        if (r->framework == framework)
            out.push_back(r.get());
    return out;
}

ComponentRecord *Repository::find(std::string_view framework, std::string_view name)
{
    for (auto &r : records_)
        if (r->framework == framework && r->name == name)
            return r.get();
    return nullptr;
}

void Repository::open_all(std::string_view framework, const weft_host_t *host)
{
    for (auto &r : records_) {
        // "Once": a record that was opened, or whose open failed, is left
        // alone; open() registers parameters and must not run twice.
        if (r->framework != framework || !r->loaded || r->opened || !r->failure.empty())
            continue;
        if (!r->component->open) {
            r->opened = true;   // nothing to register
            continue;
        }
        int rc;
        try {
            rc = r->component->open(host);
        } catch (...) {
            // A C++ component let an exception escape a C entry point; do
            // not let it escape ours.
            r->failure = "open() failed: threw a C++ exception (entry points must return a status)";
            continue;
        }
        if (rc != WEFT_SUCCESS) {
            r->failure = std::string("open() failed: ") + weft_status_string(rc);
            continue;
        }
        r->opened = true;
    }
}

void Repository::query_all(std::string_view framework, const weft_host_t *host)
{
    for (auto &r : records_) {
        if (r->framework != framework || !r->opened || r->queried)
            continue;
        weft_query_result_t q{};
        q.size = sizeof q;
        int rc = WEFT_SUCCESS;
        if (!r->component->query) {
            rc = WEFT_ERR_NOT_SUPPORTED;
            std::snprintf(q.reason, sizeof q.reason, "the component has no query()");
        } else {
            try {
                rc = r->component->query(host, &q);
            } catch (...) {
                rc = WEFT_ERROR;
                std::snprintf(q.reason, sizeof q.reason,
                              "query() threw a C++ exception (entry points must return a status)");
            }
        }
        q.size = sizeof q;                    // ours, whatever the component wrote
        q.reason[sizeof q.reason - 1] = '\0'; // never trust a component to terminate it
        if (rc != WEFT_SUCCESS) {
            // A failing query means "cannot run here"; keep the component's
            // own words when it gave some.
            std::string why = std::string("query() failed: ") + weft_status_string(rc);
            if (q.reason[0])
                why += std::string(" (") + q.reason + ")";
            q.available = 0;
            std::snprintf(q.reason, sizeof q.reason, "%s", why.c_str());
        }
        r->query = q;
        r->queried = true;
    }
}

} // namespace weft::repository
