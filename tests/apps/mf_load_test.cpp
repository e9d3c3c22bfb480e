// The mf app's reader (mf::load over strata::parse::ratings): MovieLens files, ids
// renumbered densely, and hostile input (issue #29) refused naming the file and
// line instead of turning into other data: ids of 2^63 and more, a first record
// taken for a header, values a float cannot hold, a cut last line, a pair rated
// twice. ctest runs it on 1, 2 and 4 ranks, so every file is read in parallel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <span>
#include <tuple>

#include "mf/problem.hpp"
#include "mf/repeated_pair.hpp"
#include "strata/error.hpp"
#include "strata/thread_pool.hpp"
#include "test_runtime.hpp"

namespace strata::apps::mf {
namespace {

using strata::testing::rt;

class MfLoader : public ::testing::Test {
 protected:
  // A file every rank reads: written once, by rank 0, under a fresh name.
  std::string write(const std::string& text) {
    const std::string path = dir_.file(fmt::format("ratings{}.txt", files_++));
    if (rt().rank() == 0) std::ofstream(path, std::ios::binary) << text;
    rt().comm().barrier();
    return path;
  }

  // The error loading `text` raises (every rank raises the same one); load_share
  // must raise the same.
  ParseError error_of(const std::string& text) {
    const std::string path = write(text);
    try {
      load(rt(), path, 0.0, 1);
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), path);
      try {
        load_share(rt(), path, 0.0, 1);
        ADD_FAILURE() << "load_share accepted '" << text << "'";
      } catch (const ParseError& shared) {
        EXPECT_EQ(shared.file(), path);
        EXPECT_EQ(shared.line(), e.line());
        EXPECT_EQ(shared.reason(), e.reason());
      }
      return e;
    }
    ADD_FAILURE() << "accepted '" << text << "'";
    return ParseError(path, 0, "", "accepted");
  }

  static SyntheticSpec spec(std::int64_t users, std::int64_t items, std::int64_t ratings) {
    SyntheticSpec s;
    s.users = users;
    s.items = items;
    s.ratings = ratings;
    return s;
  }

  static float sum_of(const Problem& p) {
    float sum = 0;
    for (const auto& r : p.train) sum += r.value;
    return sum;
  }

  strata::testing::TempDir dir_{"mf-load"};
  int files_ = 0;
};

TEST_F(MfLoader, SkipsHeaderAndCommentsAndRenumbersIds) {
  const Problem p = load(rt(), write("userId,movieId,rating\n# comment\n10,500,4.5\n\n10,7,3\n99,500,1\n"), 0.0, 1);
  EXPECT_EQ(p.users, 2);
  EXPECT_EQ(p.items, 2);
  ASSERT_EQ(p.train.size(), 3u);
  EXPECT_TRUE(p.test.empty());
  // Dense ids in increasing order of the file's: user 10 is 0, item 7 is 0.
  std::map<std::pair<std::int64_t, std::int64_t>, float> got;
  for (const auto& r : p.train) got[{r.user, r.item}] = r.value;
  EXPECT_EQ(got, (std::map<std::pair<std::int64_t, std::int64_t>, float>{{{0, 1}, 4.5f}, {{0, 0}, 3}, {{1, 1}, 1}}));
}

// Users far apart (renumbered through their sorted ids) next to dense items
// (through a table): both dimensions are renumbered in the same passes, in
// increasing order of the file's ids, by load and by load_share alike.
TEST_F(MfLoader, SparseUsersAndDenseItemsAreRenumberedTogether) {
  const std::string path = write("1000000000000000 3 1\n5 0 2\n999999999999 3 4\n5 2 5\n");
  for (const Problem& p : {load(rt(), path, 0.0, 1), load_share(rt(), path, 0.0, 1)}) {
    EXPECT_EQ(p.user_ids, (std::vector<std::int64_t>{5, 999999999999, 1000000000000000}));
    EXPECT_EQ(p.item_ids, (std::vector<std::int64_t>{0, 2, 3}));
    std::vector<Rating> all = p.train;  // a share: every rank's, gathered
    if (p.shared) {
      all.clear();
      for (const auto& part : rt().comm().allgatherv(std::as_bytes(std::span(p.train))))
        for (std::size_t k = 0; k < part.size() / sizeof(Rating); ++k) {
          Rating r;
          std::memcpy(&r, part.data() + k * sizeof(Rating), sizeof r);
          all.push_back(r);
        }
    }
    std::map<std::pair<std::int64_t, std::int64_t>, float> got;
    for (const auto& r : all) got[{r.user, r.item}] = r.value;
    EXPECT_EQ(got, (std::map<std::pair<std::int64_t, std::int64_t>, float>{
                       {{2, 2}, 1.0f}, {{0, 0}, 2.0f}, {{1, 2}, 4.0f}, {{0, 1}, 5.0f}}));
    EXPECT_EQ(all.size(), 4u);
  }
}

