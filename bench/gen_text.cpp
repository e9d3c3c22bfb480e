// Writes word2vec's generated corpus as text files: the sentences `strata train
// word2vec --synthetic ...` generates (apps/word2vec/problem.hpp: topical words on a
// ring, common words of Zipf frequencies), a sentence a line, split as the app splits
// them, so that fastText and `strata train word2vec --data` read the same text.
//
//   strata-gen-text --train FILE --test FILE [--sentences N] [--words W] [--common C]
//                   [--length L] [--holdout PERCENT] [--seed S]
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "bench_util.hpp"
#include "strata/error.hpp"
#include "word2vec/problem.hpp"

namespace {

void write_sentences(const strata::apps::word2vec::Corpus& c, const strata::apps::word2vec::Sentences& s,
                     const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) throw strata::IoError(fmt::format("{}: cannot be written", path));
  std::string line;
  for (const auto& sentence : s.list) {
    line.clear();
    for (std::int64_t t = sentence.begin; t < sentence.begin + sentence.count; ++t)
      line +=
          (t > sentence.begin ? " " : "") + c.words[static_cast<std::size_t>(s.tokens[static_cast<std::size_t>(t)])];
    line += '\n';
    if (std::fputs(line.c_str(), f.get()) < 0) throw strata::IoError(fmt::format("{}: write failed", path));
  }
}

}  // namespace

int main(int argc, char** argv) try {
  strata::apps::word2vec::SyntheticSpec spec;
  std::int64_t holdout_percent = 10, seed = 42;
  std::string train, test;
  strata::bench::for_each_option(argc, argv, [&](const std::string& opt, const char* v) {
    if (opt == "--train") train = v;
    else if (opt == "--test") test = v;
    else if (opt == "--sentences") spec.sentences = strata::bench::number(opt, v);
    else if (opt == "--words") spec.words = strata::bench::number(opt, v);
    else if (opt == "--common") spec.common = strata::bench::number(opt, v);
    else if (opt == "--length") spec.length = static_cast<std::int32_t>(strata::bench::number(opt, v));
    else if (opt == "--holdout") holdout_percent = strata::bench::number(opt, v);
    else if (opt == "--seed") seed = strata::bench::number(opt, v);
    else throw strata::OptionError(fmt::format("unknown option '{}'", opt));
  });
  if (train.empty() || test.empty()) throw strata::OptionError("--train FILE and --test FILE are needed");
  if (holdout_percent > 90) throw strata::OptionError("--holdout is a percentage of at most 90");
  if (spec.words < 2 || spec.length < 2) throw strata::OptionError("--words and --length must be 2 or more");
  // min_count 1: every generated word is written; the reader applies its own.
  const auto c = strata::apps::word2vec::generate(spec, static_cast<double>(holdout_percent) / 100, 1,
                                                  static_cast<std::uint64_t>(seed));
  write_sentences(c, c.train, train);
  write_sentences(c, c.test, test);
  std::printf("%zu training sentences (%lld words) to %s, %zu held out to %s\n", c.train.list.size(),
              static_cast<long long>(c.train_tokens()), train.c_str(), c.test.list.size(), test.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "strata-gen-text: %s\n", e.what());
  return 1;
}
