// SPDX-License-Identifier: BSD-3-Clause
// The MPI environment: MPI_Init / MPI_Finalize around weft_init /
// weft_finalize, the predefined communicators, threads, time, names.
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "weft_config.h"
#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

enum class Phase { Before, Running, Finalized } g_phase = Phase::Before;
int g_thread_level = MPI_THREAD_SINGLE;
pthread_t g_main_thread;

int start(int *argc, char ***argv, const char *fn)
{
    if (g_phase != Phase::Before)
        return raise(nullptr, MPI_ERR_OTHER, fn,
                     g_phase == Phase::Running ? "MPI is already initialized" : "MPI was finalized and cannot restart");
    if (int rc = weft_init(argc, argv); rc != WEFT_SUCCESS)
        return raise(nullptr, class_of(rc) == MPI_ERR_ARG ? MPI_ERR_OTHER : class_of(rc), fn,
                     "weft_init failed: " + weft_why(rc));
    const int size = weft_size();
    std::vector<uint32_t> world(static_cast<size_t>(size));
    for (int i = 0; i < size; ++i)
        world[i] = static_cast<uint32_t>(i);
    // Contexts: world and self have fixed ones; the rest are agreed on.
    make_comm(std::move(world), WEFT_CONTEXT_FIRST_FREE, nullptr, "MPI_COMM_WORLD");
    make_comm({static_cast<uint32_t>(weft_rank())}, WEFT_CONTEXT_FIRST_FREE + 2, nullptr, "MPI_COMM_SELF");
    g_main_thread = pthread_self();
    g_phase = Phase::Running;
    return MPI_SUCCESS;
}

} // namespace

bool initialized() { return g_phase == Phase::Running; }

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Init)
int PMPI_Init(int *argc, char ***argv)
{
    g_thread_level = MPI_THREAD_SINGLE;
    return start(argc, argv, "MPI_Init");
}

WEFT_MPI_WEAK(Init_thread)
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Init_thread", "provided is NULL");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Init_thread",
                     "required level " + std::to_string(required) + " is not an MPI_THREAD_* level");
    // Every level: MULTIPLE puts the MPI layer under one lock (threads.cc).
    g_thread_level = required;
    *provided = g_thread_level;
    const int rc = start(argc, argv, "MPI_Init_thread");
    if (rc == MPI_SUCCESS && required == MPI_THREAD_MULTIPLE)
        enable_thread_multiple();
    return rc;
}

WEFT_MPI_WEAK(Initialized)
int PMPI_Initialized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = g_phase != Phase::Before;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Finalized)
int PMPI_Finalized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = g_phase == Phase::Finalized;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Finalize)
int PMPI_Finalize(void)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Finalize");
    attrs_at_finalize();
    windows_finalize();
    // Buffered sends still on their way go out first (MPI_Buffer_detach
    // waits for them), then every rank leaves together.
    void *b;
    int n;
    PMPI_Buffer_detach(&b, &n);
    int rc = weft_barrier();
    comms_finalize();
    g_phase = Phase::Finalized;
    const int frc = weft_finalize();
    if (rc != WEFT_SUCCESS || frc != WEFT_SUCCESS) {
        const int bad = rc != WEFT_SUCCESS ? rc : frc;
        std::fprintf(stderr, "weft MPI: MPI_Finalize: %s\n", weft_why(bad).c_str());
        return class_of(bad) == MPI_SUCCESS ? MPI_ERR_OTHER : class_of(bad);
    }
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Abort)
int PMPI_Abort(MPI_Comm c, int errorcode)
{
    MPI_THREAD_GUARD;
    std::string msg = "MPI_Abort(" + std::to_string(errorcode) + ") called";
    if (Comm *p = comm(c))
        msg += " on " + (p->name.empty() ? "a communicator" : p->name);
    msg += " by rank " + std::to_string(weft_rank() < 0 ? 0 : weft_rank());
    std::fprintf(stderr, "weft MPI: %s\n", msg.c_str());
    std::fflush(stderr);
    weft_abort(errorcode ? errorcode : 1, msg.c_str());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Wtime)
double PMPI_Wtime(void)
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

WEFT_MPI_WEAK(Wtick)
double PMPI_Wtick(void)
{
    timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    const double t = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    return t > 0 ? t : 1e-9;
}

WEFT_MPI_WEAK(Get_processor_name)
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Get_processor_name", "name and resultlen must not be NULL");
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    if (gethostname(host, sizeof host - 1) != 0)
        std::strcpy(host, "localhost");
    std::memcpy(name, host, std::strlen(host) + 1);
    *resultlen = static_cast<int>(std::strlen(host));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Get_version)
int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Get_library_version)
int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return MPI_ERR_ARG;
    const std::string s = std::string("weft MPI subset ") + PACKAGE_VERSION + " (MPI " +
                          std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION) + " subset)";
    std::memcpy(version, s.c_str(), s.size() + 1);
    *resultlen = static_cast<int>(s.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Query_thread)
int PMPI_Query_thread(int *provided)
{
    MPI_NEED_INIT("MPI_Query_thread");
    if (!provided)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
    *provided = g_thread_level;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Is_thread_main)
int PMPI_Is_thread_main(int *flag)
{
    MPI_NEED_INIT("MPI_Is_thread_main");
    if (!flag)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Is_thread_main", "flag is NULL");
    *flag = pthread_equal(pthread_self(), g_main_thread) != 0;
    return MPI_SUCCESS;
}

} // extern "C"
