// One-way layering (DESIGN.md §7, docs/layers.md): no lower layer includes a higher one.
//
//   foundation <- array <- analysis <- loop <- ps <- recovery <- apps, tools, bench, tests
//
// Every file under include/strata/ and src/ is given a layer by kRules below; the test
// reads each file's quoted includes (#include "..."), resolves them as the compiler
// does (beside the including file, then include/, then src/) and reports every include
// of a higher layer's file. The backwards includes that exist today are listed, each
// as an exact pair, in kAllowed: a new one fails the test, and so does an allowed pair
// that has gone (delete it from the list: the list only shrinks).
//
// Standard library only: this reads the sources and links nothing of Strata, so it
// builds in seconds and runs before everything else.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef STRATA_SOURCE_DIR
#error "STRATA_SOURCE_DIR must name the source tree (tests/CMakeLists.txt sets it)"
#endif

namespace fs = std::filesystem;

namespace {

// Bottom to top: a file may include files of its own layer and of the layers below.
enum class Layer { foundation, array, analysis, loop, ps, recovery, not_code };

const char* name(Layer l) {
  switch (l) {
    case Layer::foundation: return "foundation";
    case Layer::array: return "array";
    case Layer::analysis: return "analysis";
    case Layer::loop: return "loop";
    case Layer::ps: return "ps";
    case Layer::recovery: return "recovery";
    case Layer::not_code: return "not code";
  }
  return "?";
}

// A path relative to the source root; one ending in '/' covers everything under that
// folder. The longest matching rule wins, so a single file can override its folder.
// Every file under include/strata/ and src/ must match a rule (a new file must be
// placed here), and every rule must match a file (a rule for a file that moved or
// went away must go too).
//
// Files whose folder is not their true layer are placed by their folder when moving
// the file is the fix; the resulting backwards includes are in kAllowed, and the
// comments here say where the file belongs.
struct Rule {
  std::string_view path;
  Layer layer;
};
constexpr Rule kRules[] = {
    // foundation: error, index, random, log, comm, runtime, thread pool, kernels, element traits
    {"include/strata/comm.hpp", Layer::foundation},
    {"include/strata/element.hpp", Layer::foundation},
    {"include/strata/error.hpp", Layer::foundation},
    {"include/strata/index.hpp", Layer::foundation},
    {"include/strata/kernels.hpp", Layer::foundation},
    {"include/strata/log.hpp", Layer::foundation},
    {"include/strata/random.hpp", Layer::foundation},
    {"include/strata/runtime.hpp", Layer::foundation},
    {"include/strata/thread_pool.hpp", Layer::foundation},
    {"include/strata/detail/collective_error.hpp", Layer::foundation},
    {"include/strata/detail/dense_storage.hpp", Layer::foundation},
    {"include/strata/detail/free_now.hpp", Layer::foundation},
    {"include/strata/detail/huge_pages.hpp", Layer::foundation},
    {"include/strata/detail/journaled_state.hpp", Layer::foundation},
    {"include/strata/detail/pack.hpp", Layer::foundation},
    {"include/strata/detail/stopwatch.hpp", Layer::foundation},
    {"include/strata/detail/worker.hpp", Layer::foundation},
    {"src/kernels/", Layer::foundation},
    {"src/runtime/", Layer::foundation},

    // array: DistArray, partitions, movement, checkpoint files and loaders (io)
    {"include/strata/array_reader.hpp", Layer::array},
    {"include/strata/dist_array.hpp", Layer::array},
    // ArrayBase (DistArray's type-erased face), At subscripts and the access-observer
    // hook the loop engine implements.
    {"include/strata/detail/array_base.hpp", Layer::array},
    {"include/strata/detail/array_checkpoint.hpp", Layer::array},
    {"include/strata/detail/array_movement.hpp", Layer::array},
    {"include/strata/partition.hpp", Layer::array},
    {"include/strata/detail/box.hpp", Layer::array},
    // The view of a relaxed array's cache that DistArray's accessors and ArrayReader
    // read; the parameter server publishes it. A plain struct, no includes.
    {"include/strata/detail/cache_view.hpp", Layer::array},
    {"include/strata/detail/dist_array_collectives.hpp", Layer::array},
    {"include/strata/detail/dist_array_instances.hpp", Layer::array},
    {"include/strata/detail/dist_array_movement.hpp", Layer::array},
    {"include/strata/detail/histogram.hpp", Layer::array},
    // How a sparse array's keys are stored (their width) and read as Index<N> values.
    {"include/strata/detail/key_column.hpp", Layer::array},
    {"include/strata/detail/sparse_keys.hpp", Layer::array},
    {"include/strata/io/", Layer::array},
    {"src/array/", Layer::array},
    {"src/io/", Layer::array},

    // analysis: subscript fits, dependence vectors, strategies, conflict groups (pure)
    {"include/strata/analysis/", Layer::analysis},
    {"src/analysis/", Layer::analysis},

    // loop: parallel_for, sync_for, plans, schedules, executors; the faces of the
    // parameter server the engine drives (loop/relaxed_base.hpp, loop/buffer_base.hpp),
    // the consistency options they run under (relaxed.hpp), and the loop-call hooks
    // that recovery implements (loop/call_hooks.hpp).
    {"include/strata/loop/", Layer::loop},
    {"include/strata/relaxed.hpp", Layer::loop},
    {"include/strata/sync_for.hpp", Layer::loop},
    {"src/loop/", Layer::loop},

    // ps: Buffer, relaxed arrays, apply functions; the engine's pieces that Buffer's
    // inline templates need (delta sets, the typed front and the engine's table of
    // operations it implements)
    {"include/strata/apply.hpp", Layer::ps},
    {"include/strata/buffer.hpp", Layer::ps},
    {"include/strata/buffer_writer.hpp", Layer::ps},
    {"include/strata/detail/delta_set.hpp", Layer::ps},
    {"include/strata/detail/ps_element_ops.hpp", Layer::ps},
    {"include/strata/detail/ps_typed_ops.hpp", Layer::ps},
    {"src/ps/", Layer::ps},

    // The umbrella header includes every layer's API: it sits on top.
    {"include/strata/strata.hpp", Layer::recovery},

    // recovery: checkpoints of loop calls, record and replay; the API's free functions
    // that ask about them
    {"include/strata/recovery.hpp", Layer::recovery},
    {"src/recovery/", Layer::recovery},

    // Not C++: not read.
    {"src/CMakeLists.txt", Layer::not_code},
};

// The backwards includes that exist today, each an exact "file -> header" pair. Do not
// add to this list: move the code instead. Remove a pair once its include has gone.
struct Allowed {
  std::string_view file, header;
};
const std::vector<Allowed> kAllowed = {
    // ALLOWED-LIST-BEGIN (docs/layers.md: the list is empty and stays so)
    // ALLOWED-LIST-END
};

struct Include {
  std::string file;    // the including file, relative to the root
  int line;
  std::string header;  // the resolved header, relative to the root
};

struct Tree {
  fs::path root;
  std::vector<std::string> files;             // every file under include/strata and src
  std::map<std::string, Layer> layer_of;      // files that match a rule
  std::vector<std::string> unplaced;          // files that match none
  std::vector<std::string> unused_rules;      // rules that match no file
  std::vector<Include> includes;              // resolved quoted includes
  std::vector<std::string> unresolved;        // quoted includes that name no file in the tree
};

std::optional<Layer> layer_for(const std::string& path, std::vector<bool>* used = nullptr) {
  std::size_t best = 0, best_len = 0;
  bool found = false;
  for (std::size_t r = 0; r < std::size(kRules); ++r) {
    const std::string_view rule = kRules[r].path;
    const bool match = rule.ends_with('/') ? std::string_view(path).starts_with(rule) : path == rule;
    if (match && (!found || rule.size() > best_len)) {
      best = r;
      best_len = rule.size();
      found = true;
    }
  }
  if (!found) return std::nullopt;
  if (used) (*used)[best] = true;
  return kRules[best].layer;
}

std::string rel_path(const fs::path& p, const fs::path& root) {
  return p.lexically_normal().lexically_relative(root).generic_string();
}

Tree scan() {
  Tree t;
  t.root = fs::path(STRATA_SOURCE_DIR).lexically_normal();
  for (const char* top : {"include/strata", "src"}) {
    for (const auto& e : fs::recursive_directory_iterator(t.root / top))
      if (e.is_regular_file()) t.files.push_back(rel_path(e.path(), t.root));
  }
  std::sort(t.files.begin(), t.files.end());

  std::vector<bool> used(std::size(kRules), false);
  for (const auto& f : t.files) {
    if (auto l = layer_for(f, &used))
      t.layer_of[f] = *l;
    else
      t.unplaced.push_back(f);
  }
  for (std::size_t r = 0; r < std::size(kRules); ++r)
    if (!used[r]) t.unused_rules.emplace_back(kRules[r].path);

  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const auto& f : t.files) {
    const auto it = t.layer_of.find(f);
    if (it != t.layer_of.end() && it->second == Layer::not_code) continue;
    std::ifstream in(t.root / f);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, kInclude)) continue;
      const std::string name = m[1];
      // As the compiler looks for a quoted include: beside the including file, then
      // the include paths (include/ for "strata/...", src/ for "loop/...").
      std::optional<std::string> resolved;
      for (const fs::path& dir : {(t.root / f).parent_path(), t.root / "include", t.root / "src"}) {
        if (fs::is_regular_file(dir / name)) {
          resolved = rel_path(dir / name, t.root);
          break;
        }
      }
      if (resolved)
        t.includes.push_back({f, number, *resolved});
      else
        t.unresolved.push_back(f + ":" + std::to_string(number) + ": #include \"" + name + "\"");
    }
  }
  return t;
}

