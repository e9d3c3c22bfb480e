// Writes a synthetic rating file "user item rating" (one triplet per line): the
// ratings `strata train mf --synthetic ...` generates (apps/mf/problem.hpp: a
// planted low-rank model, distinct user-item pairs, Zipf item popularity), all of
// them, in the generator's shuffled order. For benchmarks that read a file.
//
//   strata-gen-ratings --out FILE [--lines N] [--users U] [--items I] [--rank R] [--seed S]
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "mf/problem.hpp"
#include "strata/error.hpp"

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "strata-gen-ratings: %s\nusage: strata-gen-ratings --out FILE [--lines N] [--users U] "
                       "[--items I] [--rank R] [--seed S]\n", why.c_str());
  std::exit(2);
}

long long number(const std::string& opt, const char* v) {
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || x <= 0) usage(fmt::format("{} needs a positive integer, got '{}'", opt, v));
  return x;
}

}  // namespace

int main(int argc, char** argv) try {
  strata::apps::mf::SyntheticSpec spec;
  spec.ratings = 10'000'000;
  spec.users = 200'000;
  spec.items = 20'000;
  long long seed = 1;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const char* v = argv[++i];
    if (a == "--out") out = v;
    else if (a == "--lines") spec.ratings = number(a, v);
    else if (a == "--users") spec.users = number(a, v);
    else if (a == "--items") spec.items = number(a, v);
    else if (a == "--rank") spec.rank = static_cast<int>(number(a, v));
    else if (a == "--seed") seed = number(a, v);
    else usage("unknown option " + a);
  }
  if (out.empty()) usage("--out is required");
  const auto p = strata::apps::mf::generate(spec, 0.0, static_cast<std::uint64_t>(seed));
  std::FILE* f = std::fopen(out.c_str(), "wb");
  if (!f) usage(fmt::format("cannot write '{}': {}", out, std::strerror(errno)));
  fmt::memory_buffer buf;
  for (const auto& r : p.train) {
    fmt::format_to(std::back_inserter(buf), "{} {} {}\n", r.user, r.item, r.value);
    if (buf.size() > (1 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  if (std::fclose(f) != 0) usage(fmt::format("error writing '{}'", out));
  return 0;
} catch (const strata::Error& e) {
  usage(e.what());
}
