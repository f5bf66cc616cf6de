// SPDX-License-Identifier: BSD-3-Clause
// --tag-output: ranks write into pipes; weftrun reads them and writes whole
// lines prefixed "[1,R]<stdout>:" / "[1,R]<stderr>:" (Open MPI's format), so
// lines of different ranks never interleave mid-line. When weftrun's stdout
// is a terminal, each rank's stdout is a pseudo-terminal instead of a pipe:
// stdio then line-buffers it as it would on the terminal itself, as under
// Open MPI (without --tag-output ranks write to weftrun's terminal directly).
#pragma once

#include <poll.h>

#include <string>
#include <vector>

#include "core/status.hpp"

namespace weftrun {

class OutputForwarder {
public:
    // stdout_pty: give each rank's stdout a pseudo-terminal (a pipe where
    // none can be had).
    explicit OutputForwarder(bool stdout_pty) : pty_(stdout_pty) {}
    ~OutputForwarder();
    OutputForwarder(const OutputForwarder &) = delete;
    OutputForwarder &operator=(const OutputForwarder &) = delete;

    // Creates the stdout and stderr channels of one rank; the child ends
    // must be closed in the parent after fork (close_child_ends).
    weft::Status add_rank(int rank, int &child_out, int &child_err);
    void close_child_ends(int child_out, int child_err);

    // Appends a pollfd for each open read end.
    void add_pollfds(std::vector<pollfd> &fds) const;
    // Reads whatever is ready on the fds that poll marked.
    void handle(const std::vector<pollfd> &fds);
    bool all_closed() const;
    // Reads what every open stream holds now, without waiting (at the end
    // of the job: what ranks wrote before they died).
    void drain();
    // Writes out partial lines of every stream (at the end of the job).
    void flush_partial();

private:
    struct Stream {
        int rank;
        bool is_err;
        int fd;
        std::string pending;   // bytes after the last newline
    };
    weft::Result<int> open_pty(int rank, int &child);
    void read_stream(Stream &s);
    void emit(Stream &s, const char *data, size_t len);
    bool pty_;
    bool pty_warned_ = false;
    std::vector<Stream> streams_;
};

} // namespace weftrun
