// SPDX-License-Identifier: BSD-3-Clause
// Info objects (MPI_Info_*): ordered (key, value) string pairs, handles
// into a table; MPI_INFO_ENV, what the program was started with; and the
// hints a communicator keeps (MPI_Comm_set_info / MPI_Comm_get_info).
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

struct Info {
    InfoPairs pairs;   // in the order they were first set
};
// Handles from 2: 0 is MPI_INFO_NULL, 1 MPI_INFO_ENV.
Table<Info> g_infos(MPI_INFO_ENV + 1);
Info g_env;
bool g_env_filled = false;

// MPI_INFO_ENV: the keys MPI-3.1 §10.3 lists that weft knows.
void fill_env()
{
    if (g_env_filled)
        return;
    g_env_filled = true;
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    for (size_t at = 0; at < all.size();) {
        const size_t end = all.find('\0', at);
        args.push_back(all.substr(at, end == std::string::npos ? std::string::npos : end - at));
        at = end == std::string::npos ? all.size() : end + 1;
    }
    if (!args.empty()) {
        g_env.pairs.emplace_back("command", args[0]);
        std::string rest;
        for (size_t i = 1; i < args.size(); ++i)
            rest += (i > 1 ? " " : "") + args[i];
        g_env.pairs.emplace_back("argv", rest);
    }
    g_env.pairs.emplace_back("maxprocs", std::to_string(weft_size() > 0 ? weft_size() : 1));
    char host[256] = {0};
    if (gethostname(host, sizeof host - 1) == 0)
        g_env.pairs.emplace_back("host", host);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd))
        g_env.pairs.emplace_back("wdir", cwd);
    int level = MPI_THREAD_SINGLE;
    if (initialized())
        PMPI_Query_thread(&level);
    static const char *const names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                        "MPI_THREAD_MULTIPLE"};
    g_env.pairs.emplace_back("thread_level", names[level]);
}

Info *find(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        fill_env();
        return &g_env;
    }
    return g_infos.get(h);
}

int bad_info(const char *fn, MPI_Info h)
{
    return raise(nullptr, MPI_ERR_INFO, fn,
                 h == MPI_INFO_NULL ? std::string("the info is MPI_INFO_NULL")
                                    : "info " + std::to_string(h) + " is not valid (freed already?)");
}

// A key must be 1 .. MPI_MAX_INFO_KEY-1 characters (MPI_ERR_INFO_KEY).
int check_key(const char *fn, const char *key)
{
    if (!key)
        return raise(nullptr, MPI_ERR_ARG, fn, "key is NULL");
    const size_t n = std::strlen(key);
    if (n == 0 || n >= MPI_MAX_INFO_KEY)
        return raise(nullptr, MPI_ERR_INFO_KEY, fn,
                     "key \"" + std::string(key, std::min<size_t>(n, 40)) + (n > 40 ? "...\"" : "\"") + " has " +
                         std::to_string(n) + " characters; keys have 1 to " + std::to_string(MPI_MAX_INFO_KEY - 1));
    return MPI_SUCCESS;
}

InfoPairs::iterator lookup(Info &i, const char *key)
{
    return std::find_if(i.pairs.begin(), i.pairs.end(), [&](const auto &kv) { return kv.first == key; });
}

} // namespace

const InfoPairs *info_pairs(MPI_Info h)
{
    const Info *i = find(h);
    return i ? &i->pairs : nullptr;
}

MPI_Info make_info(InfoPairs pairs)
{
    auto i = std::make_unique<Info>();
    i->pairs = std::move(pairs);
    return g_infos.add(std::move(i));
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Info_create)
int PMPI_Info_create(MPI_Info *info)
{
    MPI_THREAD_GUARD;
    if (!info)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
    *info = make_info({});
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_set)
int PMPI_Info_set(MPI_Info h, const char *key, const char *value)
{
    MPI_THREAD_GUARD;
    Info *i = find(h);
    if (!i || h == MPI_INFO_ENV)
        return h == MPI_INFO_ENV ? raise(nullptr, MPI_ERR_INFO, "MPI_Info_set", "MPI_INFO_ENV is read-only")
                                 : bad_info("MPI_Info_set", h);
    if (int rc = check_key("MPI_Info_set", key))
        return rc;
    if (!value)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_set", "value is NULL");
    const size_t n = std::strlen(value);
    if (n == 0 || n >= MPI_MAX_INFO_VAL)
        return raise(nullptr, MPI_ERR_INFO_VALUE, "MPI_Info_set",
                     "the value of \"" + std::string(key) + "\" has " + std::to_string(n) +
                         " characters; values have 1 to " + std::to_string(MPI_MAX_INFO_VAL - 1));
    if (auto it = lookup(*i, key); it != i->pairs.end())
        it->second = value;
    else
        i->pairs.emplace_back(key, value);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_delete)
int PMPI_Info_delete(MPI_Info h, const char *key)
{
    MPI_THREAD_GUARD;
    Info *i = find(h);
    if (!i || h == MPI_INFO_ENV)
        return h == MPI_INFO_ENV ? raise(nullptr, MPI_ERR_INFO, "MPI_Info_delete", "MPI_INFO_ENV is read-only")
                                 : bad_info("MPI_Info_delete", h);
    if (int rc = check_key("MPI_Info_delete", key))
        return rc;
    auto it = lookup(*i, key);
    if (it == i->pairs.end())
        return raise(nullptr, MPI_ERR_INFO_NOKEY, "MPI_Info_delete",
                     "key \"" + std::string(key) + "\" is not set in info " + std::to_string(h));
    i->pairs.erase(it);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_get)