TEST_F(MfLoader, ReadsMovieLensTimestampsAndIgnoresThem) {
  // ratings.csv of MovieLens, and the tab-separated u.data of its 100k set.
  const Problem csv = load(rt(),
                           write("userId,movieId,rating,timestamp\n1,31,2.5,1260759144\n1,1029,3.0,1260759179\n"
                                 "2,31,4,835355493\n"),
                           0.0, 1);
  EXPECT_EQ(csv.users, 2);
  EXPECT_EQ(csv.items, 2);
  ASSERT_EQ(csv.train.size(), 3u);
  EXPECT_EQ(sum_of(csv), 9.5f);
  EXPECT_EQ(load(rt(), write("196\t242\t3\t881250949\n186\t302\t3\t891717742\n"), 0.0, 1).train.size(), 2u);
  for (const char* bad : {"1 2 3 x\n", "1 2 3 4.5\n", "1 2 3 4 5\n"})
    EXPECT_EQ(error_of(std::string("5 6 1\n") + bad).line(), 2) << bad;
}

TEST_F(MfLoader, BadLinesAndDuplicatesNameTheLine) {
  EXPECT_EQ(error_of("1 2 3\n1 2\n").line(), 2);
  const ParseError twice = error_of("1 2 3\n3 4 5\n1 2 4\n");
  EXPECT_EQ(twice.line(), 3);
  EXPECT_NE(std::string(twice.what()).find("user 1 rated item 2 already on line 1"), std::string::npos) << twice.what();
  EXPECT_THROW(load(rt(), "/nonexistent/ratings.txt", 0.1, 1), IoError);
  EXPECT_EQ(error_of("# nothing\n").reason(), "the file holds no ratings");
}

// sscanf's %lld saturated ids of 2^63 and more to 2^63 - 1, merging distinct users.
// The check splits the users over the pool's threads: a pair repeated by the first,
// a middle or the last user is found whatever the thread count, and distinct pairs
// pass.
TEST(RepeatedPair, FoundForAnyUserOnAnyThreadCount) {
  constexpr std::int64_t kUsers = 1000, kItems = 300;
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (std::int64_t u = 0; u < kUsers; ++u)
    for (std::int64_t i = u % 7; i < kItems; i += 37) pairs.emplace_back(u, (i * 13 + u) % kItems);
  for (const int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    auto repeated = [&](const auto& ps) {
      return has_repeated_pair(
          pool, ps.size(), kUsers, kItems, [&](std::size_t k) { return ps[k].first; },
          [&](std::size_t k) { return ps[k].second; });
    };
    EXPECT_FALSE(repeated(pairs)) << threads << " threads";
    for (const std::int64_t user : {std::int64_t{0}, kUsers / 2 + 1, kUsers - 1}) {
      auto with_repeat = pairs;
      const auto first = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == user; });
      with_repeat.insert(with_repeat.begin() + (with_repeat.end() - with_repeat.begin()) / 3, *first);
      EXPECT_TRUE(repeated(with_repeat)) << threads << " threads, user " << user;
    }
  }
}

TEST_F(MfLoader, IdsOf2To63AndAboveAreMalformedNotMerged) {
  const ParseError e = error_of("9223372036854775808 1 3\n9223372036854775809 2 4\n");
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.reason(), "bad user id '9223372036854775808'");
  EXPECT_EQ(error_of("1 2 3\n2 99999999999999999999 4\n").line(), 2);
  EXPECT_EQ(load(rt(), write("999999999999999999 1 3\n999999999999999998 1 4\n"), 0.0, 1).users, 2);
}

// Any letter on the first line made it a header, and it was dropped: a record with a
// value in exponent form, or with a value that is not a number, vanished silently.
TEST_F(MfLoader, AFirstLineHoldingANumberIsARecordNotAHeader) {
  const Problem p = load(rt(), write("1 1 3e0\n2 2 3\n3 1 4\n"), 0.0, 1);
  ASSERT_EQ(p.train.size(), 3u);
  EXPECT_EQ(sum_of(p), 10.0f);
  const ParseError nan = error_of("1 1 nan\n2 2 3\n");
  EXPECT_EQ(nan.line(), 1);
  EXPECT_EQ(nan.text(), "1 1 nan");
  EXPECT_EQ(error_of("nan,item,rating\n1 1 1\n").line(), 1);      // "nan" is a number, so no header
  EXPECT_EQ(error_of("user item rating\nid item 3\n").line(), 2);  // only the first line may be one
}

