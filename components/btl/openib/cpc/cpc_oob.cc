// SPDX-License-Identifier: BSD-3-Clause
// The oob cpc (see cpc_oob.hpp): queue pairs reserved when the card is
// asked, connected after the modex fence, never reconnected.
#include "cpc_oob.hpp"

#include <cstring>
#include <map>

#include <weft/component_util.hpp>
#include <weft/status.h>

#include "btl_openib_wire.hpp"
#include "oob_wire.hpp"

namespace weft::openib {

namespace {

constexpr const char *kName = "oob";
static_assert(oob::section_bytes(oob::kMaxRanks) <= kMaxSectionBytes, "an oob section of the largest job must fit a card");

const weft::cutil::ParamSpec kParams[] = {
    {"cpc_oob_max_procs", WEFT_PARAM_INT, "256", WEFT_LEVEL_TUNER_DETAIL,
     "oob connection cpc: the largest job it wires. oob creates one RC queue pair per other rank (with its "
     "receive buffers, about 1 MiB each by default) in every process at weft_init; above this many processes "
     "it declines and the lazy cpcs (udcm, rdmacm) connect only the pairs that talk. At most 2048."},
};

enum class Peer : uint8_t {
    none,        // not a peer (this rank, or no job)
    reserved,    // QP reserved, modex not complete
    wired,       // connected at weft_init (the endpoint may have gone since)
    skipped,     // the peer runs no oob: the other cpcs connect it
    failed,      // its wiring failed (note says why)
};

class OobModule final : public CpcModule {
public:
    OobModule(CpcHost &host, uint32_t max_procs) : host_(host), max_procs_(max_procs) {}
    ~OobModule() override
    {
        for (uint32_t r = 0; r < peers_.size(); ++r)
            if (peers_[r] == Peer::reserved)
                host_.release_qp(r);
    }

    std::vector<uint8_t> card() const override { return section_; }
    int job_known(std::string *why) override;
    int modex_ready(std::string *why) override;
    int start_connect(Endpoint &ep, std::span<const uint8_t> peer_card, std::string *why) override;
    // A live wired endpoint is found by openib before any cpc is asked, so
    // whatever reaches a cpc is a pair oob will not (re)connect.
    bool declines(const Endpoint &ep, std::string *why) const override
    {
        *why = refusal(host_.peer_rank(ep));
        return true;
    }
    int progress() override { return 0; }
    void forget(Endpoint &ep) override { (void)ep; }

private:
    void give_up(uint32_t rank, Peer state, const std::string &why)
    {
        host_.release_qp(rank);
        peers_[rank] = state;
        notes_[rank] = why;
    }
    // Why oob will not connect rank now.
    std::string refusal(uint32_t rank) const;
    // One peer's RTR/RTS; "" or why it failed (the endpoint, if made, failed).
    std::string wire(uint32_t rank, const oob::Section &theirs);
    void log(int level, const std::string &text) const
    {
        if (host_.host()->log_enabled(host_.owner(), level))
            host_.host()->log(host_.owner(), level, "oob %s: %s", host_.port().name.c_str(), text.c_str());
    }

