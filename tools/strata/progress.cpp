#include "progress.hpp"

#include <cmath>

#include <fmt/format.h>

namespace strata::cli {

std::string human(double v) {
  if (v >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.2f} k", v / 1e3);
  return fmt::format("{:.0f} ", v);
}

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.0f} s", std::ceil(s));
  const auto t = static_cast<long long>(std::ceil(s));
  return t < 3600 ? fmt::format("{}:{:02}", t / 60, t % 60) : fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
}

Progress::Progress(std::FILE* out, bool terminal, int epochs, std::string unit)
    : out_(out), terminal_(terminal), epochs_(epochs), unit_(std::move(unit)) {
  if (terminal_) {
    std::fprintf(out_, "[%s] 0/%d passes", std::string(30, ' ').c_str(), epochs_);
    std::fflush(out_);
  }
}

void Progress::update(const apps::PassReport& r) {
  elapsed_ += r.seconds;
  const double rate = r.seconds > 0 ? static_cast<double>(r.items) / r.seconds : 0;
  const double eta = elapsed_ / r.pass * (epochs_ - r.pass);
  const std::string loss = r.metrics.empty() ? "" : fmt::format("{} {:.6g}", r.metrics[0].name, r.metrics[0].value);
  if (terminal_) {
    const int filled = 30 * r.pass / epochs_;
    std::fprintf(out_, "\r[%s%s] %d/%d passes  %s%s/s  ETA %s  %s\x1b[K", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(30 - filled), ' ').c_str(), r.pass, epochs_, human(rate).c_str(),
                 unit_.c_str(), duration(eta).c_str(), loss.c_str());
  } else {
    if (r.restored)
      std::fprintf(out_, "pass %d/%d: %s, restored from the checkpoint\n", r.pass, epochs_, loss.c_str());
    else
      std::fprintf(out_, "pass %d/%d: %s, %.3f s, %s%s/s, ETA %s\n", r.pass, epochs_, loss.c_str(), r.seconds,
                   human(rate).c_str(), unit_.c_str(), duration(eta).c_str());
  }
  std::fflush(out_);
}

void Progress::finish() {
  if (terminal_) std::fprintf(out_, "\n");
  std::fflush(out_);
}

std::string pass_table(const std::vector<apps::PassReport>& passes, const std::string& unit) {
  if (passes.empty()) return "";
  std::string s = fmt::format("{:>4}", "pass");
  for (const auto& m : passes.front().metrics) s += fmt::format("  {:>12}", m.name);
  s += fmt::format("  {:>9}  {:>14}\n", "seconds", unit + "/s");
  double total = 0;
  for (const auto& r : passes) {
    s += fmt::format("{:>4}", r.pass);
    for (const auto& m : r.metrics) s += fmt::format("  {:>12.6g}", m.value);
    const double rate = r.seconds > 0 ? static_cast<double>(r.items) / r.seconds : 0;
    s += fmt::format("  {:>9.3f}  {:>14}\n", r.seconds, human(rate));
    total += r.seconds;
  }
  s += fmt::format("total training time {:.3f} s\n", total);
  return s;
}

}  // namespace strata::cli