// 1e300 became inf through a double and surfaced as "training diverged".
TEST_F(MfLoader, ARatingAFloatCannotHoldIsMalformed) {
  const ParseError e = error_of("2 2 3\n1 1 1e300\n3 1 4\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.reason(), "bad rating '1e300'");
  EXPECT_EQ(error_of("2 2 3\n1 1 -inf\n").line(), 2);
}

// A file cut mid-record trained on what was left, with a wrong last value.
TEST_F(MfLoader, ACutLastLineIsAnErrorNotAShorterFile) {
  const ParseError exponent = error_of("1 1 3\n2 2 3\n3 1 2.5e-");
  EXPECT_EQ(exponent.line(), 3);
  EXPECT_EQ(exponent.reason(), "bad rating '2.5e-'");
  EXPECT_EQ(error_of("1,1,3.5,1260759144\n2,2,3,").line(), 2);
  EXPECT_EQ(error_of("1 1 3\n2 2").line(), 2);
}

// The problem does not depend on the ranks and threads that read it: ctest runs this
// on 1, 2 and 4 ranks of 1 and 2 threads, and the serial order of the training
// ratings (a shuffle of the file's order) and the held-out set are fixed here. The
// figures are those the reader gave before it used the library's parser.
TEST_F(MfLoader, LoadsTheSameProblemOnAnyRankAndThreadCount) {
  const Problem g = generate(spec(500, 200, 20000), 0.0, 5);
  std::string text = "user,item,rating\n";
  for (const auto& r : g.train) text += fmt::format("{},{},{}\n", 3 * r.user + 7, 11 * r.item, r.value);
  const Problem p = load(rt(), write(text), 0.1, 9);
  EXPECT_EQ(p.users, 500);
  EXPECT_EQ(p.items, 200);
  ASSERT_EQ(p.train.size(), 17957u);
  ASSERT_EQ(p.test.size(), 20000u - 17957u);
  std::uint64_t h = p.train.size();
  for (const auto* set : {&p.train, &p.test})
    for (const auto& r : *set)
      h = mix64(h ^ static_cast<std::uint64_t>(r.user * 1000003 + r.item) ^ static_cast<std::uint64_t>(r.value * 2));
  EXPECT_EQ(h, 0x80ac32125284a995u) << std::hex << h;
}

// load_share: each rank keeps what it parsed; together the shares are load()'s
// problem (the same ids, rows, held-out set and counts), and no rank holds it all.
TEST_F(MfLoader, SharesTogetherAreTheWholeProblem) {
  const Problem g = generate(spec(700, 150, 30000), 0.0, 3);
  std::string text = "user item rating\n";
  for (const auto& r : g.train) text += fmt::format("{} {} {}\n", 5 * r.user + 2, 13 * r.item + 1, r.value);
  const std::string path = write(text);
  const Problem whole = load(rt(), path, 0.2, 4);
  const Problem share = load_share(rt(), path, 0.2, 4);
  EXPECT_TRUE(share.shared);
  EXPECT_EQ(share.users, whole.users);
  EXPECT_EQ(share.items, whole.items);
  EXPECT_EQ(share.user_ids, whole.user_ids);
  EXPECT_EQ(share.item_ids, whole.item_ids);
  EXPECT_EQ(share.train_count, whole.train_count);
  EXPECT_EQ(share.test_count, whole.test_count);
  EXPECT_EQ(whole.train_count, static_cast<std::int64_t>(whole.train.size()));
  if (rt().size() > 1) {
    EXPECT_LT(share.train.size(), whole.train.size());
  }
  // Every rank's share, gathered, against the whole problem (as sorted sets).
  auto key = [](const Rating& r) { return std::tuple(r.user, r.item, r.value); };
  for (const auto& [mine, all] : {std::pair(&share.train, &whole.train), std::pair(&share.test, &whole.test)}) {
    std::vector<std::tuple<std::int32_t, std::int32_t, float>> got, want;
    for (const auto& part : rt().comm().allgatherv(std::as_bytes(std::span(*mine))))
      for (std::size_t k = 0; k < part.size() / sizeof(Rating); ++k) {
        Rating r;
        std::memcpy(&r, part.data() + k * sizeof(Rating), sizeof r);
        got.push_back(key(r));
      }
    for (const auto& r : *all) want.push_back(key(r));
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace strata::apps::mf