    CpcHost &host_;
    uint32_t max_procs_;
    bool modex_done_ = false;
    std::vector<uint8_t> section_;      // empty until job_known succeeded
    std::vector<Peer> peers_;           // by rank
    std::map<uint32_t, std::string> notes_;   // why a peer was skipped or failed
};

int OobModule::job_known(std::string *why)
{
    const uint32_t n = host_.job_size();
    const uint32_t me = host_.my_rank();
    if (n == 0 || me >= n) {
        *why = "oob: no runtime told this port its job (rank and size); oob wires a job's pairs inside weft_init";
        return WEFT_ERR_NOT_AVAILABLE;
    }
    if (n > max_procs_) {
        *why = "oob: a job of " + std::to_string(n) + " processes is larger than btl_openib_cpc_oob_max_procs=" +
               std::to_string(max_procs_) + " (oob would create " + std::to_string(n - 1) +
               " queue pairs with their receive buffers in every process at weft_init); udcm and rdmacm "
               "connect lazily, only the pairs that talk (btl_openib_cpc=udcm,rdmacm), or raise "
               "btl_openib_cpc_oob_max_procs";
        return WEFT_ERR_NOT_AVAILABLE;
    }
    const PortInfo &port = host_.port();
    oob::Section s;
    s.rank = me;
    s.lid = port.attr.lid;
    std::memcpy(s.gid, port.gid.raw, sizeof s.gid);
    s.mtu = static_cast<uint8_t>(port.attr.active_mtu);
    s.recv_credits = 1;
    s.entries.resize(n);
    peers_.assign(n, Peer::none);
    for (uint32_t r = 0; r < n; ++r) {
        if (r == me)
            continue;
        QpAddress local;
        std::string no;
        if (int rc = host_.reserve_qp(r, &local, &no); rc != WEFT_SUCCESS) {
            for (uint32_t q = 0; q < r; ++q)
                if (peers_[q] == Peer::reserved)
                    host_.release_qp(q);
            peers_.assign(n, Peer::none);
            *why = "oob: could not create the queue pair for rank " + std::to_string(r) + " (one per other rank, " +
                   std::to_string(n - 1) + " in all): " + no +
                   "; udcm and rdmacm connect lazily, only the pairs that talk";
            return rc;
        }
        peers_[r] = Peer::reserved;
        s.entries[r] = {local.qpn, local.psn};
        s.recv_credits = local.recv_credits;
        s.mtu = local.mtu;
    }
    section_ = oob::encode(s);
    log(WEFT_LOG_DEBUG, "reserved " + std::to_string(n - 1) + " queue pairs for a job of " + std::to_string(n));
    return WEFT_SUCCESS;
}

std::string OobModule::wire(uint32_t rank, const oob::Section &theirs)
{
    const uint32_t me = host_.my_rank();
    const oob::Entry &e = theirs.entries[me];
    if (e.qpn == 0)
        return "rank " + std::to_string(rank) + " reserved no queue pair for this rank";
    QpAddress remote;
    remote.qpn = e.qpn;
    remote.psn = e.psn;
    remote.lid = theirs.lid;
    std::memcpy(remote.gid, theirs.gid, sizeof remote.gid);
    remote.mtu = theirs.mtu;
    remote.recv_credits = theirs.recv_credits;

    std::string why;
    Endpoint *ep = host_.incoming(rank, &why);
    if (!ep)
        return "no endpoint for rank " + std::to_string(rank) + ": " + why;
    QpAddress local;
    int rc = host_.adopt_qp(*ep, &local, &why);
    // Receives first, while the QP is still in INIT: nothing can arrive
    // before they are there.
    if (rc == WEFT_SUCCESS)
        rc = host_.post_recvs(*ep, &why);
    if (rc == WEFT_SUCCESS)
        rc = host_.ready_qp(*ep, remote, &why);
    if (rc != WEFT_SUCCESS) {
        why = "oob: wiring rank " + std::to_string(rank) + " at weft_init failed: " + why;
        host_.connect_failed(*ep, rc, why);
        return why;
    }
    // The peer does its RTR inside its own weft_init; until then RC
    // retransmission covers what this side sends.
    host_.connected(*ep);
    return "";
}

int OobModule::modex_ready(std::string *why)
{
    if (modex_done_)
        return WEFT_SUCCESS;
    modex_done_ = true;
    const uint32_t n = static_cast<uint32_t>(peers_.size());
    unsigned wired = 0, skipped = 0, failed = 0;
    std::string first_failure;
    for (uint32_t r = 0; r < n; ++r) {
        if (peers_[r] != Peer::reserved)
            continue;
        std::vector<uint8_t> bytes;
        std::string no;
        const int rc = host_.peer_section(r, kName, &bytes, &no);
        if (rc == WEFT_ERR_NOT_FOUND) {
            // Its card has no oob section: the lazy cpcs connect it.
            give_up(r, Peer::skipped, no);
            ++skipped;
            continue;
        }
        oob::Section theirs;
        if (rc == WEFT_SUCCESS && !oob::decode(bytes, &theirs, &no))
            no = "rank " + std::to_string(r) + ": " + no;
        else if (rc == WEFT_SUCCESS && (theirs.rank != r || theirs.entries.size() != n))
            no = "rank " + std::to_string(r) + "'s oob section describes rank " + std::to_string(theirs.rank) +
                 " of a job of " + std::to_string(theirs.entries.size()) + " (this job has " + std::to_string(n) +
                 ")";
        else if (rc == WEFT_SUCCESS)
            no = wire(r, theirs);
        if (no.empty()) {
            peers_[r] = Peer::wired;
            ++wired;
            continue;
        }
        give_up(r, Peer::failed, no);
        if (first_failure.empty())
            first_failure = no;
        ++failed;
    }
    log(WEFT_LOG_DEBUG, "wired " + std::to_string(wired) + " peers at init, " + std::to_string(skipped) +
                            " left to the other cpcs (no oob section), " + std::to_string(failed) + " failed");
    if (failed) {
        *why = std::to_string(failed) + " of " + std::to_string(n ? n - 1 : 0) +
               " peers could not be wired at weft_init (first: " + first_failure + ")";
        return WEFT_ERR_UNREACHABLE;
    }
    return WEFT_SUCCESS;
}

std::string OobModule::refusal(uint32_t rank) const
{
    if (!modex_done_)
        return "oob: asked to connect rank " + std::to_string(rank) +
               " before the modex was complete; oob wires every pair inside weft_init, after the modex fence";
    const Peer state = rank < peers_.size() ? peers_[rank] : Peer::none;
    switch (state) {
    case Peer::wired:
        return "oob: the connection to rank " + std::to_string(rank) +
               " was made at weft_init and has been closed or has failed; oob wires each pair once per job and "
               "does not reconnect (list udcm or rdmacm in btl_openib_cpc beside oob to reconnect lazily)";
    case Peer::skipped:
    case Peer::failed: {
        auto it = notes_.find(rank);
        return "oob: rank " + std::to_string(rank) + " was not wired at weft_init: " +
               (it != notes_.end() ? it->second : std::string("no reason recorded"));
    }
    default:
        return "oob: rank " + std::to_string(rank) + " is not a peer this port wired (job of " +
               std::to_string(peers_.size()) + ")";
    }
}

int OobModule::start_connect(Endpoint &ep, std::span<const uint8_t> peer_card, std::string *why)
{
    // openib asks declines() first and never gets here for oob; answer the
    // same if it does.
    (void)peer_card;
    *why = refusal(host_.peer_rank(ep));
    return WEFT_ERR_NOT_AVAILABLE;
}

// ---- the component table ------------------------------------------------------

int oob_open(const weft_host_t *host, const weft_component_t *owner)
{
    return weft::cutil::register_params(host, owner, kParams);
}

int oob_query(const weft_host_t *, const PortInfo &port, std::string *why)
{
    // The peer's RTR needs an address for this port: a LID on InfiniBand,
    // a GID on RoCE.
    static const uint8_t zero[16] = {};
    if (port.roce && std::memcmp(port.gid.raw, zero, sizeof zero) == 0) {
        *why = "oob: RoCE port " + port.name + " has no GID at index " + std::to_string(port.gid_index) +
               " (is an IP address configured on its netdev?)";
        return 0;
    }
    if (!port.roce && port.attr.lid == 0) {
        *why = "oob: port " + port.name + " has no LID (is a subnet manager running?)";
        return 0;
    }
    return 1;
}

int oob_init(CpcHost &host, std::unique_ptr<CpcModule> *out, std::string *why)
{
    return weft::cutil::guarded([&]() -> int {
        int64_t max_procs = 256;
        host.host()->param_get_int("btl_openib_cpc_oob_max_procs", &max_procs);
        if (max_procs < 1 || max_procs > oob::kMaxRanks) {
            *why = "oob on " + host.port().name + ": btl_openib_cpc_oob_max_procs must be 1.." +
                   std::to_string(oob::kMaxRanks) + " (got " + std::to_string(max_procs) + ")";
            return WEFT_ERR_BAD_VALUE;
        }
        *out = std::make_unique<OobModule>(host, static_cast<uint32_t>(max_procs));
        return WEFT_SUCCESS;
    });
}

} // namespace

const CpcComponent kCpcOob = {
    .size = sizeof(CpcComponent),
    .name = kName,
    .default_priority = 10,
    .open = oob_open,
    .query = oob_query,
    .init = oob_init,
};

} // namespace weft::openib
