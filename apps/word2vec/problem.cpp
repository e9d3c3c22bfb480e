#include "word2vec/problem.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "common/text_lines.hpp"
#include "strata/error.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/random.hpp"

namespace strata::apps::word2vec {

namespace {

// Streams of the seed, one per use, so that changing one use draws nothing else anew.
constexpr std::uint64_t kHoldoutStream = 0x57'32'56'48;  // which lines are held out
constexpr std::uint64_t kSentenceStream = 0x57'32'56'53;  // a generated sentence's words (+ its index)
constexpr std::uint64_t kPairStream = 0x57'32'56'50;      // planted_similarity's pairs

// A corpus on its way: every line's words as provisional ids (numbered in order of
// first appearance), whether the line is held out, and the provisional ids' names.
struct RawCorpus {
  std::vector<std::int32_t> tokens;
  std::vector<std::int64_t> line_end;  // line k's tokens end at line_end[k]
  std::vector<bool> held_out;
  std::vector<std::string> names;
};

void append_sentences(Sentences& s, const std::vector<std::int32_t>& words) {
  for (std::size_t first = 0; first < words.size(); first += kMaxSentence) {
    const auto count = static_cast<std::int32_t>(std::min<std::size_t>(kMaxSentence, words.size() - first));
    s.list.push_back({static_cast<std::int64_t>(s.tokens.size()), count});
    s.tokens.insert(s.tokens.end(), words.begin() + static_cast<std::ptrdiff_t>(first),
                    words.begin() + static_cast<std::ptrdiff_t>(first) + count);
  }
}

// The vocabulary (training words seen min_count times or more, most frequent first,
// ties in order of first appearance) and the sentences over it. Returns each
// provisional id's final one (-1: not in the vocabulary).
std::vector<std::int32_t> finish(Corpus& c, const RawCorpus& raw, int min_count) {
  std::vector<std::int64_t> count(raw.names.size(), 0);
  std::int64_t begin = 0;
  for (std::size_t line = 0; line < raw.line_end.size(); ++line) {
    if (!raw.held_out[line])
      for (std::int64_t t = begin; t < raw.line_end[line]; ++t)
        ++count[static_cast<std::size_t>(raw.tokens[static_cast<std::size_t>(t)])];
    begin = raw.line_end[line];
  }
  std::vector<std::int32_t> order;
  for (std::size_t w = 0; w < raw.names.size(); ++w)
    if (count[w] >= min_count) order.push_back(static_cast<std::int32_t>(w));
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return count[static_cast<std::size_t>(a)] > count[static_cast<std::size_t>(b)];
  });
  std::vector<std::int32_t> id(raw.names.size(), -1);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto w = static_cast<std::size_t>(order[k]);
    id[w] = static_cast<std::int32_t>(k);
    c.words.push_back(raw.names[w]);
    c.counts.push_back(count[w]);
  }
  std::vector<std::int32_t> words;
  begin = 0;
  for (std::size_t line = 0; line < raw.line_end.size(); ++line) {
    words.clear();
    for (std::int64_t t = begin; t < raw.line_end[line]; ++t)
      if (const std::int32_t w = id[static_cast<std::size_t>(raw.tokens[static_cast<std::size_t>(t)])]; w >= 0)
        words.push_back(w);
    append_sentences(raw.held_out[line] ? c.test : c.train, words);
    begin = raw.line_end[line];
  }
  return id;
}

// Splits `text` into lines and whitespace-separated words, as provisional ids; a
// line is held out when `hold(line number)` says so.
template <class Hold>
RawCorpus read_words(const std::string& path, std::string_view text, Hold&& hold) {
  RawCorpus raw;
  std::unordered_map<std::string_view, std::int32_t> id;
  for_each_line(path, text, [&](std::int64_t lineno, std::string_view line) {
    for_each_word(line, [&](std::string_view word) {
      auto [it, fresh] = id.try_emplace(word, static_cast<std::int32_t>(raw.names.size()));
      if (fresh) raw.names.emplace_back(it->first);
      raw.tokens.push_back(it->second);
    });
    raw.line_end.push_back(static_cast<std::int64_t>(raw.tokens.size()));
    raw.held_out.push_back(hold(lineno));
  });
  return raw;
}

// Ranks of `v` from 1, ties sharing their mean rank (Spearman's convention).
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    for (std::size_t k = i; k < j; ++k) r[order[k]] = (static_cast<double>(i + j) + 1) / 2;
    i = j;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += (a[i] - ma) * (b[i] - mb);
    aa += (a[i] - ma) * (a[i] - ma);
    bb += (b[i] - mb) * (b[i] - mb);
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

}  // namespace

