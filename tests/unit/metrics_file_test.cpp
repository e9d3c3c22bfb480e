// The `strata` command's metrics files (CSV), on temporary files.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "metrics_file.hpp"
#include "strata/error.hpp"
#include "temp_dir_fixture.hpp"

namespace strata::cli {
namespace {

using MetricsFile = TempDir;

MetricsTable sample_table() {
  MetricsTable t;
  t.meta = {{"app", "mf"},
            {"label", "mf strata auto 2x2"},
            {"data", "synthetic:users=50000,items=5000"},
            {"odd", "50% \"fast\"\t\\n\\ back\\slash\nnext line\r  "},
            {"seed", "42"},
            {"empty", ""},
            {"quote", "\""},
            {"k", "a=b"}};
  t.columns = {"pass", "seconds", "elapsed", "items", "items_per_s", "loss", "test_rmse"};
  t.rows = {
      {1, 0.1, 0.1, 1e6, 1e7, 1.0 / 3.0, 0.9512345678901234},
      {2, 0.30000000000000004, 0.4, 1e6, 3333333.3333333335, 5e-324, -0.0},
      {3, 1.7976931348623157e308, 2.2250738585072014e-308, 123456789012345680.0, kInf, -kInf, kNaN},
  };
  return t;
}

TEST_F(MetricsFile, RoundTripIsBitExact) {
  const auto t = sample_table();
  write_metrics_csv(path("m.csv"), t);
  EXPECT_FALSE(fs::exists(path("m.csv.tmp")));
  const auto r = read_metrics_csv(path("m.csv"));
  EXPECT_EQ(r.meta, t.meta);
  EXPECT_EQ(r.columns, t.columns);
  EXPECT_EQ(r.source, path("m.csv"));
  ASSERT_EQ(r.rows.size(), t.rows.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    ASSERT_EQ(r.rows[i].size(), t.rows[i].size());
    for (std::size_t j = 0; j < t.rows[i].size(); ++j) {
      if (std::isnan(t.rows[i][j])) {
        EXPECT_TRUE(std::isnan(r.rows[i][j])) << i << "," << j;
      } else {
        EXPECT_EQ(std::bit_cast<std::uint64_t>(r.rows[i][j]),
                  std::bit_cast<std::uint64_t>(t.rows[i][j]))
            << i << "," << j << ": " << r.rows[i][j] << " vs " << t.rows[i][j];
      }
    }
  }
  // The format the brief describes: metadata first, then the header.
  const auto text = slurp(path("m.csv"));
  EXPECT_EQ(text.rfind("# app=mf data=synthetic:users=50000,items=5000 empty=\"\" k=a=b label=\"mf "
                       "strata auto 2x2\" ",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\npass,seconds,elapsed,items,items_per_s,loss,test_rmse\n1,0.1,0.1,"),
            std::string::npos)
      << text;
}

TEST_F(MetricsFile, OverwritesAnExistingFileWhole) {
  auto t = sample_table();
  write_metrics_csv(path("m.csv"), t);
  t.rows.resize(1);
  t.meta = {{"run", "second"}};
  write_metrics_csv(path("m.csv"), t);
  const auto r = read_metrics_csv(path("m.csv"));
  EXPECT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.meta, t.meta);
}

TEST_F(MetricsFile, ReadsHandWrittenFiles) {
  const auto p = write("h.csv",
                       "\xEF\xBB\xBF# app=mf run=my serial run\r\n"
                       "# written by hand\n"
                       "\n"
                       " pass , seconds,elapsed,items,items_per_s,loss\r\n"
                       "1, 0.5 ,0.5,100,200,+0.75\r\n"
                       "# seed=7 note=\"two  spaces\" open=\"unclosed\n"
                       "   \n"
                       "2,0.5,1.0,100,200,nan\n"
                       "3,0.5,1.5,100,200,1e-3");  // no final newline
  const auto r = read_metrics_csv(p);
  EXPECT_EQ(r.meta.at("app"), "mf");
  EXPECT_EQ(r.meta.at("run"), "my serial run");
  EXPECT_EQ(r.meta.at("seed"), "7");
  EXPECT_EQ(r.meta.at("note"), "two  spaces");
  EXPECT_EQ(r.meta.at("open"), "unclosed");
  EXPECT_EQ(r.meta.size(), 5u);
  EXPECT_EQ(r.columns, (std::vector<std::string>{"pass", "seconds", "elapsed", "items",
                                                 "items_per_s", "loss"}));
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.column("pass"), (std::vector<double>{1, 2, 3}));
  const auto loss = r.column("loss");
  EXPECT_EQ(loss[0], 0.75);
  EXPECT_TRUE(std::isnan(loss[1]));
  EXPECT_EQ(loss[2], 1e-3);
  EXPECT_EQ(r.metric_columns(), (std::vector<std::string>{"loss"}));
  EXPECT_TRUE(r.has_column("elapsed"));
  EXPECT_FALSE(r.has_column("accuracy"));
}

TEST_F(MetricsFile, HeaderOnlyIsAnEmptyTable) {
  const auto r = read_metrics_csv(write("e.csv", "pass,loss\n"));
  EXPECT_EQ(r.columns.size(), 2u);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_TRUE(r.column("loss").empty());
}

TEST_F(MetricsFile, MissingColumnNamesTheColumnsThereAre) {
  const auto r = read_metrics_csv(write("c.csv", "pass,loss\n1,2\n"));
  try {
    r.column("accuracy");
    FAIL() << "no error";
  } catch (const OptionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'accuracy'"), std::string::npos) << what;
    EXPECT_NE(what.find("c.csv"), std::string::npos) << what;
    EXPECT_NE(what.find("pass, loss"), std::string::npos) << what;
  }
}

struct BadFile {
  const char* text;
  std::int64_t line;
  const char* bad_text;  // the offending line as the error quotes it
  const char* reason;    // a part of the reason
};

TEST_F(MetricsFile, EachParseErrorNamesFileLineAndText) {
  const BadFile cases[] = {
      {"", 1, "", "missing header"},
      {"# app=mf\n\n", 2, "", "missing header"},
      {"# app=mf\n1,0.5,0.5\n", 2, "1,0.5,0.5", "missing header"},
      {"# app=mf\nstep,loss\n1,2\n", 2, "step,loss", "no 'pass' column"},
      {"pass,loss,,x\n", 1, "pass,loss,,x", "empty column name"},
      {"pass,loss,pass\n", 1, "pass,loss,pass", "appears twice"},
      {"pass,loss\n1,0.5\n2\n", 3, "2", "expected 2 fields"},
      {"pass,loss\n1,0.5\n2,0.4,7\n", 3, "2,0.4,7", "found 3"},
      {"pass,loss\n1,0.5\n\n# x=y\n2,abc\n", 5, "2,abc", "column 'loss': 'abc' is not a number"},
      {"pass,loss\n1,0.5\n2,\n", 3, "2,", "'' is not a number"},
      {"pass,loss\n1x,0.5\n", 2, "1x,0.5", "column 'pass': '1x'"},
      {"pass,loss\n1,0.5 0.6\n", 2, "1,0.5 0.6", "'0.5 0.6' is not a number"},
  };
  for (const auto& c : cases) {
    const auto p = write("bad.csv", c.text);
    try {
      read_metrics_csv(p);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), p) << c.text;
      EXPECT_EQ(e.line(), c.line) << c.text;
      EXPECT_EQ(e.text(), c.bad_text) << c.text;
      EXPECT_NE(e.reason().find(c.reason), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(p + ":" + std::to_string(c.line) + ":"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST_F(MetricsFile, MissingFileIsAnIoErrorNamingIt) {
  const auto p = path("absent.csv");
  try {
    read_metrics_csv(p);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_metrics_csv(dir_.string()), IoError);  // a directory
}

// A symlink planted at OUT.csv.tmp (or at OUT.csv) is replaced, never written through.
TEST_F(MetricsFile, PlantedSymlinksAreNotFollowed) {
  const auto victim = write("victim.txt", "precious");
  fs::create_symlink(victim, path("m.csv.tmp"));
  write_metrics_csv(path("m.csv"), sample_table());
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(path("m.csv")));
  EXPECT_EQ(read_metrics_csv(path("m.csv")).rows.size(), 3u);
  fs::remove(path("m.csv"));
  fs::create_symlink(victim, path("m.csv"));
  fs::create_symlink(victim, path("m.csv.tmp"));
  write_file_atomically(path("m.csv"), "plain");
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_EQ(slurp(path("m.csv")), "plain");
}

TEST_F(MetricsFile, WriteErrors) {
  const auto p = path("no_such_dir/m.csv");
  try {
    write_metrics_csv(p, sample_table());
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(p + ".tmp"));

  auto t = sample_table();
  t.rows[1].pop_back();
  EXPECT_THROW(write_metrics_csv(path("m.csv"), t), ShapeError);
  for (const char* bad : {"", "a,b", "#x", " loss", "lo\nss", "pass"}) {
    t = sample_table();
    t.columns.back() = bad;
    EXPECT_THROW(write_metrics_csv(path("m.csv"), t), OptionError) << bad;
  }
  t = sample_table();
  t.columns[0] = "step";
  EXPECT_THROW(write_metrics_csv(path("m.csv"), t), OptionError);
  for (const char* bad : {"", "a b", "x=y", "q\"", "tab\t"}) {
    t = sample_table();
    t.meta[bad] = "x";
    EXPECT_THROW(write_metrics_csv(path("m.csv"), t), OptionError) << bad;
  }
  EXPECT_FALSE(fs::exists(path("m.csv")));
}

// ---- ticks and labels ----

}  // namespace
}  // namespace strata::cli
