#include "ps/postman.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "strata/error.hpp"

namespace strata::ps {

namespace {
const ServiceKind kPostman{"postman", [](Runtime& rt) -> std::unique_ptr<RuntimeService> {
                             return std::make_unique<Postman>(rt.comm());
                           }};
}  // namespace

Postman& postman(Runtime& rt) { return static_cast<Postman&>(rt.service(kPostman)); }

Postman::Postman(Comm& comm) : comm_(comm), rank_(comm.rank()) { thread_ = std::thread([this] { run(); }); }

Postman::~Postman() {
  {
    std::lock_guard lock(out_mu_);
    stop_ = true;
  }
  out_cv_.notify_all();
  thread_.join();
}

void Postman::subscribe(std::uint64_t topic, Handler handler) {
  std::lock_guard lock(handlers_mu_);
  handlers_[topic] = std::move(handler);
}

void Postman::set_chore(std::uint64_t topic, std::function<void()> chore) {
  std::lock_guard lock(handlers_mu_);
  chores_[topic] = std::move(chore);
}

void Postman::unsubscribe(std::uint64_t topic) {
  std::lock_guard lock(handlers_mu_);  // waits for a handler or chore that is running
  handlers_.erase(topic);
  chores_.erase(topic);
}

void Postman::send(int dest, std::uint64_t topic, std::span<const std::byte> body) {
  Bytes message(sizeof topic + body.size());
  std::memcpy(message.data(), &topic, sizeof topic);
  if (!body.empty()) std::memcpy(message.data() + sizeof topic, body.data(), body.size());
  {
    std::lock_guard lock(out_mu_);
    outbox_.emplace_back(dest, std::move(message));
  }
  out_cv_.notify_one();
}

void Postman::begin_use() {
  {
    std::lock_guard lock(out_mu_);
    ++users_;
  }
  out_cv_.notify_one();
}

void Postman::end_use() {
  std::lock_guard lock(out_mu_);
  --users_;
}

void Postman::check() const {
  if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(failure_);
}

bool Postman::deliver(int from, Bytes& message) {
  std::uint64_t topic = 0;
  STRATA_CHECK(message.size() >= sizeof topic, "a parameter-server message without a topic");
  std::memcpy(&topic, message.data(), sizeof topic);
  std::lock_guard lock(handlers_mu_);
  auto it = handlers_.find(topic);
  if (it == handlers_.end()) return false;
  it->second(from, std::span<const std::byte>(message).subspan(sizeof topic));
  return true;
}

// How long the thread sleeps after `idle` empty turns in a row while a table is in
// use: 50 us at first, doubling every 16 turns up to 800 us; 50 us while sends are
// in flight, which only MPI calls move on. A busy phase (clocks, replies) keeps it
// at the fast end; a long computation between clocks lets it fall back, so on a
// machine with as many ranks as cores the polls of every rank's Postman do not take
// a loop thread's core from it. A computation thread that starts to wait for a
// message calls hurry(), which puts it back to the fast end.
std::chrono::microseconds Postman::pause(int idle) {
  const int step = std::min(kSteps, (idle - kSpins) / kTurnsPerStep);
  return kFastPause * (1 << std::max(step, 0));
}

void Postman::hurry() {
  hurried_.store(true, std::memory_order_relaxed);
  out_cv_.notify_one();
}

void Postman::run() {
  try {
    std::deque<std::pair<int, Bytes>> sending;
    int idle = 0;
    for (;;) {
      {
        std::unique_lock lock(out_mu_);
        if (stop_) return;
        // Idle and unused: sleep until a message is queued or a table starts. Idle
        // in use: after a burst of quick polls, poll with a growing pause.
        if (outbox_.empty() && idle > kSpins) {
          if (users_ == 0 && comm_.mail_in_flight() == 0 && unclaimed_.empty())
            out_cv_.wait(lock, [&] { return stop_ || users_ > 0 || !outbox_.empty(); });
          else
            // Sends still in flight progress only when MPI is called: poll for them
            // at the fast end.
            out_cv_.wait_for(lock, comm_.mail_in_flight() > 0 ? kFastPause : pause(idle));
          if (stop_) return;
        }
        sending.swap(outbox_);
      }
      if (hurried_.exchange(false, std::memory_order_relaxed)) idle = 0;
      bool busy = !sending.empty();
      for (auto& [dest, message] : sending) comm_.mail(dest, std::move(message));
      sending.clear();
      int from = 0;
      Bytes message;
      while (comm_.collect_mail(from, message)) {
        busy = true;
        if (!deliver(from, message)) unclaimed_.emplace_back(from, std::move(message));
      }
      // Kept messages whose topic has a handler now.
      for (std::size_t k = 0; k < unclaimed_.size();) {
        if (deliver(unclaimed_[k].first, unclaimed_[k].second)) {
          unclaimed_.erase(unclaimed_.begin() + static_cast<std::ptrdiff_t>(k));
          busy = true;
        } else {
          ++k;
        }
      }
      {
        std::lock_guard lock(handlers_mu_);
        for (auto& [topic, chore] : chores_) chore();
      }
      if (busy) idle = 0;
      else if (idle < kIdleMost) ++idle;  // capped: no overflow in long idle runs
      if (idle > 0 && idle <= kSpins) std::this_thread::yield();
    }
  } catch (...) {
    failure_ = std::current_exception();
    failed_.store(true, std::memory_order_release);
  }
}

}  // namespace strata::ps
