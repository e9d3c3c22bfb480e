// Collectives between ranks behind one small interface.
//
// Two implementations exist: one over MPI (used whenever the process was started by
// mpirun) and one for a lone process (no MPI needed). Every blocking call waits with
// a deadline and throws TimeoutError naming the operation and the rank; MPI failures
// become CommError. All calls are collective unless noted: every rank must make the
// same calls in the same order.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "strata/detail/free_now.hpp"

namespace strata {

using Bytes = std::vector<std::byte>;

enum class ReduceOp { sum, min, max };

/// Element types the reductions understand.
enum class DType { i32, i64, u64, f32, f64 };

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, std::int32_t>) return DType::i32;
  else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, long long>) return DType::i64;
  else if constexpr (std::is_same_v<T, std::uint64_t> || std::is_same_v<T, unsigned long long>) return DType::u64;
  else if constexpr (std::is_same_v<T, float>) return DType::f32;
  else if constexpr (std::is_same_v<T, double>) return DType::f64;
  else static_assert(sizeof(T) == 0, "allreduce supports int32, int64, uint64, float and double");
}

/// Traffic counters of one rank (messages to itself are not counted).
struct CommStats {
  std::uint64_t bytes_sent = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t collectives = 0;
};

class Comm {
 public:
  virtual ~Comm() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Seconds every blocking wait may take before TimeoutError.
  virtual double timeout() const = 0;
  virtual void set_timeout(double seconds) = 0;

  virtual void barrier() = 0;
  /// Replaces `data` on every rank by root's; all ranks pass the same size.
  virtual void broadcast(std::span<std::byte> data, int root) = 0;
  /// Element-wise reduction in place; all ranks pass the same count and type.
  virtual void allreduce_raw(void* data, std::size_t count, DType type, ReduceOp op) = 0;
  /// send[r] goes to rank r; returns recv where recv[r] came from rank r.
  virtual std::vector<Bytes> alltoallv(const std::vector<Bytes>& send) = 0;
  /// Every rank contributes one buffer; every rank receives all of them, in rank order.
  std::vector<Bytes> allgatherv(std::span<const std::byte> mine) {
    std::vector<Bytes> parts(static_cast<std::size_t>(size()));
    parts[static_cast<std::size_t>(rank())].assign(mine.begin(), mine.end());
    allgatherv_in_place(parts);
    return parts;
  }
  /// allgatherv on the caller's buffers (size() of them): parts[rank()] is this rank's
  /// contribution and stays; every other part is replaced by that rank's, reusing its
  /// storage, so a loop that exchanges about as much each time allocates nothing.
  virtual void allgatherv_in_place(std::vector<Bytes>& parts) = 0;

  // ---- point-to-point (thread-safe; for executors moving blocks between ranks) ----
  // These use their own communication context, apart from the collectives, and may
  // be called from several threads at once.

  /// Starts sending `data` (which must stay alive until wait_sends) to `dest`.
  virtual void isend(std::span<const std::byte> data, int dest, int tag) = 0;
  /// Receives exactly data.size() bytes from `src` with `tag`, waiting at most the timeout.
  virtual void recv(std::span<std::byte> data, int src, int tag, const std::string& what) = 0;
  /// Starts receiving exactly data.size() bytes from `src` with `tag` into `data`, which
  /// must stay alive until wait_recv or cancel_recvs; returns the receive's number among
  /// this thread's. A receive posted before its message arrives takes it as it comes
  /// (a late recv would wait for the transfer itself).
  virtual std::uint64_t irecv(std::span<std::byte> data, int src, int tag) = 0;
  /// Waits, at most the timeout, until this thread's receive `id` has completed.
  virtual void wait_recv(std::uint64_t id, const std::string& what) = 0;
  /// Cancels every receive this thread started and has not waited for (a run that
  /// stops early), so that their buffers may go.
  virtual void cancel_recvs() = 0;
  /// The largest tag isend, recv and irecv take (MPI's MPI_TAG_UB: at least 32767).
  virtual int max_tag() const = 0;
  /// How many more of this thread's sends have completed since its last call (or its
  /// last wait_sends), counted in the order they were started up to the first that has
  /// not: the caller matches them with its own list of what it sent. Never waits.
  virtual std::size_t finished_sends() = 0;
  /// Completes every send this thread started, waiting at most the timeout.
  virtual void wait_sends() = 0;

