// SPDX-License-Identifier: BSD-3-Clause
// The process's view of its job through PMIx: who am I, how many are we,
// where does each rank live, and the modex (business cards published by
// every rank, read per peer on first contact).
//
// Without a launcher (no PMIX_NAMESPACE / PMIX_SERVER_URI* in the
// environment) the process is a singleton of size 1: PMIx 4.2.2 answers
// PMIx_Init with PMIX_ERR_UNREACH instead of making one (notes/PMIX.md P16).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace weft::rt {

class PmixClient {
public:
    PmixClient() = default;
    ~PmixClient();   // finalizes if still initialized
    PmixClient(const PmixClient &) = delete;
    PmixClient &operator=(const PmixClient &) = delete;

    Status init();
    Status finalize();

    bool singleton() const { return singleton_; }
    uint32_t rank() const { return rank_; }
    uint32_t size() const { return size_; }
    uint32_t local_rank() const { return local_rank_; }
    uint32_t local_size() const { return local_size_; }
    uint32_t node_id() const { return node_id_; }
    uint32_t num_nodes() const { return num_nodes_; }
    const std::string &nspace() const { return nspace_; }
    const std::string &hostname() const { return hostname_; }

    // Where a peer lives: its PMIx node id (never decided from host names:
    // namespaces and containers share them) and host name, for messages.
    Result<uint32_t> node_id_of(uint32_t rank);
    std::string hostname_of(uint32_t rank);

    // Modex: publish, then a fence that commits; collecting data, it makes
    // every rank's values readable here ("full"); without, a peer's values
    // are fetched from the PMIx server by the first get() ("direct"; the
    // server asks the peer's node). get() reads one value.
    Status put(const std::string &key, std::span<const std::byte> value);
    Status fence(bool collect_data);
    // Why this job cannot rely on direct modex (a peer's values fetched on
    // first get, no collecting fence), or empty when it can.
    std::string direct_modex_obstacle() const;
    // How many other ranks' values get() has asked PMIx for (each counted
    // once): the peers whose cards this process fetched.
    size_t peers_fetched() const { return fetched_.size(); }
    // A fence that does not block: started here, done when fence_done()
    // (the caller keeps progressing its transports meanwhile).
    Status fence_start();
    bool fence_done() const { return nb_fence_done_.load(std::memory_order_acquire); }
    Status fence_result() const;
    // NOT_FOUND when the peer published nothing under key.
    Result<std::vector<std::byte>> get(uint32_t rank, const std::string &key);

    // Ends the whole job: the launcher kills every rank. Returns only if the
    // launcher did not act (then the caller ends the process).
    void abort(int status, const std::string &message);

    // Ranks PMIx reported as terminated since the last call (from PMIx's
    // event thread; the runtime drains this from progress).
    std::vector<uint32_t> take_terminated();
    // Cheap test for the progress loop.
    bool has_terminated() const { return terminated_flag_.load(std::memory_order_relaxed); }
    // Readable while terminations wait to be taken (for a blocking progress
    // engine), or -1.
    int event_fd() const { return event_fd_; }

    // Called from PMIx's event thread when a peer of the job terminated.
    void note_terminated(uint32_t rank);

private:
    Status register_events();

    bool initialized_ = false;
    bool singleton_ = false;
    uint32_t rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, node_id_ = 0, num_nodes_ = 1;
    std::string nspace_;
    std::string hostname_;
    std::map<uint32_t, uint32_t> node_ids_;           // cache of node_id_of
    std::map<std::string, std::vector<std::byte>> singleton_store_;
    std::set<uint32_t> fetched_;                      // ranks get() asked for
    // Every value a peer published, by rank, listed by one PMIx_Get of a
    // null key after get()'s first successful get for that rank (which
    // brought them all from the server). Each PMIx_Get is a round trip to
    // PMIx's own thread: a connection's first contact asked for a card per
    // module on both sides, and an ask that found that thread's core busy
    // waited up to a scheduler tick (1 ms). Complete once taken: weft
    // publishes everything before its one commit (at the modex).
    std::map<uint32_t, std::map<std::string, std::vector<std::byte>, std::less<>>> published_;
    // Lists rank's values into published_[rank], if the list holds key
    // with value (what the get just returned); else keeps nothing.
    void keep_published(uint32_t rank, const std::string &key, const std::vector<std::byte> &value);
    size_t event_handler_ = 0;
    bool event_registered_ = false;

    std::mutex terminated_mu_;
    std::vector<uint32_t> terminated_;
    std::atomic<bool> terminated_flag_{false};
    int event_fd_ = -1;
    std::atomic<bool> nb_fence_done_{false};
    std::atomic<int> nb_fence_status_{0};
};

} // namespace weft::rt
