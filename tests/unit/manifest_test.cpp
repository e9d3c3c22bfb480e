// The two manifest readers on what fuzzing found (fuzz/checkpoint_manifest.cpp,
// fuzz/run_manifest.cpp; the inputs are in fuzz/corpus/): a run manifest with an
// unnamed array, a program, site or name with spaces, or a bound setting's value with
// leading spaces reads back as written; one without a line the writer always writes is
// a CheckpointError; so is a checkpoint manifest whose partition cannot be built (not a
// ShapeError) or whose type tag holds a line break.
#include <gtest/gtest.h>

#include <span>
#include <string>

#include <fmt/format.h>

#include "recovery/run_checkpoint.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"

namespace strata {
namespace {

std::string xxh3_hex(std::string_view text) {
  return fmt::format("{:016x}", detail::checkpoint_checksum(std::as_bytes(std::span(text.data(), text.size()))));
}

// A run manifest's text without its checksum line, then sealed with the right one.
std::string sealed_run_manifest(const std::string& body) { return body + "checksum " + xxh3_hex(body) + "\n"; }

recovery::RunManifest run_manifest_with(const std::string& program, const std::string& site,
                                        const std::string& name) {
  recovery::RunManifest m;
  m.program = program;
  m.ranks = 1;
  m.threads = 2;
  m.seed = 7;
  m.call = 3;
  m.changing_calls = 2;
  m.site = site;
  m.arrays.push_back({4, "f32", {6, 4}, false, 0, ""});
  m.arrays.push_back({5, "f64[2]", {3}, true, 9, name});
  m.arrays.push_back({6, "i32", {2, 2}, false, 0, ""});
  m.journals.push_back({120, 0xdeadbeef});
  return m;
}

void expect_same(const recovery::RunManifest& a, const recovery::RunManifest& b) {
  EXPECT_EQ(a.program, b.program);
  EXPECT_EQ(a.site, b.site);
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  for (std::size_t k = 0; k < a.arrays.size(); ++k) {
    EXPECT_EQ(a.arrays[k].id, b.arrays[k].id);
    EXPECT_EQ(a.arrays[k].tag, b.arrays[k].tag);
    EXPECT_EQ(a.arrays[k].shape, b.arrays[k].shape);
    EXPECT_EQ(a.arrays[k].owner_state, b.arrays[k].owner_state);
    EXPECT_EQ(a.arrays[k].rounds, b.arrays[k].rounds);
    EXPECT_EQ(a.arrays[k].name, b.arrays[k].name);
  }
  EXPECT_EQ(a.journals.size(), b.journals.size());
}

TEST(RunManifest, UnnamedArraysReadBack) {
  const auto m = run_manifest_with("strata", "apps/mf/strata.cpp:120", "W");
  expect_same(recovery::parse_run_manifest(recovery::format_run_manifest(m), "manifest.txt"), m);
}

TEST(RunManifest, SpacesInProgramSiteAndNamesReadBack) {
  const auto m = run_manifest_with("my trainer", "/home/me/My Projects/train.cpp:42", "  user factors ");
  expect_same(recovery::parse_run_manifest(recovery::format_run_manifest(m), "manifest.txt"), m);
}

// Found by fuzzing after the settings came in (run manifest version 2): a value's
// leading spaces were dropped, so a run bound to --lr " 0.1" could not resume.
TEST(RunManifest, SettingValuesReadBackAsBound) {
  auto m = run_manifest_with("strata", "a.cpp:1", "W");
  m.settings = {{"--lr", " 0.1"}, {"--data", ""}, {"--synthetic", "users=5, items=3  "}, {"app", "mf"}};
  const auto back = recovery::parse_run_manifest(recovery::format_run_manifest(m), "manifest.txt");
  ASSERT_EQ(back.settings.size(), m.settings.size());
  for (std::size_t k = 0; k < m.settings.size(); ++k) {
    EXPECT_EQ(back.settings[k].name, m.settings[k].name);
    EXPECT_EQ(back.settings[k].value, m.settings[k].value) << m.settings[k].name;
  }
}

TEST(RunManifest, EveryLineTheWriterWritesIsRequired) {
  const std::string lines[] = {"program strata\n", "ranks 1\n",           "threads 1\n",        "seed 42\n",
                               "call 1\n",         "changing-calls 1\n", "site a.cpp:1\n"};
  for (const std::string& missing : lines) {
    std::string body = fmt::format("strata-run-checkpoint {}\n", recovery::kRunManifestVersion);
    for (const std::string& l : lines)
      if (l != missing) body += l;
    body += "journal 0 8 0000000000000001\n";
    const std::string key = missing.substr(0, missing.find(' '));
    try {
      recovery::parse_run_manifest(sealed_run_manifest(body), "manifest.txt");
      ADD_FAILURE() << "accepted without its " << key << " line";
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("no '" + key + "' line"), std::string::npos) << e.what();
    }
  }
}

TEST(CheckpointManifest, PartitionThatCannotBeBuiltIsACheckpointError) {
  detail::CheckpointManifest m;
  m.element_size = 8;
  m.type_tag = "f64";
  m.dims = 2;
  m.shape = {4, 6};
  m.partition = Partition::block2d(0, 1, 2);
  m.ranks = 4;
  m.nnz = 24;
  for (int r = 0; r < 4; ++r) m.parts.push_back({detail::checkpoint_part_name(r), 48, 1});
  const std::string good = detail::format_manifest(m);
  EXPECT_EQ(detail::parse_manifest(good, "manifest.txt").partition, m.partition);
  // The same manifest saying block2d over dimensions 1 and 1, with a matching checksum.
  std::string body = good.substr(0, good.find("manifest_xxh3="));
  body.replace(body.find("partition_dims=0,1"), 18, "partition_dims=1,1");
  const std::string bad = body + "manifest_xxh3=" + xxh3_hex(body) + "\n";
  try {
    detail::parse_manifest(bad, "manifest.txt");
    ADD_FAILURE() << "accepted a block2d partition over one dimension twice";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("manifest.txt is inconsistent: block2d"), std::string::npos) << e.what();
  }
}

// Found by fuzzing: the reader took a type tag holding '\r', which format_manifest
// refuses to write ("must be a single line"); now the reader refuses it too.
TEST(CheckpointManifest, TypeTagOfMoreThanOneLineIsRefused) {
  detail::CheckpointManifest m;
  m.element_size = 4;
  m.type_tag = "f32";
  m.dims = 1;
  m.shape = {3};
  m.partition = Partition::range(0);
  m.ranks = 1;
  m.nnz = 3;
  m.parts.push_back({detail::checkpoint_part_name(0), 12, 1});
  const std::string good = detail::format_manifest(m);
  std::string body = good.substr(0, good.find("manifest_xxh3="));
  body.replace(body.find("type=f32"), 8, "type=f3\r2");
  try {
    detail::parse_manifest(body + "manifest_xxh3=" + xxh3_hex(body) + "\n", "manifest.txt");
    ADD_FAILURE() << "accepted a type tag with a carriage return";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("the type tag must be a single line"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
