// --tag-output: ranks write into pipes; weftrun reads them and writes whole
// lines prefixed "[1,R]<stdout>:" / "[1,R]<stderr>:" (Open MPI's format), so
// lines of different ranks never interleave mid-line.
#pragma once

#include <poll.h>

#include <string>
#include <vector>

#include "core/status.hpp"

namespace weftrun {

class OutputForwarder {
public:
    OutputForwarder() = default;
    ~OutputForwarder();
    OutputForwarder(const OutputForwarder &) = delete;
    OutputForwarder &operator=(const OutputForwarder &) = delete;

    // Creates the pipes of one rank; the write ends are for the child and
    // must be closed in the parent after fork (close_child_ends).
    weft::Status add_rank(int rank, int &child_out, int &child_err);
    void close_child_ends(int child_out, int child_err);

    // Appends a pollfd for each open read end.
    void add_pollfds(std::vector<pollfd> &fds) const;
    // Reads whatever is ready on the fds that poll marked.
    void handle(const std::vector<pollfd> &fds);
    bool all_closed() const;
    // Writes out partial lines of every stream (at the end of the job).
    void flush_partial();

private:
    struct Stream {
        int rank;
        bool is_err;
        int fd;
        std::string pending;   // bytes after the last newline
    };
    void read_stream(Stream &s);
    void emit(Stream &s, const char *data, size_t len);
    std::vector<Stream> streams_;
};

} // namespace weftrun
