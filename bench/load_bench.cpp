// Loading throughput: parses a rating-triplet file into a sparse DistArray several
// times and prints median figures. Run it as one process and under mpirun.
//
//   strata-load-bench FILE [--repeat R] [--strata-threads T]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_util.hpp"
#include "strata/io/load.hpp"

int main(int argc, char** argv) try {
  strata::Runtime rt(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: strata-load-bench FILE [--repeat R]\n");
    return 2;
  }
  const std::string path = argv[1];
  int repeat = 5;
  if (argc >= 4 && std::string(argv[2]) == "--repeat") repeat = std::max(1, std::atoi(argv[3]));
  std::vector<double> parse_mbs, total_mbs, parse_s, route_s, total_s;
  std::int64_t bytes = 0, records = 0;
  for (int r = 0; r < repeat; ++r) {
    strata::LoadReport rep;
    auto R = strata::load_sparse<float, 2>(rt, path, strata::parse::triplets, {}, {}, &rep);
    bytes = rep.bytes;
    records = rep.records;
    const double per_rank_mb = static_cast<double>(rep.bytes) / rt.size() / 1e6;
    parse_mbs.push_back(per_rank_mb / rep.parse_seconds);
    total_mbs.push_back(per_rank_mb / rep.total_seconds);
    parse_s.push_back(rep.parse_seconds);
    route_s.push_back(rep.route_seconds);
    total_s.push_back(rep.total_seconds);
  }
  if (rt.rank() == 0) {
    std::printf("machine: %s\n", strata::bench::machine().c_str());
    std::printf("file: %s, %.1f MB, %lld records; %d rank(s) x %d thread(s); median of %d runs (page cache warm)\n",
                path.c_str(), static_cast<double>(bytes) / 1e6, static_cast<long long>(records), rt.size(),
                rt.threads(), repeat);
    std::printf("read+parse:   %7.3f s  %8.1f MB/s per rank  %8.1f MB/s total\n", strata::bench::median(parse_s),
                strata::bench::median(parse_mbs), strata::bench::median(parse_mbs) * rt.size());
    std::printf("route+sort:   %7.3f s\n", strata::bench::median(route_s));
    std::printf("whole load:   %7.3f s  %8.1f MB/s per rank  %8.1f MB/s total\n", strata::bench::median(total_s),
                strata::bench::median(total_mbs), strata::bench::median(total_mbs) * rt.size());
  }
  return 0;
} catch (const strata::Error& e) {
  std::fprintf(stderr, "strata-load-bench: %s\n", e.what());
  return 1;
}