const Tree& tree() {
  static const Tree t = scan();
  return t;
}

std::string bullets(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += "  " + i + "\n";
  return s;
}

// Every include of a higher layer's file, as an ordered set of (file, header).
std::map<std::pair<std::string, std::string>, std::string> backwards_includes() {
  const Tree& t = tree();
  std::map<std::pair<std::string, std::string>, std::string> out;
  for (const auto& inc : t.includes) {
    const auto from = t.layer_of.find(inc.file);
    const auto to = t.layer_of.find(inc.header);
    if (from == t.layer_of.end() || to == t.layer_of.end()) continue;  // unplaced: reported apart
    if (to->second == Layer::not_code || from->second >= to->second) continue;
    out[{inc.file, inc.header}] = inc.file + ":" + std::to_string(inc.line) + " (layer " +
                                  name(from->second) + ") includes " + inc.header + " (layer " +
                                  name(to->second) + ")";
  }
  return out;
}

TEST(Layering, FindsTheSources) {
  const Tree& t = tree();
  ASSERT_TRUE(fs::is_directory(t.root / "include/strata")) << "no include/strata under " << t.root;
  EXPECT_GT(t.files.size(), 50u);
  EXPECT_GT(t.includes.size(), 100u);
}

TEST(Layering, EveryFileHasALayer) {
  const Tree& t = tree();
  EXPECT_TRUE(t.unplaced.empty())
      << t.unplaced.size() << " file(s) under include/strata or src match no rule; give each a layer "
      << "in kRules (tests/unit/layering_test.cpp, docs/layers.md):\n"
      << bullets(t.unplaced);
}

