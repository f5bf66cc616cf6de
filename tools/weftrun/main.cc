// SPDX-License-Identifier: BSD-3-Clause
// weftrun: the job launcher of weft. Parses the command line, checks the
// program, then hands over to Launcher, which never returns.
#include <unistd.h>

#include <cstdio>
#include <string>

#include <pmix.h>

#include "weft_config.h"
#include "weftrun/launcher.hpp"
#include "weftrun/options.hpp"
#include "weftrun/spawn.hpp"

int main(int argc, char **argv)
{
    auto parsed = weftrun::parse_options(argc, argv);
    if (!parsed.ok()) {
        std::fprintf(stderr, "weftrun: %s\n", parsed.status().message().c_str());
        return 2;
    }
    weftrun::Options &o = parsed.value();
    if (o.help) {
        std::fputs(weftrun::usage().c_str(), stdout);
        return 0;
    }
    if (o.version) {
        std::printf("weftrun (weft) %s\nPMIx %s\n", PACKAGE_VERSION, PMIx_Get_version());
        return 0;
    }
    // Before any session dir or PMIx server exists: a typo costs nothing.
    auto prog = weftrun::resolve_program(o.argv[0]);
    if (!prog.ok()) {
        // "--mca btl prog 2000": the VALUE was forgotten, so the program
        // became the value. Name the real mistake, not "cannot run '2000'".
        if (o.mca_value_before_program) {
            const auto &[name, value] = o.mca[*o.mca_value_before_program];
            if (weftrun::resolve_program(value).ok()) {
                std::fprintf(stderr,
                             "weftrun: --mca %s: the value '%s' is a program; --mca takes a name "
                             "and a value (--mca %s VALUE %s ...)\n",
                             name.c_str(), value.c_str(), name.c_str(), value.c_str());
                return 2;
            }
        }
        std::fprintf(stderr, "weftrun: %s\n", prog.status().message().c_str());
        return prog.status().code() == WEFT_ERR_NOT_FOUND ? 127 : 126;
    }
    std::fflush(stdout);
    weftrun::Launcher(std::move(o), prog.value()).run();
}
