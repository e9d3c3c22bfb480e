// Parallel loading: the loaded array equals a reference built in the test, for any
// rank count (ctest runs this with 1, 2 and 4 ranks), and bad input raises the same
// error, with the right line number, on every rank.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>

#include "strata/io/load.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;
using testing::TempDir;

void write_file(const std::string& path, const std::string& text) {
  if (rt().rank() == 0) {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  rt().comm().barrier();
}

// A rating file of `n` distinct (user, item) pairs with every separator style,
// comments, blank lines and CRLF endings; the expected entries are returned.
std::string make_ratings_text(int n, std::map<Index<2>, float>& expected) {
  RandomStream rs(11);
  std::string text = "# user item rating\n";
  const char* seps[] = {" ", "\t", ",", ", "};
  while (static_cast<int>(expected.size()) < n) {
    const auto u = static_cast<std::int64_t>(rs.below(300)), i = static_cast<std::int64_t>(rs.below(200));
    if (expected.count({u, i})) continue;
    const float v = static_cast<float>(rs.below(10)) * 0.5f;
    expected[{u, i}] = v;
    const char* sep = seps[rs.below(4)];
    text += fmt::format("{}{}{}{}{}{}", u, sep, i, sep, v, rs.below(10) == 0 ? "\r\n" : "\n");
    if (rs.below(50) == 0) text += "\n";
    if (rs.below(80) == 0) text += "% comment\n";
  }
  return text;
}

TEST(Load, TripletsMatchReferenceOnAnyRankCount) {
  TempDir dir("load");
  std::map<Index<2>, float> expected;
  const std::string text = make_ratings_text(5000, expected);
  write_file(dir.file("r.txt"), text.substr(0, text.size() - 1));  // no final newline
  LoadReport rep;
  const auto R = load_sparse<float, 2>(rt(), dir.file("r.txt"), parse::triplets, {}, {}, &rep);
  EXPECT_EQ(R.nnz(), 5000);
  EXPECT_EQ(rep.records, 5000);
  EXPECT_EQ(rep.bytes, static_cast<std::int64_t>(text.size() - 1));
  std::int64_t max_u = 0, max_i = 0;
  for (const auto& [k, v] : expected) max_u = std::max(max_u, k[0]), max_i = std::max(max_i, k[1]);
  EXPECT_EQ(R.shape(), (Shape<2>{max_u + 1, max_i + 1}));
  const auto got = R.gather_entries();
  ASSERT_EQ(got.size(), expected.size());
  auto it = expected.begin();
  for (const auto& e : got) {
    ASSERT_EQ(e.index, it->first);
    ASSERT_EQ(e.value, it->second);
    ++it;
  }
  for (const auto& k : R.local_keys()) EXPECT_TRUE(R.is_local(k));
}

TEST(Load, MalformedLineNamesFileLineAndTextOnEveryRank) {
  TempDir dir("load-bad");
  std::string text;
  for (int l = 1; l <= 4000; ++l) text += (l == 3777 ? std::string("12 x 3.0") : fmt::format("{} {} 1.5", l, l % 7)) + "\n";
  write_file(dir.file("bad.txt"), text);
  try {
    load_sparse<float, 2>(rt(), dir.file("bad.txt"), parse::triplets);
    ADD_FAILURE() << "loaded a malformed file";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), dir.file("bad.txt"));
    EXPECT_EQ(e.line(), 3777);
    EXPECT_EQ(e.text(), "12 x 3.0");
    EXPECT_NE(std::string(e.what()).find(":3777: bad column index 'x'"), std::string::npos) << e.what();
  }
  // The skip option drops exactly the bad line and counts it.
  LoadOptions skip;
  skip.skip_bad_lines = true;
  LoadReport rep;
  const auto R = load_sparse<float, 2>(rt(), dir.file("bad.txt"), parse::triplets, skip, {}, &rep);
  EXPECT_EQ(R.nnz(), 3999);
  EXPECT_EQ(rep.bad_lines, 1);
  EXPECT_EQ(rep.lines, 4000);
}