TEST(Layering, EveryRuleMatchesAFile) {
  const Tree& t = tree();
  EXPECT_TRUE(t.unused_rules.empty())
      << t.unused_rules.size() << " rule(s) in kRules match no file (moved or removed?); update or "
      << "delete them:\n"
      << bullets(t.unused_rules);
}

TEST(Layering, QuotedIncludesNameFilesInTheTree) {
  const Tree& t = tree();
  EXPECT_TRUE(t.unresolved.empty())
      << t.unresolved.size() << " quoted include(s) name no file beside the includer, under include/ "
      << "or under src/ (use <...> for headers outside the tree):\n"
      << bullets(t.unresolved);
}

TEST(Layering, NoNewBackwardsIncludes) {
  const std::set<std::pair<std::string, std::string>> allowed = [] {
    std::set<std::pair<std::string, std::string>> s;
    for (const auto& a : kAllowed) s.emplace(a.file, a.header);
    return s;
  }();
  std::vector<std::string> fresh;
  for (const auto& [pair, message] : backwards_includes())
    if (!allowed.contains(pair)) fresh.push_back(message);
  EXPECT_TRUE(fresh.empty())
      << fresh.size() << " include(s) from a lower layer to a higher one (layers, bottom to top: "
      << "foundation, array, analysis, loop, ps, recovery; see docs/layers.md). Move the code to the "
      << "right layer instead of adding to kAllowed:\n"
      << bullets(fresh);
}

TEST(Layering, AllowListOnlyShrinks) {
  const auto found = backwards_includes();
  std::vector<std::string> gone, twice;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& a : kAllowed) {
    const std::pair<std::string, std::string> pair(a.file, a.header);
    if (!seen.insert(pair).second) twice.push_back(std::string(a.file) + " -> " + std::string(a.header));
    if (!found.contains(pair)) gone.push_back(std::string(a.file) + " -> " + std::string(a.header));
  }
  EXPECT_TRUE(gone.empty()) << gone.size() << " allowed backwards include(s) no longer exist: delete "
                            << "them from kAllowed (tests/unit/layering_test.cpp) and docs/layers.md:\n"
                            << bullets(gone);
  EXPECT_TRUE(twice.empty()) << "listed twice in kAllowed:\n" << bullets(twice);
  std::cout << "[ layering ] " << kAllowed.size() << " allowed backwards include(s) remain (kAllowed)\n";
}

}  // namespace
