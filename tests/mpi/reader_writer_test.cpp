// ArrayReader and BufferWriter: a loop body's reads and adds with the lookups hoisted
// out of its inner loops. They must give what the array's read and the Buffer's add
// give, and count, observe and refuse what those do. ctest runs these with 1, 2 and
// 4 ranks, 1 and 2 threads each.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

std::int64_t reader_slot(std::int64_t i, std::int64_t slots) { return testing::hashed_slot(i, slots, 5); }

// Reads through a reader see what the array's own read sees, at every clock and
// staleness; adds through a writer all arrive; the planner still sees both (the
// loop runs data-parallel only because the writes go through the Buffer).
TEST(ReaderWriter, ReadsMatchTheArraysReadAndNothingIsLost) {
  const std::int64_t n = 6000, slots = 211;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0] % 7 - 2; });
  for (const int s : {0, 2}) {
    for (const std::int64_t every : {0, 37}) {
      auto counts = DistArray<std::int64_t, 1>::fill(rt(), {slots}, 3);
      Buffer buf(counts, apply::sum(), ssp(s).every(every));
      std::atomic<std::int64_t> mismatches{0};
      auto body = [&](const Index<1>& i, std::int64_t v) {
        const auto reader = counts.reader();
        const auto writer = buf.writer();
        for (std::int64_t k = 0; k < 3; ++k) {
          const std::int64_t u = (i[0] * 13 + k * 101) % slots;
          if (reader.read({u}) != counts.read({u})) ++mismatches;
        }
        writer.add({reader_slot(i[0], slots)}, v);
        writer.add({(i[0] * 31) % slots}, 1);
      };
      std::vector<std::int64_t> want(static_cast<std::size_t>(slots), 3);
      for (int pass = 0; pass < 2; ++pass) {
        const LoopReport report = parallel_for(space, body);
        EXPECT_EQ(report.strategy, analysis::Strategy::data_parallel) << report.explain();
        for (std::int64_t i = 0; i < n; ++i) {
          want[static_cast<std::size_t>(reader_slot(i, slots))] += i % 7 - 2;
          want[static_cast<std::size_t>((i * 31) % slots)] += 1;
        }
        ASSERT_EQ(counts.gather(), want) << "s = " << s << ", clock every " << every << ", pass " << pass;
      }
      EXPECT_EQ(mismatches.load(), 0) << "s = " << s << ", clock every " << every;
    }
  }
}

// A reader's cached reads are counted like the array's own: the same loop read
// either way adds the same number of cache reads.
TEST(ReaderWriter, ReadersCountTheirCacheReads) {
  const std::int64_t n = 3000, slots = 500;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<double, 1>::fill(rt(), {slots}, 1.0);
  Buffer buf(w, apply::sum(), ssp(0));
  Accumulator<double> sum(rt());
  auto through_array = [&](const Index<1>& i, std::int64_t) {
    for (std::int64_t k = 0; k < 4; ++k) sum += w.read({(i[0] + k * 7) % slots});
  };
  auto through_reader = [&](const Index<1>& i, std::int64_t) {
    const auto r = w.reader();
    for (std::int64_t k = 0; k < 4; ++k) sum += r.read({(i[0] + k * 7) % slots});
  };
  auto cache_reads_of_second_call = [&](auto& body) {
    parallel_for(space, body);  // the first call records the read set
    sum.take();
    const std::int64_t before = buf.stats().cache_reads;
    parallel_for(space, body);
    EXPECT_DOUBLE_EQ(sum.take(), 4.0 * static_cast<double>(n));
    return rt().comm().allreduce(buf.stats().cache_reads - before, ReduceOp::sum);
  };
  const std::int64_t by_array = cache_reads_of_second_call(through_array);
  const std::int64_t by_reader = cache_reads_of_second_call(through_reader);
  EXPECT_EQ(by_array, 4 * n);
  EXPECT_EQ(by_reader, by_array);
}