  // ---- mail (parameter-server traffic; used by the communication thread) ----
  // A third context: messages of any size from any rank, not matched by tag.
  // Not thread-safe: one thread (ps::Postman's) makes all these calls.

  /// Starts sending `message` to `dest` (which may be this rank); the comm keeps it
  /// until it is delivered.
  virtual void mail(int dest, Bytes message) = 0;
  /// Takes one message that has arrived, if any (never waits), and moves finished
  /// sends along. Returns false when nothing has arrived.
  virtual bool collect_mail(int& from, Bytes& message) = 0;
  /// Sends started by mail() that are not yet complete.
  virtual std::size_t mail_in_flight() const = 0;

  /// True once a wait timed out or MPI failed: the job can no longer make progress
  /// collectively and must be aborted rather than finalised.
  virtual bool broken() const = 0;
  /// Stops every rank of the job (MPI_Abort); returns only for a lone process.
  virtual void abort(int exit_code) = 0;

  const CommStats& stats() const { return stats_; }
  /// Every byte this rank has sent: collectives (stats) and the point-to-point
  /// messages threads send at once (isend, mail), counted atomically.
  std::uint64_t bytes_sent_total() const {
    return stats_.bytes_sent + sent_by_threads_.load(std::memory_order_relaxed);
  }

  // Typed conveniences.
  template <class T, std::size_t E>
  void allreduce(std::span<T, E> data, ReduceOp op) {
    allreduce_raw(data.data(), data.size(), dtype_of<T>(), op);
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  T allreduce(T value, ReduceOp op) {
    allreduce_raw(&value, 1, dtype_of<T>(), op);
    return value;
  }
  /// Broadcasts a vector of trivially copyable values whose size only root knows.
  template <class T>
  void broadcast_vector(std::vector<T>& v, int root) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::uint64_t n = v.size();
    broadcast(std::as_writable_bytes(std::span(&n, 1)), root);
    v.resize(n);
    broadcast(std::as_writable_bytes(std::span(v)), root);
  }
  /// Every rank's `mine` (trivially copyable values), concatenated in rank order;
  /// `mine` is released once sent.
  template <class T>
  std::vector<T> allgather_vector(std::vector<T> mine) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<Bytes> parts = allgatherv(std::as_bytes(std::span(mine)));
    detail::free_now(mine);
    return concatenated<T>(parts);
  }
  /// Parts of trivially copyable values (what allgatherv or alltoallv received),
  /// concatenated in order; each part is released once copied.
  template <class T>
  static std::vector<T> concatenated(std::vector<Bytes>& parts) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::size_t bytes = 0;
    for (const Bytes& part : parts) bytes += part.size();
    std::vector<T> all(bytes / sizeof(T));
    auto* out = reinterpret_cast<std::byte*>(all.data());
    for (Bytes& part : parts) {
      if (!part.empty()) std::memcpy(out, part.data(), part.size());
      out += part.size();
      part = {};
    }
    return all;
  }
  /// Exclusive prefix sum of one value per rank (rank 0 gets 0) and the total.
  std::int64_t exclusive_scan(std::int64_t value, std::int64_t* total = nullptr);

 protected:
  CommStats stats_;
  std::atomic<std::uint64_t> sent_by_threads_{0};
};

struct CommOptions {
  double timeout_seconds = 60.0;
};

/// A communicator for a process started without mpirun: one rank, no MPI.
std::unique_ptr<Comm> make_self_comm(const CommOptions& options);
/// A communicator over MPI_COMM_WORLD; MPI must already be initialised.
std::unique_ptr<Comm> make_mpi_comm(const CommOptions& options);

}  // namespace strata