int PMPI_Info_get(MPI_Info h, const char *key, int valuelen, char *value, int *flag)
{
    MPI_THREAD_GUARD;
    Info *i = find(h);
    if (!i)
        return bad_info("MPI_Info_get", h);
    if (int rc = check_key("MPI_Info_get", key))
        return rc;
    if (!flag || valuelen < 0 || (valuelen > 0 && !value))
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_get", "flag is NULL, valuelen negative or value NULL");
    auto it = lookup(*i, key);
    *flag = it != i->pairs.end();
    if (*flag) {   // at most valuelen characters, then the NUL (value has valuelen + 1 bytes)
        const size_t n = std::min(it->second.size(), static_cast<size_t>(valuelen));
        std::memcpy(value, it->second.data(), n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_get_valuelen)
int PMPI_Info_get_valuelen(MPI_Info h, const char *key, int *valuelen, int *flag)
{
    MPI_THREAD_GUARD;
    Info *i = find(h);
    if (!i)
        return bad_info("MPI_Info_get_valuelen", h);
    if (int rc = check_key("MPI_Info_get_valuelen", key))
        return rc;
    if (!valuelen || !flag)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_get_valuelen", "valuelen and flag must not be NULL");
    auto it = lookup(*i, key);
    *flag = it != i->pairs.end();
    if (*flag)
        *valuelen = static_cast<int>(it->second.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_get_string)
int PMPI_Info_get_string(MPI_Info h, const char *key, int *buflen, char *value, int *flag)
{
    MPI_THREAD_GUARD;
    Info *i = find(h);
    if (!i)
        return bad_info("MPI_Info_get_string", h);
    if (int rc = check_key("MPI_Info_get_string", key))
        return rc;
    if (!buflen || !flag || *buflen < 0 || (*buflen > 0 && !value))
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_get_string",
                     "buflen and flag must not be NULL, *buflen not negative, value not NULL when *buflen > 0");
    auto it = lookup(*i, key);
    *flag = it != i->pairs.end();
    if (!*flag)
        return MPI_SUCCESS;
    // MPI-4: copies at most *buflen bytes, NUL included; *buflen becomes
    // the value's length plus one.
    const size_t room = static_cast<size_t>(*buflen);
    if (room > 0) {
        const size_t n = std::min(it->second.size(), room - 1);
        std::memcpy(value, it->second.data(), n);
        value[n] = '\0';
    }
    *buflen = static_cast<int>(it->second.size()) + 1;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_get_nkeys)
int PMPI_Info_get_nkeys(MPI_Info h, int *nkeys)
{
    MPI_THREAD_GUARD;
    Info *i = find(h);
    if (!i)
        return bad_info("MPI_Info_get_nkeys", h);
    if (!nkeys)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys is NULL");
    *nkeys = static_cast<int>(i->pairs.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_get_nthkey)
int PMPI_Info_get_nthkey(MPI_Info h, int n, char *key)
{
    MPI_THREAD_GUARD;
    Info *i = find(h);
    if (!i)
        return bad_info("MPI_Info_get_nthkey", h);
    if (!key)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_get_nthkey", "key is NULL");
    if (n < 0 || static_cast<size_t>(n) >= i->pairs.size())
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_get_nthkey",
                     "n = " + std::to_string(n) + " but the info has " + std::to_string(i->pairs.size()) +
                         " keys (0 .. nkeys-1)");
    const std::string &k = i->pairs[static_cast<size_t>(n)].first;
    std::memcpy(key, k.c_str(), k.size() + 1);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_dup)
int PMPI_Info_dup(MPI_Info h, MPI_Info *newinfo)
{
    MPI_THREAD_GUARD;
    Info *i = find(h);
    if (!i)
        return bad_info("MPI_Info_dup", h);
    if (!newinfo)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_dup", "newinfo is NULL");
    *newinfo = make_info(i->pairs);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Info_free)
int PMPI_Info_free(MPI_Info *h)
{
    MPI_THREAD_GUARD;
    if (!h)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_free", "info is NULL");
    if (*h == MPI_INFO_ENV)
        return raise(nullptr, MPI_ERR_INFO, "MPI_Info_free", "MPI_INFO_ENV is predefined and cannot be freed");
    if (!g_infos.get(*h))
        return bad_info("MPI_Info_free", *h);
    g_infos.remove(*h);
    *h = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_set_info)
int PMPI_Comm_set_info(MPI_Comm h, MPI_Info info)
{
    MPI_THREAD_GUARD;
    Comm *c = comm(h);
    if (!c)
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_set_info", "communicator " + std::to_string(h) + " is not valid");
    const InfoPairs *pairs = info_pairs(info);
    if (!pairs)
        return bad_info("MPI_Comm_set_info", info);
    // weft acts on no communicator hint yet: it keeps them for
    // MPI_Comm_get_info, the last value of each key winning.
    for (const auto &[k, v] : *pairs) {
        auto it = std::find_if(c->info.begin(), c->info.end(), [&](const auto &kv) { return kv.first == k; });
        if (it != c->info.end())
            it->second = v;
        else
            c->info.emplace_back(k, v);
    }
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_get_info)
int PMPI_Comm_get_info(MPI_Comm h, MPI_Info *info)
{
    MPI_THREAD_GUARD;
    Comm *c = comm(h);
    if (!c)
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_get_info", "communicator " + std::to_string(h) + " is not valid");
    if (!info)
        return raise(c, MPI_ERR_ARG, "MPI_Comm_get_info", "info is NULL");
    *info = make_info(c->info);
    return MPI_SUCCESS;
}

} // extern "C"