TEST(Load, GivenShapeAndIndexBaseAreEnforced) {
  TempDir dir("load-shape");
  write_file(dir.file("a.txt"), "1 1 1\n2 3 1\n5 1 1\n");
  LoadOptions one_based;
  one_based.index_base = 1;
  const auto A = load_sparse<double, 2>(rt(), dir.file("a.txt"), parse::triplets, one_based, Shape<2>{5, 3});
  EXPECT_EQ(A.shape(), (Shape<2>{5, 3}));
  EXPECT_EQ(A.gather_entries().back().index, (Index<2>{4, 0}));
  try {
    load_sparse<double, 2>(rt(), dir.file("a.txt"), parse::triplets, one_based, Shape<2>{4, 3});
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
  }
  write_file(dir.file("zero.txt"), "1 1 1\n0 2 1\n");
  try {
    load_sparse<double, 2>(rt(), dir.file("zero.txt"), parse::triplets, one_based);
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("below the index base 1"), std::string::npos);
  }
}

TEST(Load, DuplicatesAreAnErrorUnlessAPolicyIsChosen) {
  TempDir dir("load-dup");
  write_file(dir.file("d.txt"), "0 0 1\n1 1 2\n0 0 3\n");
  // The file's fault, so a ParseError naming both lines (it was a ShapeError naming neither).
  try {
    load_sparse<float, 2>(rt(), dir.file("d.txt"), parse::triplets);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.reason(), "index (0, 0) appears again (first on line 1); LoadOptions::duplicates (sum, first or last) "
                          "merges repeated indices");
  }
  LoadOptions sum;
  sum.duplicates = Duplicates::sum;
  EXPECT_EQ((load_sparse<float, 2>(rt(), dir.file("d.txt"), parse::triplets, sum)).gather_entries().front().value, 4.0f);
  LoadOptions last;
  last.duplicates = Duplicates::last;
  EXPECT_EQ((load_sparse<float, 2>(rt(), dir.file("d.txt"), parse::triplets, last)).gather_entries().front().value, 3.0f);
}

// MovieLens files: a header line of column names is skipped (and counted in the line
// numbers); parse_entries keeps the file's order across ranks.
TEST(Load, RatingsWithAHeaderLineInFileOrder) {
  TempDir dir("load-ratings");
  std::string text = "# MovieLens\nuserId,movieId,rating,timestamp\n";
  for (int k = 0; k < 500; ++k) text += fmt::format("{},{},{},{}\n", (k * 37) % 101, k, k % 10 * 0.5, 1000 + k);
  write_file(dir.file("r.csv"), text);
  LoadReport report;
  const auto mine = parse_entries<float, 2>(rt(), dir.file("r.csv"), parse::ratings, {}, {}, &report);
  EXPECT_EQ(report.records, 500);
  EXPECT_EQ(report.lines, 502);
  Bytes bytes(reinterpret_cast<const std::byte*>(mine.data()),
              reinterpret_cast<const std::byte*>(mine.data() + mine.size()));
  int k = 0;
  for (const auto& part : rt().comm().allgatherv(bytes))
    for (std::size_t at = 0; at < part.size(); at += sizeof(Entry<float, 2>), ++k) {
      Entry<float, 2> e;
      std::memcpy(&e, part.data() + at, sizeof e);
      ASSERT_EQ(e.index, (Index<2>{(k * 37) % 101, k})) << k;
      ASSERT_EQ(e.value, static_cast<float>(k % 10 * 0.5)) << k;
    }
  EXPECT_EQ(k, 500);
  EXPECT_EQ((load_sparse<float, 2>(rt(), dir.file("r.csv"), parse::ratings)).nnz(), 500);
  write_file(dir.file("bad.csv"), "userId,movieId,rating\n1,2,3\n1,3,nan\n");
  try {
    load_sparse<float, 2>(rt(), dir.file("bad.csv"), parse::ratings);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
  }
}

