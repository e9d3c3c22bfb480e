#include "runtime/failure_report.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace strata::detail {
namespace {

// Plain static buffers: the signal handler may only read memory and call write(2).
// A thread may be rewriting one while the handler reads it; the worst outcome is a
// garbled description in a message printed as the process dies anyway.
constexpr std::size_t kText = 160;
char g_loop[kText] = "";
char g_wait[kText] = "";
int g_rank = -1;

void put(char (&dst)[kText], std::string_view what) {
  const std::size_t n = std::min(what.size(), kText - 1);
  std::memcpy(dst, what.data(), n);
  dst[n] = '\0';
}

struct Line {
  char text[512];
  std::size_t n = 0;
  void add(const char* s) {
    while (*s && n + 1 < sizeof text) text[n++] = *s++;
  }
  void add_int(int v) {
    char digits[16];
    int k = 0;
    if (v < 0) {
      add("-");
      v = -v;
    }
    do digits[k++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) > 0 && k < 15);
    while (k > 0 && n + 1 < sizeof text) text[n++] = digits[--k];
  }
};

extern "C" void on_stop(int sig) {
  Line l;
  l.add("[strata] rank ");
  l.add_int(g_rank);
  l.add(": stopped by signal ");
  l.add_int(sig);
  l.add(sig == SIGTERM ? " (from the launcher: another rank has probably failed)" : "");
  if (g_loop[0]) {
    l.add(" during ");
    l.add(g_loop);
  }
  if (g_wait[0]) {
    l.add(", waiting in ");
    l.add(g_wait);
  }
  l.add("\n");
  [[maybe_unused]] const auto ignored = ::write(STDERR_FILENO, l.text, l.n);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void report_launcher_stops(int rank) {
  g_rank = rank;
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, on_stop);
}

void note_loop_call(std::string_view what) { put(g_loop, what); }
void note_wait(std::string_view what) { put(g_wait, what); }

}  // namespace strata::detail