// Units outside the recorded read set go the array's way: the same values, and
// counted as dynamic reads just as the array's own reads of them are (across ranks;
// one rank caches every unit).
TEST(ReaderWriter, ReadsOutsideTheRecordedSetAreCountedAsDynamic) {
  const std::int64_t n = 3000;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto a = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 3 * i[0] + 1; });
  auto b = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 3 * i[0] + 1; });
  Buffer abuf(a, apply::sum(), ssp(0)), bbuf(b, apply::sum(), ssp(0));
  std::int64_t shift = 0;  // a quadratic subscript: only the recorded set says what is read
  Accumulator<std::int64_t> sum(rt());
  auto through_array = [&](const Index<1>& i, std::int64_t) { sum += a.read({(i[0] * i[0] + shift) % n}); };
  auto through_reader = [&](const Index<1>& i, std::int64_t) {
    sum += b.reader().read({(i[0] * i[0] + shift) % n});
  };
  for (const std::int64_t s : {std::int64_t{0}, std::int64_t{1}}) {
    shift = s;
    const std::int64_t a_before = abuf.stats().dynamic_reads, b_before = bbuf.stats().dynamic_reads;
    parallel_for(space, through_array);
    const std::int64_t by_array = sum.take();
    parallel_for(space, through_reader);
    EXPECT_EQ(sum.take(), by_array) << "shift " << s;
    const std::int64_t a_dynamic = rt().comm().allreduce(abuf.stats().dynamic_reads - a_before, ReduceOp::sum);
    const std::int64_t b_dynamic = rt().comm().allreduce(bbuf.stats().dynamic_reads - b_before, ReduceOp::sum);
    EXPECT_EQ(b_dynamic, a_dynamic) << "shift " << s;
    if (s == 1 && rt().size() > 1) {
      EXPECT_GT(b_dynamic, 0) << "shift 1 reads units the first call did not";
    }
    if (rt().size() == 1) {
      EXPECT_EQ(b_dynamic, 0) << "one rank's cache is the array, holding every unit";
    }
  }
}

// Hybrid folds each add into the rank's cache as it is written: a writer leaves
// that to Buffer::add, so the counts still arrive whole.
TEST(ReaderWriter, WritersOfHybridArraysFoldThroughTheBuffer) {
  const int W = rt().size() * rt().threads();
  const std::int64_t n = 64 * W;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto counts = DistArray<std::int64_t, 1>::zeros(rt(), {7});
  Buffer buf(counts, apply::sum(), hybrid().every(8));
  for (int pass = 1; pass <= 2; ++pass) {
    parallel_for(space, [&](const Index<1>& i, std::int64_t) { buf.writer().add({i[0] % 7}, 2); });
    std::int64_t total = 0;
    for (const auto c : counts.gather()) total += c;
    EXPECT_EQ(total, 2 * n * pass);
  }
}

// Arrays of two dimensions: a reader's and a writer's elements (fast path or not)
// are the array's and the Buffer's, with the same results.
TEST(ReaderWriter, MatricesGoThroughTheArrayAndTheBuffer) {
  const std::int64_t n = 900, rows = 13, cols = 5;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto m = DistArray<std::int64_t, 2>::zeros(rt(), {rows, cols});
  Buffer buf(m, apply::sum(), ssp(1).every(20));
  std::atomic<std::int64_t> mismatches{0};
  parallel_for(space, [&](const Index<1>& i, std::int64_t) {
    const Index<2> at{i[0] % rows, i[0] % cols};
    if (m.reader().read(at) != m.read(at)) ++mismatches;
    buf.writer().add(at, 1);
  });
  EXPECT_EQ(mismatches.load(), 0);
  std::int64_t total = 0;
  for (const auto c : m.gather()) total += c;
  EXPECT_EQ(total, n);
}

// An index out of bounds is refused as the array's read and the Buffer's add refuse it.
TEST(ReaderWriter, IndicesOutOfBoundsAreRefused) {
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {100}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<std::int64_t, 1>::zeros(rt(), {10});
  Buffer buf(w, apply::sum(), ssp(0));
  EXPECT_THROW(parallel_for(space, [&](const Index<1>&, std::int64_t) { (void)w.reader().read({10}); }), ShapeError);
  EXPECT_THROW(parallel_for(space, [&](const Index<1>&, std::int64_t) { buf.writer().add({-1}, 1); }), ShapeError);
}

}  // namespace
}  // namespace strata
