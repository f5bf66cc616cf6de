// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by the unit tests.
#pragma once

#include <string>
#include <vector>

namespace weft::test {

// A fresh private directory under $TMPDIR, removed with everything in it
// when the object goes away.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }
    // Writes a file below the directory and returns its path.
    std::string write(const std::string &name, const std::string &content) const;

private:
    std::string path_;
};

// Source tree data directory (tests/data).
std::string data_dir();

} // namespace weft::test