TEST(Load, MissingFileIsAnIoErrorOnEveryRank) {
  try {
    load_sparse<float, 2>(rt(), "/nonexistent/ratings.txt", parse::triplets);
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ratings.txt"), std::string::npos);
  }
}

TEST(Load, EmptyFileGivesAnEmptyArray) {
  TempDir dir("load-empty");
  write_file(dir.file("e.txt"), "");
  const auto E = load_sparse<float, 2>(rt(), dir.file("e.txt"), parse::triplets);
  EXPECT_EQ(E.nnz(), 0);
  EXPECT_EQ(E.shape(), (Shape<2>{0, 0}));
}

TEST(Load, EdgeLists) {
  TempDir dir("load-edges");
  write_file(dir.file("g.txt"), "# graph\n0 1\n1 2 0.5\n2,0,2\n\n3 0\n");
  const auto G = load_sparse<float, 2>(rt(), dir.file("g.txt"), parse::edges);
  const auto e = G.gather_entries();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].index, (Index<2>{0, 1}));
  EXPECT_EQ(e[0].value, 1.0f);
  EXPECT_EQ(e[1].value, 0.5f);
  EXPECT_EQ(e[2].value, 2.0f);
  EXPECT_EQ(G.shape(), (Shape<2>{4, 3}));
}

TEST(Load, UserParserForA3DTensor) {
  TempDir dir("load-user");
  std::string text;
  for (int k = 0; k < 500; ++k) text += fmt::format("{}|{}|{}|{}\n", k % 5, k % 7, k, k * 0.25);
  text += "oops\n";
  write_file(dir.file("t.txt"), text);
  auto parser = [](std::string_view line, io::Emit<double, 3>& emit) {
    Index<3> i{};
    std::size_t pos = 0;
    for (std::size_t d = 0; d < 3; ++d) {
      const auto bar = line.find('|', pos);
      if (bar == std::string_view::npos) throw io::LineError{"expected 4 fields separated by '|'"};
      i[d] = std::stoll(std::string(line.substr(pos, bar - pos)));
      pos = bar + 1;
    }
    emit(i, std::stod(std::string(line.substr(pos))));
  };
  try {
    load_sparse<double, 3>(rt(), dir.file("t.txt"), parser);
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 501);
  }
  LoadOptions skip;
  skip.skip_bad_lines = true;
  const auto T = load_sparse<double, 3>(rt(), dir.file("t.txt"), parser, skip);
  EXPECT_EQ(T.nnz(), 500);
  EXPECT_EQ(T.shape(), (Shape<3>{5, 7, 500}));
  for (const auto& e : T.gather_entries()) ASSERT_EQ(e.value, static_cast<double>(e.index[2]) * 0.25);
}

TEST(Load, Docword) {
  TempDir dir("load-docword");
  write_file(dir.file("docword.txt"), "3\n4\n5\n1 1 2\n1 4 1\n2 2 7\n3 1 1\n3 3 3\n");
  const auto D = load_docword<int>(rt(), dir.file("docword.txt"));
  EXPECT_EQ(D.shape(), (Shape<2>{3, 4}));
  const auto e = D.gather_entries();
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[2].index, (Index<2>{1, 1}));
  EXPECT_EQ(e[2].value, 7);
  // Header and record errors name the line.
  write_file(dir.file("short.txt"), "3\n4\n9\n1 1 2\n");
  try {
    load_docword<int>(rt(), dir.file("short.txt"));
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("promises 9 records"), std::string::npos) << e.what();
  }
  write_file(dir.file("hdr.txt"), "3\nfour\n5\n");
  try {
    load_docword<int>(rt(), dir.file("hdr.txt"));
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
  }
  write_file(dir.file("big.txt"), "3\n4\n1\n4 1 1\n");
  try {
    load_docword<int>(rt(), dir.file("big.txt"));
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 4);
  }
}

