// The communicator of a lone process: every collective is a local copy.
#include <climits>
#include <cstring>
#include <deque>

#include "strata/comm.hpp"
#include "strata/error.hpp"

namespace strata {
namespace {

class SelfComm final : public Comm {
 public:
  explicit SelfComm(const CommOptions& o) : timeout_(o.timeout_seconds) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  double timeout() const override { return timeout_; }
  void set_timeout(double s) override { timeout_ = s; }
  void barrier() override { ++stats_.collectives; }
  void broadcast(std::span<std::byte>, int root) override {
    STRATA_CHECK(root == 0, "broadcast root out of range");
    ++stats_.collectives;
  }
  void allreduce_raw(void*, std::size_t, DType, ReduceOp) override { ++stats_.collectives; }
  std::vector<Bytes> alltoallv(const std::vector<Bytes>& send) override {
    STRATA_CHECK(send.size() == 1, "alltoallv needs one buffer per rank");
    ++stats_.collectives;
    return send;
  }
  void allgatherv_in_place(std::vector<Bytes>& parts) override {
    STRATA_CHECK(parts.size() == 1, "allgatherv_in_place takes one part per rank");
    ++stats_.collectives;
  }
  void isend(std::span<const std::byte>, int, int) override {
    throw InternalError("isend on a one-rank job: there is no other rank");
  }
  void recv(std::span<std::byte>, int, int, const std::string&) override {
    throw InternalError("recv on a one-rank job: there is no other rank");
  }
  std::uint64_t irecv(std::span<std::byte>, int, int) override {
    throw InternalError("irecv on a one-rank job: there is no other rank");
  }
  void wait_recv(std::uint64_t, const std::string&) override {
    throw InternalError("wait_recv on a one-rank job: there is no other rank");
  }
  void cancel_recvs() override {}
  int max_tag() const override { return INT_MAX; }
  std::size_t finished_sends() override { return 0; }
  void wait_sends() override {}
  void mail(int dest, Bytes message) override {
    STRATA_CHECK(dest == 0, "mail to a rank that does not exist");
    inbox_.push_back(std::move(message));
  }
  bool collect_mail(int& from, Bytes& message) override {
    if (inbox_.empty()) return false;
    from = 0;
    message = std::move(inbox_.front());
    inbox_.pop_front();
    return true;
  }
  std::size_t mail_in_flight() const override { return 0; }
  bool broken() const override { return false; }
  void abort(int) override {}

 private:
  double timeout_;
  std::deque<Bytes> inbox_;
};

}  // namespace

std::unique_ptr<Comm> make_self_comm(const CommOptions& options) {
  return std::make_unique<SelfComm>(options);
}

}  // namespace strata
