#include "io/mapped_file_guard.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace strata::io::detail {

namespace {

// Many loads at once are rare; a map beyond these slots is simply unguarded.
constexpr int kSlots = 64;

struct Slot {
  std::atomic<std::uintptr_t> begin{0}, end{0};  ///< end rounded up to a page; begin 0 = free
  std::atomic<bool> faulted{false};
};

Slot g_slots[kSlots];
std::uintptr_t g_page = 4096;
struct sigaction g_previous {};
std::once_flag g_installed;
std::mutex g_claim;  // between threads claiming slots; the handler never takes it

// Only async-signal-safe calls here: atomics, mmap, sigaction.
void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto at = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (auto& s : g_slots) {
    const std::uintptr_t begin = s.begin.load(std::memory_order_acquire), end = s.end.load(std::memory_order_acquire);
    if (begin == 0 || at < begin || at >= end) continue;
    // Zero pages from the faulting page to the end of the map: the read is retried
    // and finds zeros; the owner sees `faulted` and reports the truncation.
    const std::uintptr_t from = at & ~(g_page - 1);
    if (::mmap(reinterpret_cast<void*>(from), end - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
        MAP_FAILED)
      break;
    s.faulted.store(true, std::memory_order_release);
    return;
  }
  // Not a mapped file's fault: what was there before (Open MPI's backtrace printer,
  // a sanitizer), or the default action, which ends the process when the faulting
  // instruction runs again.
  if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  ::sigemptyset(&fallback.sa_mask);
  ::sigaction(SIGBUS, &fallback, nullptr);
}

void install() {
  g_page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  struct sigaction act {};
  act.sa_sigaction = on_sigbus;
  act.sa_flags = SA_SIGINFO | SA_NODEFER;
  ::sigemptyset(&act.sa_mask);
  ::sigaction(SIGBUS, &act, &g_previous);
}

}  // namespace

int guard_mapping(const void* data, std::size_t bytes) {
  std::call_once(g_installed, install);
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t end = (begin + bytes + g_page - 1) & ~(g_page - 1);
  std::lock_guard lock(g_claim);
  for (int k = 0; k < kSlots; ++k) {
    Slot& s = g_slots[k];
    if (s.begin.load(std::memory_order_relaxed) != 0) continue;
    s.faulted.store(false, std::memory_order_relaxed);
    s.end.store(end, std::memory_order_relaxed);
    s.begin.store(begin, std::memory_order_release);
    return k;
  }
  return -1;
}

bool mapping_faulted(int slot) { return slot >= 0 && g_slots[slot].faulted.load(std::memory_order_acquire); }

void unguard_mapping(int slot) {
  if (slot < 0) return;
  std::lock_guard lock(g_claim);
  g_slots[slot].begin.store(0, std::memory_order_release);
}

}  // namespace strata::io::detail
