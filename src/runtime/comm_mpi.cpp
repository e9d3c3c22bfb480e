// The MPI communicator. Every collective is issued non-blocking and completed by
// wait(), which polls with a deadline: a dead or stuck peer turns into a
// TimeoutError naming the operation instead of a hang.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <deque>
#include <thread>

#include <fmt/format.h>

#include "strata/comm.hpp"
#include "runtime/failure_report.hpp"
#include "strata/error.hpp"

namespace strata {
namespace {

// Large payloads are split so every MPI count fits in an int.
constexpr std::size_t kChunk = std::size_t{1} << 30;
constexpr int kAlltoallTag = 1001;
constexpr int kGatherTag = 1002;

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::u64: return MPI_UINT64_T;
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  return MPI_SUM;
}

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::i32: case DType::f32: return 4;
    default: return 8;
  }
}

class MpiComm final : public Comm {
 public:
  explicit MpiComm(const CommOptions& o) : timeout_(o.timeout_seconds) {
    // A private communicator keeps Strata's traffic apart from any the user sends.
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &p2p_), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(p2p_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &mail_), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(mail_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    int* tag_ub = nullptr;
    int found = 0;
    check(MPI_Comm_get_attr(p2p_, MPI_TAG_UB, &tag_ub, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
    max_tag_ = found && tag_ub ? *tag_ub : 32767;
  }
  ~MpiComm() override {
    if (!broken_) {
      MPI_Comm_free(&mail_);
      MPI_Comm_free(&p2p_);
      MPI_Comm_free(&comm_);
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  double timeout() const override { return timeout_; }
  void set_timeout(double s) override { timeout_ = s; }
  bool broken() const override { return broken_; }
  void abort(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }

  void barrier() override {
    MPI_Request req;
    check(MPI_Ibarrier(comm_, &req), "barrier");
    wait(&req, 1, "barrier");
  }

  void broadcast(std::span<std::byte> data, int root) override {
    STRATA_CHECK(root >= 0 && root < size_, "broadcast root out of range");
    std::vector<MPI_Request> reqs;
    // Every rank passes the same size, so every rank posts the same chunks.
    for (std::size_t off = 0; off < data.size(); off += kChunk) {
      const std::size_t n = std::min(kChunk, data.size() - off);
      MPI_Request req;
      check(MPI_Ibcast(data.data() + off, static_cast<int>(n), MPI_BYTE, root, comm_, &req),
            "broadcast");
      reqs.push_back(req);
    }
    wait(reqs.data(), static_cast<int>(reqs.size()), fmt::format("broadcast from rank {}", root));
    if (rank_ == root) {
      stats_.bytes_sent += data.size() * static_cast<std::size_t>(size_ - 1);
      stats_.messages_sent += static_cast<std::size_t>(size_ - 1);
    }
  }

  void allreduce_raw(void* data, std::size_t count, DType type, ReduceOp op) override {
    const std::size_t per_chunk = kChunk / dtype_size(type);
    std::vector<MPI_Request> reqs;
    auto* bytes = static_cast<char*>(data);
    for (std::size_t off = 0; off < count; off += per_chunk) {
      const std::size_t n = std::min(per_chunk, count - off);
      MPI_Request req;
      check(MPI_Iallreduce(MPI_IN_PLACE, bytes + off * dtype_size(type), static_cast<int>(n),
                           mpi_type(type), mpi_op(op), comm_, &req),
            "allreduce");
      reqs.push_back(req);
    }
    wait(reqs.data(), static_cast<int>(reqs.size()), "allreduce");
    stats_.bytes_sent += count * dtype_size(type);
  }

  std::vector<Bytes> alltoallv(const std::vector<Bytes>& send) override {
    STRATA_CHECK(send.size() == static_cast<std::size_t>(size_), "alltoallv needs one buffer per rank");
    std::vector<std::uint64_t> send_sizes(send.size()), recv_sizes(send.size());
    for (std::size_t r = 0; r < send.size(); ++r) send_sizes[r] = send[r].size();
    MPI_Request req;
    check(MPI_Ialltoall(send_sizes.data(), 1, MPI_UINT64_T, recv_sizes.data(), 1, MPI_UINT64_T, comm_, &req),
          "alltoallv (sizes)");
    wait(&req, 1, "alltoallv (exchange of sizes)");

    std::vector<Bytes> recv(send.size());
    std::vector<MPI_Request> reqs;
    for (int r = 0; r < size_; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (r == rank_) {
        recv[ur] = send[ur];
        continue;
      }
      recv[ur].resize(recv_sizes[ur]);
      post_chunks(recv[ur].data(), recv_sizes[ur], r, kAlltoallTag, /*send=*/false, reqs);
    }
    for (int r = 0; r < size_; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (r == rank_) continue;
      post_chunks(const_cast<std::byte*>(send[ur].data()), send[ur].size(), r, kAlltoallTag, true, reqs);
      stats_.bytes_sent += send[ur].size();
      ++stats_.messages_sent;
    }
    wait(reqs.data(), static_cast<int>(reqs.size()), "alltoallv (data)");
    return recv;
  }

  void isend(std::span<const std::byte> data, int dest, int tag) override {
    PendingSends& mine = pending_sends();
    post_chunks_on(p2p_, const_cast<std::byte*>(data.data()), data.size(), dest, tag, true, mine.requests);
    mine.ends.push_back(mine.requests.size());
    sent_by_threads_.fetch_add(data.size(), std::memory_order_relaxed);
  }

  std::size_t finished_sends() override {
    PendingSends& mine = pending_sends();
    std::size_t finished = 0;
    for (; mine.next < mine.ends.size(); ++mine.next, ++finished) {
      const std::size_t from = mine.next == 0 ? 0 : mine.ends[mine.next - 1];
      int done = 0;
      check(MPI_Testall(static_cast<int>(mine.ends[mine.next] - from), mine.requests.data() + from, &done,
                        MPI_STATUSES_IGNORE),
            "completion of a block send");
      if (!done) break;
    }
    return finished;
  }

  void recv(std::span<std::byte> data, int src, int tag, const std::string& what) override {
    std::vector<MPI_Request> reqs;
    post_chunks_on(p2p_, data.data(), data.size(), src, tag, false, reqs);
    wait_quietly(reqs, what);
  }

  std::uint64_t irecv(std::span<std::byte> data, int src, int tag) override {
    PendingRecvs& mine = pending_recvs();
    mine.requests.emplace_back();
    post_chunks_on(p2p_, data.data(), data.size(), src, tag, false, mine.requests.back());
    return mine.first + mine.requests.size() - 1;
  }

  void wait_recv(std::uint64_t id, const std::string& what) override {
    PendingRecvs& mine = pending_recvs();
    STRATA_CHECK(id >= mine.first && id - mine.first < mine.requests.size() &&
                     !mine.requests[static_cast<std::size_t>(id - mine.first)].empty(),
                 "wait_recv of a receive this thread did not start or already waited for");
    auto& reqs = mine.requests[static_cast<std::size_t>(id - mine.first)];
    wait_quietly(reqs, what);
    reqs.clear();
    while (!mine.requests.empty() && mine.requests.front().empty()) {
      mine.requests.pop_front();
      ++mine.first;
    }
  }

  // On the way out of a failed run, so no check() and no unbounded wait: a receive
  // whose transfer has begun cannot be cancelled, and its sender may be the rank that
  // hung. After a failure (broken) the requests are left to the ending process.
  void cancel_recvs() override {
    PendingRecvs& mine = pending_recvs();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
    for (auto& reqs : mine.requests)
      for (MPI_Request& r : reqs) {
        if (r == MPI_REQUEST_NULL || broken_) continue;
        MPI_Cancel(&r);
        for (int done = 0; !done;) {
          if (MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || std::chrono::steady_clock::now() > deadline) {
            broken_ = true;
            break;
          }
          if (!done) std::this_thread::yield();
        }
      }
    mine.first += mine.requests.size();
    mine.requests.clear();
  }

  int max_tag() const override { return max_tag_; }

  void wait_sends() override {
    PendingSends& mine = pending_sends();
    wait_quietly(mine.requests, "completion of block sends");
    mine.requests.clear();
    mine.ends.clear();
    mine.next = 0;
  }

  void mail(int dest, Bytes message) override {
    if (message.size() > static_cast<std::size_t>(INT_MAX))
      throw CommError(fmt::format("mail to rank {}", dest), rank_,
                      fmt::format("a message of {} bytes is larger than one MPI message can be", message.size()));
    sent_by_threads_.fetch_add(message.size(), std::memory_order_relaxed);
    mail_out_.push_back({std::move(message), MPI_REQUEST_NULL});
    auto& m = mail_out_.back();
    check(MPI_Isend(m.data.data(), static_cast<int>(m.data.size()), MPI_BYTE, dest, 0, mail_, &m.request),
          fmt::format("mail to rank {}", dest));
  }

  bool collect_mail(int& from, Bytes& message) override {
    // Finished sends leave in order (the oldest usually finishes first).
    while (!mail_out_.empty()) {
      int done = 0;
      check(MPI_Test(&mail_out_.front().request, &done, MPI_STATUS_IGNORE), "mail send");
      if (!done) break;
      mail_out_.pop_front();
    }
    int arrived = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, 0, mail_, &arrived, &status), "mail probe");
    if (!arrived) return false;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    message.resize(static_cast<std::size_t>(count));
    from = status.MPI_SOURCE;
    check(MPI_Recv(message.data(), count, MPI_BYTE, from, 0, mail_, MPI_STATUS_IGNORE),
          fmt::format("mail from rank {}", from));
    return true;
  }

  std::size_t mail_in_flight() const override { return mail_out_.size(); }

  void allgatherv_in_place(std::vector<Bytes>& parts) override {
    STRATA_CHECK(parts.size() == static_cast<std::size_t>(size_), "allgatherv_in_place takes one part per rank");
    const Bytes& mine = parts[static_cast<std::size_t>(rank_)];
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size_));
    std::uint64_t my_size = mine.size();
    MPI_Request req;
    check(MPI_Iallgather(&my_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_, &req),
          "allgatherv (sizes)");
    wait(&req, 1, "allgatherv (exchange of sizes)");
    std::vector<MPI_Request> reqs;
    for (int r = 0; r < size_; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (r == rank_) continue;
      parts[ur].resize(sizes[ur]);
      post_chunks(parts[ur].data(), sizes[ur], r, kGatherTag, false, reqs);
    }
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      post_chunks(const_cast<std::byte*>(mine.data()), mine.size(), r, kGatherTag, true, reqs);
      stats_.bytes_sent += mine.size();
      ++stats_.messages_sent;
    }
    wait(reqs.data(), static_cast<int>(reqs.size()), "allgatherv (data)");
  }

 private:
  // The calling thread's point-to-point sends since its last wait_sends: their requests
  // (a message may take several chunks), where each message's requests end, and the
  // first message finished_sends has not yet seen complete. Completed requests are
  // MPI_REQUEST_NULL, which the final wait accepts.
  struct PendingSends {
    std::vector<MPI_Request> requests;
    std::vector<std::size_t> ends;
    std::size_t next = 0;
  };
  PendingSends& pending_sends() {
    thread_local PendingSends sends;
    return sends;
  }

  // The calling thread's receives started by irecv and not yet waited for: receive
  // first + k is requests[k] (its chunks; empty once waited for).
  struct PendingRecvs {
    std::uint64_t first = 0;
    std::deque<std::vector<MPI_Request>> requests;
  };
  PendingRecvs& pending_recvs() {
    thread_local PendingRecvs recvs;
    return recvs;
  }

  // A timed wait that touches no shared state, so several threads may use it at once.
  void wait_quietly(std::vector<MPI_Request>& reqs, const std::string& what) {
    poll_until_done(reqs.data(), static_cast<int>(reqs.size()), what);
  }

  // Polls until every request completes: spin briefly (small messages finish in
  // microseconds), then yield, then sleep, so a long wait does not burn a core; past
  // the timeout, the communicator is marked broken and TimeoutError names the wait.
  void poll_until_done(MPI_Request* reqs, int n, const std::string& what) {
    struct Noted {  // what a rank stopped from outside says it was waiting in
      explicit Noted(const std::string& w) { detail::note_wait(w); }
      ~Noted() { detail::note_wait(""); }
    } noted(what);
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto deadline = start + std::chrono::duration<double>(timeout_);
    for (long iter = 0;; ++iter) {
      int done = 0;
      if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
        broken_ = true;
        throw CommError(what, rank_, "MPI_Testall failed");
      }
      if (done) return;
      if (iter < 2000) continue;
      const auto now = clock::now();
      if (now > deadline) {
        broken_ = true;
        throw TimeoutError(what, rank_, timeout_);
      }
      if (now - start < std::chrono::milliseconds(5)) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(150));
    }
  }

  void post_chunks(std::byte* data, std::size_t n, int peer, int tag, bool is_send,
                   std::vector<MPI_Request>& reqs) {
    post_chunks_on(comm_, data, n, peer, tag, is_send, reqs);
  }

  void post_chunks_on(MPI_Comm comm, std::byte* data, std::size_t n, int peer, int tag, bool is_send,
                      std::vector<MPI_Request>& reqs) {
    std::size_t off = 0;
    do {
      const std::size_t len = std::min(kChunk, n - off);
      MPI_Request req;
      if (is_send)
        check(MPI_Isend(data + off, static_cast<int>(len), MPI_BYTE, peer, tag, comm, &req),
              fmt::format("send to rank {}", peer));
      else
        check(MPI_Irecv(data + off, static_cast<int>(len), MPI_BYTE, peer, tag, comm, &req),
              fmt::format("receive from rank {}", peer));
      reqs.push_back(req);
      off += len;
    } while (off < n);
  }

  void check(int rc, const std::string& op) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    broken_ = true;
    throw CommError(op, rank_, std::string(text, static_cast<std::size_t>(len)));
  }

  // Collective waits count in the statistics; the polling itself is shared with the
  // point-to-point path.
  void wait(MPI_Request* reqs, int n, const std::string& what) {
    ++stats_.collectives;
    poll_until_done(reqs, n, what);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm p2p_ = MPI_COMM_NULL;  // executors' block transfers
  int max_tag_ = 32767;
  MPI_Comm mail_ = MPI_COMM_NULL;  // parameter-server mail
  struct OutgoingMail {
    Bytes data;
    MPI_Request request;
  };
  std::deque<OutgoingMail> mail_out_;  // a deque: requests and buffers must not move
  int rank_ = 0, size_ = 1;
  double timeout_;
  std::atomic<bool> broken_{false};
};

}  // namespace

std::unique_ptr<Comm> make_mpi_comm(const CommOptions& options) { return std::make_unique<MpiComm>(options); }

}  // namespace strata
