// SPDX-License-Identifier: BSD-3-Clause
// The failed-peers note weft_abort appends to its PMIx_Abort message and
// weftrun reads back (runtime/rte/abort_note.hpp): what one side writes the
// other must read, and a message that merely looks alike must name nobody.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rte/abort_note.hpp"

using weft::rt::failed_peers_note;
using weft::rt::parse_failed_peers;

TEST(AbortNote, RoundTrips)
{
    const std::vector<uint32_t> ranks{0, 3, 17};
    const std::string msg = "MPI_Barrier: receive from rank 0 failed (MPI_ERR_PROC_FAILED)" + failed_peers_note(ranks);
    EXPECT_EQ(msg.substr(msg.size() - 23), " [failed peers: 0,3,17]");
    EXPECT_EQ(parse_failed_peers(msg), ranks);
}

TEST(AbortNote, NoFailedPeersNoNote)
{
    EXPECT_EQ(failed_peers_note({}), "");
    EXPECT_TRUE(parse_failed_peers("MPI_Abort(3) called on MPI_COMM_WORLD by rank 0").empty());
}

TEST(AbortNote, ANoteNotAtTheEndOrMalformedNamesNobody)
{
    EXPECT_TRUE(parse_failed_peers("x [failed peers: 1] and more").empty());
    EXPECT_TRUE(parse_failed_peers("x [failed peers: ]").empty());
    EXPECT_TRUE(parse_failed_peers("x [failed peers: 1,,2]").empty());
    EXPECT_TRUE(parse_failed_peers("x [failed peers: one]").empty());
    EXPECT_TRUE(parse_failed_peers("x [failed peers: 99999999999]").empty());
    EXPECT_TRUE(parse_failed_peers("[failed peers: 1").empty());
}