Corpus generate(const SyntheticSpec& s, double holdout, int min_count, std::uint64_t seed) {
  // Common words' cumulative Zipf weights (1/rank).
  std::vector<double> zipf(static_cast<std::size_t>(s.common));
  double total = 0;
  for (std::size_t j = 0; j < zipf.size(); ++j) zipf[j] = total += 1.0 / static_cast<double>(j + 1);
  RawCorpus raw;
  for (std::int64_t w = 0; w < s.words; ++w) raw.names.push_back(fmt::format("r{}", w));
  for (std::int64_t j = 0; j < s.common; ++j) raw.names.push_back(fmt::format("c{}", j));
  const CounterRng held(seed, kHoldoutStream);
  for (std::int64_t k = 0; k < s.sentences; ++k) {
    RandomStream rs(seed, kSentenceStream + static_cast<std::uint64_t>(k) * 0x10000);
    const double centre = rs.uniform() * static_cast<double>(s.words);
    const std::int32_t n = s.length / 2 + static_cast<std::int32_t>(rs.below(static_cast<std::uint64_t>(s.length) + 1));
    for (std::int32_t t = 0; t < n; ++t) {
      std::int64_t w;
      if (s.common > 0 && rs.uniform() < s.common_share) {
        w = s.words + (std::upper_bound(zipf.begin(), zipf.end(), rs.uniform() * total) - zipf.begin());
        w = std::min(w, s.words + s.common - 1);
      } else {
        const auto at = static_cast<std::int64_t>(std::floor(centre + s.spread * rs.normal()));
        w = ((at % s.words) + s.words) % s.words;
      }
      raw.tokens.push_back(static_cast<std::int32_t>(w));
    }
    raw.line_end.push_back(static_cast<std::int64_t>(raw.tokens.size()));
    raw.held_out.push_back(held.uniform(static_cast<std::uint64_t>(k)) < holdout);
  }
  Corpus c;
  const std::vector<std::int32_t> id = finish(c, raw, min_count);
  c.ring = s.words;
  c.spread = s.spread;
  c.planted.assign(c.words.size(), -1);
  for (std::int64_t w = 0; w < s.words; ++w)
    if (id[static_cast<std::size_t>(w)] >= 0) c.planted[static_cast<std::size_t>(id[static_cast<std::size_t>(w)])] = w;
  c.source = fmt::format("generated: {} sentences around a ring of {} words (spread {}) and {} common words; "
                         "vocabulary {}, {} training tokens",
                         s.sentences, s.words, s.spread, s.common, c.words.size(), c.train_tokens());
  return c;
}

Corpus corpus_from_text(const std::string& path, std::string_view text, double holdout, int min_count,
                        std::uint64_t seed) {
  const CounterRng held(seed, kHoldoutStream);
  const RawCorpus raw = read_words(
      path, text, [&](std::int64_t line) { return held.uniform(static_cast<std::uint64_t>(line)) < holdout; });
  Corpus c;
  finish(c, raw, min_count);
  if (c.train.tokens.empty())
    throw ParseError(path, static_cast<std::int64_t>(raw.line_end.size()), "",
                     fmt::format("no training word occurs {} times or more (--min-count)", min_count));
  c.source = fmt::format("{}: {} lines, vocabulary {} (words seen {}+ times), {} training tokens", path,
                         raw.line_end.size(), c.words.size(), min_count, c.train_tokens());
  return c;
}

Corpus load_text(const std::string& path, double holdout, int min_count, std::uint64_t seed) {
  const io::MappedFile file(path);
  Corpus c = corpus_from_text(path, file.text(), holdout, min_count, seed);
  file.check_unchanged();
  return c;
}

void attach_test(Corpus& c, const std::string& path) {
  const io::MappedFile file(path);
  const RawCorpus raw = read_words(path, file.text(), [](std::int64_t) { return true; });
  file.check_unchanged();
  std::unordered_map<std::string_view, std::int32_t> vocabulary;
  for (std::size_t w = 0; w < c.words.size(); ++w) vocabulary.emplace(c.words[w], static_cast<std::int32_t>(w));
  std::vector<std::int32_t> id(raw.names.size(), -1);
  for (std::size_t w = 0; w < raw.names.size(); ++w)
    if (auto it = vocabulary.find(raw.names[w]); it != vocabulary.end()) id[w] = it->second;
  c.test = {};
  std::vector<std::int32_t> words;
  std::int64_t begin = 0;
  for (const std::int64_t end : raw.line_end) {
    words.clear();
    for (std::int64_t t = begin; t < end; ++t)
      if (const std::int32_t w = id[static_cast<std::size_t>(raw.tokens[static_cast<std::size_t>(t)])]; w >= 0)
        words.push_back(w);
    append_sentences(c.test, words);
    begin = end;
  }
}

double planted_similarity(const Corpus& c, const std::vector<float>& vectors, int dim) {
  if (c.ring == 0) return 0;
  std::vector<std::int32_t> at(static_cast<std::size_t>(c.ring), -1);  // ring position -> word id
  for (std::size_t w = 0; w < c.planted.size(); ++w)
    if (c.planted[w] >= 0) at[static_cast<std::size_t>(c.planted[w])] = static_cast<std::int32_t>(w);
  auto row = [&](std::int32_t w) {
    return vectors.data() + static_cast<std::size_t>(w) * static_cast<std::size_t>(dim);
  };
  auto cosine = [&](std::int32_t a, std::int32_t b) {
    double ab = 0, aa = 0, bb = 0;
    for (int j = 0; j < dim; ++j) {
      ab += static_cast<double>(row(a)[j]) * row(b)[j];
      aa += static_cast<double>(row(a)[j]) * row(a)[j];
      bb += static_cast<double>(row(b)[j]) * row(b)[j];
    }
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
  };
  const auto reach = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(3 * c.spread));
  RandomStream rs(0, kPairStream);
  std::vector<double> similarity, closeness;
  for (int k = 0; k < 2000; ++k) {
    const auto a = static_cast<std::int64_t>(rs.below(static_cast<std::uint64_t>(c.ring)));
    const auto d = static_cast<std::int64_t>(1 + rs.below(reach));
    const std::int32_t wa = at[static_cast<std::size_t>(a)], wb = at[static_cast<std::size_t>((a + d) % c.ring)];
    if (wa < 0 || wb < 0) continue;
    similarity.push_back(cosine(wa, wb));
    closeness.push_back(-static_cast<double>(d));
  }
  return similarity.size() < 2 ? 0 : pearson(ranks(similarity), ranks(closeness));
}

}  // namespace strata::apps::word2vec