TEST(Load, Libsvm) {
  TempDir dir("load-libsvm");
  std::string text = "# samples\n";
  for (int s = 0; s < 300; ++s) {
    text += s % 2 ? "+1" : "-1";
    if (s % 10 == 0) text += " qid:3";
    for (int f = 1 + s % 3; f <= 20; f += 1 + s % 5) text += fmt::format(" {}:{}", f, s + f * 0.5);
    text += s % 4 == 0 ? " # note\n" : "\n";
  }
  write_file(dir.file("s.svm"), text);
  const auto data = load_libsvm(rt(), dir.file("s.svm"));
  EXPECT_EQ(data.labels.extent(0), 300);
  EXPECT_EQ(data.features.shape(), (Shape<2>{300, 20}));
  const auto labels = data.labels.gather();
  for (int s = 0; s < 300; ++s) ASSERT_EQ(labels[static_cast<std::size_t>(s)], s % 2 ? 1.0f : -1.0f);
  std::int64_t count = 0;
  for (const auto& e : data.features.gather_entries()) {
    const auto s = e.index[0], f = e.index[1] + 1;
    ASSERT_EQ((f - 1 - s % 3) % (1 + s % 5), 0);
    ASSERT_EQ(e.value, static_cast<float>(static_cast<double>(s) + static_cast<double>(f) * 0.5));
    ++count;
  }
  EXPECT_EQ(count, data.features.nnz());
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {"1 3:1 2:1", "does not increase"}, {"1 3 4:1", "expected ':'"}, {"yes 1:1", "bad label"},
           {"1 0:1", "below the index base"}, {"1 2:x", "bad feature value"}}) {
    write_file(dir.file("bad.svm"), "1 1:1\n" + bad + "\n");
    try {
      load_libsvm(rt(), dir.file("bad.svm"));
      ADD_FAILURE() << bad;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), 2) << bad;
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

// The CSR loader reads what load_libsvm reads, in file order, whole on every rank,
// for any number of ranks and threads; its errors name the line as load_libsvm's do.
TEST(Load, LibsvmRows) {
  TempDir dir("load-libsvm-rows");
  std::string text = "# samples\n";
  for (int s = 0; s < 500; ++s) {
    text += s % 3 ? "+1" : "0";
    for (int f = 1 + s % 4; f <= 40; f += 1 + s % 7) text += fmt::format(" {}:{}", f, s - f * 0.25);
    text += s % 50 == 7 ? "\n\n" : "\n";  // blank lines take no sample
  }
  write_file(dir.file("s.svm"), text);
  LoadReport report;
  const LibsvmRows rows = load_libsvm_rows(rt(), dir.file("s.svm"), {}, &report, LibsvmLabels::binary);
  const auto data = load_libsvm(rt(), dir.file("s.svm"));
  ASSERT_EQ(rows.samples(), 500);
  ASSERT_EQ(rows.offsets.size(), 501u);
  EXPECT_EQ(rows.feature_count, data.features.extent(1));
  EXPECT_EQ(report.records, data.features.nnz());
  EXPECT_EQ(rows.labels, data.labels.gather());
  const auto entries = data.features.gather_entries();  // by sample, then feature
  ASSERT_EQ(rows.features.size(), entries.size());
  for (std::int64_t i = 0, k = 0; i < rows.samples(); ++i)
    for (; k < rows.offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      const auto& e = entries[static_cast<std::size_t>(k)];
      ASSERT_EQ(e.index[0], i);
      ASSERT_EQ(rows.features[static_cast<std::size_t>(k)], e.index[1]);
      ASSERT_EQ(rows.values[static_cast<std::size_t>(k)], e.value);
    }
  write_file(dir.file("bad.svm"), text + "2 1:1\n");  // not a binary label
  try {
    load_libsvm_rows(rt(), dir.file("bad.svm"), {}, nullptr, LibsvmLabels::binary);
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 512);  // the comment, 500 samples and 10 blank lines before it
  }
  write_file(dir.file("huge.svm"), "1 2147483648:1\n");
  EXPECT_THROW(load_libsvm_rows(rt(), dir.file("huge.svm")), ParseError);
}

}  // namespace
}  // namespace strata
