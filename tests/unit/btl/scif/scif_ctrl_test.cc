// SPDX-License-Identifier: BSD-3-Clause
// btl/scif's control-message parser (scif_ctrl.hpp) on hostile input: every
// truncated, oversized, mis-versioned or out-of-range message is rejected
// with an errno, and the parser reads only the bytes it was given (each
// input is an exact-size heap buffer, so ASan sees a read past it).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "scif_ctrl.hpp"

using namespace weft::scif;

namespace {

std::vector<std::byte> encode(const CtrlMsg &m)
{
    std::byte buf[kCtrlMax];
    const size_t n = encode_ctrl(m, std::span<std::byte, kCtrlMax>(buf, kCtrlMax));
    return {buf, buf + n};
}

int parse(const std::vector<std::byte> &bytes, CtrlMsg *out = nullptr)
{
    CtrlMsg scratch;
    // Exact-size copy: nothing after the message is addressable.
    std::vector<std::byte> exact(bytes);
    exact.shrink_to_fit();
    return parse_ctrl(std::span<const std::byte>(exact.data(), exact.size()), out ? out : &scratch);
}

// One valid message of each type.
std::vector<CtrlMsg> valid_messages()
{
    std::vector<CtrlMsg> v;
    CtrlMsg m{};
    m.type = CtrlType::connect_req;
    m.u.req = {1100, kCtrlNeedBounce, 1024, 0x7000, 42};
    v.push_back(m);
    m = {};
    m.type = CtrlType::connect_ack;
    m.u.ack = {1200, 0, 0, 0x7000, 43};
    v.push_back(m);
    m = {};
    m.type = CtrlType::wake;
    v.push_back(m);
    m = {};
    m.type = CtrlType::win_reg;
    m.u.reg = {0x10000, 8192, 0x7f0000000000, 3, 0};
    v.push_back(m);
    m = {};
    m.type = CtrlType::win_unreg;
    m.u.unreg = {0x10000, 8192};
    v.push_back(m);
    m = {};
    m.type = CtrlType::rma_req;
    m.u.rma = {7, 0x10000, kBounceSlotBytes, kBounceSlots - 1, static_cast<uint8_t>(RmaOp::write), 0};
    v.push_back(m);
    m = {};
    m.type = CtrlType::rma_reply;
    m.u.reply = {7, ENXIO, 0};
    v.push_back(m);
    return v;
}

TEST(ScifCtrl, ValidMessagesRoundTrip)
{
    for (const CtrlMsg &m : valid_messages()) {
        auto bytes = encode(m);
        CtrlMsg got;
        ASSERT_EQ(parse(bytes, &got), 0) << "type " << static_cast<int>(m.type);
        EXPECT_EQ(got.type, m.type);
        EXPECT_EQ(encode(got), bytes);
    }
}

TEST(ScifCtrl, EveryTruncationAndExtensionIsRejected)
{
    for (const CtrlMsg &m : valid_messages()) {
        const auto bytes = encode(m);
        for (size_t n = 0; n < bytes.size(); ++n)
            EXPECT_EQ(parse({bytes.begin(), bytes.begin() + static_cast<long>(n)}), EPROTO)
                << "type " << static_cast<int>(m.type) << " cut to " << n;
        auto longer = bytes;
        longer.push_back(std::byte{0});
        EXPECT_EQ(parse(longer), EPROTO) << "one byte too many";
        longer.resize(4096, std::byte{0xff});
        EXPECT_EQ(parse(longer), EPROTO) << "a huge message";
    }
}

TEST(ScifCtrl, BadMagicVersionAndTypeAreRejected)
{
    auto bytes = encode(valid_messages()[0]);
    auto bad = bytes;
    bad[0] ^= std::byte{1};
    EXPECT_EQ(parse(bad), EPROTO) << "magic";
    for (uint16_t v : {uint16_t{0}, uint16_t{2}, uint16_t{0xffff}}) {
        bad = bytes;
        std::memcpy(bad.data() + 4, &v, sizeof v);
        EXPECT_EQ(parse(bad), EPROTO) << "version " << v;
    }
    for (uint16_t t : {uint16_t{0}, uint16_t{8}, uint16_t{0xffff}}) {
        bad = bytes;
        std::memcpy(bad.data() + 6, &t, sizeof t);
        EXPECT_EQ(parse(bad), EPROTO) << "type " << t;
    }
}

// Mutates one valid message of `type` and expects EINVAL.
template <class Edit>
void expect_einval(CtrlType type, Edit edit, const char *what)
{
    for (CtrlMsg m : valid_messages()) {
        if (m.type != type)
            continue;
        edit(m);
        EXPECT_EQ(parse(encode(m)), EINVAL) << what;
    }
}

TEST(ScifCtrl, OutOfRangeFieldsAreRejected)
{
    using T = CtrlType;
    expect_einval(T::connect_req, [](CtrlMsg &m) { m.u.req.ring_cells = 1000; }, "cells not 2^n");
    expect_einval(T::connect_req, [](CtrlMsg &m) { m.u.req.ring_cells = 32; }, "ring too small");
    expect_einval(T::connect_req, [](CtrlMsg &m) { m.u.req.ring_cells = 1u << 21; }, "ring too big");
    expect_einval(T::connect_req, [](CtrlMsg &m) { m.u.req.src_port = 0; }, "port 0");
    expect_einval(T::connect_req, [](CtrlMsg &m) { m.u.req.flags = 0x80; }, "unknown flag");
    expect_einval(T::connect_ack, [](CtrlMsg &m) { m.u.ack.port = 0; }, "ack port 0");
    expect_einval(T::connect_ack, [](CtrlMsg &m) { m.u.ack.flags = 2; }, "ack unknown flag");
    expect_einval(T::win_reg, [](CtrlMsg &m) { m.u.reg.length = 0; }, "empty window");
    expect_einval(T::win_reg, [](CtrlMsg &m) { m.u.reg.offset = 100; }, "unaligned offset");
    expect_einval(T::win_reg, [](CtrlMsg &m) { m.u.reg.offset = uint64_t{1} << 63; }, "huge offset");
    expect_einval(T::win_reg, [](CtrlMsg &m) { m.u.reg.addr = ~uint64_t{4095}; }, "address wraps");
    expect_einval(T::win_reg, [](CtrlMsg &m) { m.u.reg.prot = 4; }, "bad prot");
    expect_einval(T::win_reg, [](CtrlMsg &m) { m.u.reg.prot = 0; }, "no prot");
    expect_einval(T::win_unreg, [](CtrlMsg &m) { m.u.unreg.length = 0; }, "empty unreg");
    expect_einval(T::win_unreg, [](CtrlMsg &m) { m.u.unreg.length = ~uint64_t{0}; }, "huge unreg");
    expect_einval(T::rma_req, [](CtrlMsg &m) { m.u.rma.len = 0; }, "empty rma");
    expect_einval(T::rma_req, [](CtrlMsg &m) { m.u.rma.len = kBounceSlotBytes + 1; }, "rma > slot");
    expect_einval(T::rma_req, [](CtrlMsg &m) { m.u.rma.slot = kBounceSlots; }, "slot out of range");
    expect_einval(T::rma_req, [](CtrlMsg &m) { m.u.rma.op = 0; }, "op 0");
    expect_einval(T::rma_req, [](CtrlMsg &m) { m.u.rma.op = 9; }, "unknown op");
    expect_einval(T::rma_req, [](CtrlMsg &m) { m.u.rma.offset = uint64_t{1} << 63; }, "huge offset");
    expect_einval(T::rma_req, [](CtrlMsg &m) { m.u.rma.op = 3; }, "op 3");
    expect_einval(T::rma_req, [](CtrlMsg &m) { m.u.rma.pad = 1; }, "pad set");
    expect_einval(T::rma_reply, [](CtrlMsg &m) { m.u.reply.status = -1; }, "negative status");
    expect_einval(T::rma_reply, [](CtrlMsg &m) { m.u.reply.status = 1 << 20; }, "huge status");
}

} // namespace
