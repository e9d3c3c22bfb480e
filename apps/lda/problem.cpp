#include "lda/problem.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "common/alias_pairing.hpp"
#include "common/text_lines.hpp"
#include "strata/error.hpp"
#include "strata/io/load.hpp"
#include "strata/random.hpp"

namespace strata::apps::lda {

namespace {

// log of a Gamma(shape, 1) draw (Marsaglia and Tsang, 2000; shapes below 1 by
// Gamma(a) = Gamma(a + 1) U^(1/a)). Logs, because with beta = 0.01 most of a
// topic's words get draws far below the smallest double.
double log_gamma_draw(RandomStream& rs, double shape) {
  if (shape < 1) return log_gamma_draw(rs, shape + 1) + std::log(rs.uniform()) / shape;
  const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = rs.normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rs.uniform();
    if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return std::log(d * v);
  }
}

// A draw from a symmetric Dirichlet(a) over n outcomes.
std::vector<double> dirichlet(RandomStream& rs, double a, std::int64_t n) {
  std::vector<double> p(static_cast<std::size_t>(n));
  for (auto& x : p) x = log_gamma_draw(rs, a);
  const double top = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (auto& x : p) sum += x = std::exp(x - top);
  for (auto& x : p) x /= sum;
  return p;
}

std::vector<double> cumulative(std::vector<double> p) {
  std::partial_sum(p.begin(), p.end(), p.begin());
  p.back() = 1.0;
  return p;
}

std::int32_t draw(const std::vector<double>& cdf, double u) {
  const auto at = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
  return static_cast<std::int32_t>(std::min<std::ptrdiff_t>(at, static_cast<std::ptrdiff_t>(cdf.size()) - 1));
}

// Walker's alias method (Vose's construction): a draw from n outcomes costs one
// uniform number and at most two table reads. Drawing words by binary search over
// a topic's cumulative table missed the cache at almost every step and took most
// of the generator's time on large vocabularies.
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& p) : keep_(p.size()), alias_(p.size()) {
    AliasPairing pairing;
    const std::span<double> scaled = pairing.scaled(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) scaled[i] = p[i] * static_cast<double>(p.size());
    pairing.pair([&](std::size_t i, double keep, std::size_t alias) {
      keep_[i] = keep;
      alias_[i] = static_cast<std::int32_t>(alias);
    });
  }
  std::int32_t draw(double u) const {
    const double x = u * static_cast<double>(keep_.size());
    const auto i = std::min(static_cast<std::size_t>(x), keep_.size() - 1);
    return x - static_cast<double>(i) < keep_[i] ? static_cast<std::int32_t>(i) : alias_[i];
  }

 private:
  std::vector<double> keep_;
  std::vector<std::int32_t> alias_;
};

// Sorts a document's word ids and appends one entry per distinct word.
void append_document(Problem& p, std::int32_t doc, std::vector<std::int32_t>& words) {
  std::sort(words.begin(), words.end());
  for (std::size_t i = 0; i < words.size();) {
    std::size_t j = i;
    while (j < words.size() && words[j] == words[i]) ++j;
    const auto count = static_cast<std::int32_t>(j - i);
    p.entries.push_back({doc, words[i], count});
    p.max_count = std::max(p.max_count, count);
    p.tokens += count;
    i = j;
  }
}

// English function words, and the King James Bible's archaic ones (one of the
// corpora the app suite runs on), which would otherwise top every topic.
const std::unordered_set<std::string_view>& stop_words() {
  static const std::unordered_set<std::string_view> words = {
      "the", "and", "for", "that", "with", "this", "was", "are", "but", "not", "you", "all", "any", "can", "had",
      "her", "his", "him", "she", "they", "them", "their", "there", "then", "than", "were", "been", "have", "has",
      "from", "what", "when", "which", "who", "whom", "will", "would", "shall", "should", "could", "into", "upon",
      "out", "our", "ours", "your", "yours", "its", "one", "also", "more", "most", "some", "such", "very", "much",
      "many", "only", "other", "over", "under", "after", "before", "again", "about", "these", "those", "here",
      "where", "why", "how", "did", "does", "done", "being", "because", "while", "each", "both", "few", "own",
      "same", "too", "nor", "off", "once", "may", "might", "must", "let", "said", "say", "says", "yet", "now", "even",
      "every", "well", "through", "between", "against", "down", "whose", "unto", "thee", "thou", "thy", "thine",
      "hath", "doth", "art", "shalt", "wilt", "hast", "didst", "saith", "ye", "mine", "lest"};
  return words;
}

}  // namespace

std::string Problem::word_name(std::int64_t w) const {
  if (w >= 0 && w < static_cast<std::int64_t>(vocabulary.size())) return vocabulary[static_cast<std::size_t>(w)];
  return fmt::format("w{}", w);
}

Problem generate(const SyntheticSpec& s, std::uint64_t seed) {
  if (s.docs < 1 || s.words < 1 || s.topics < 1 || s.doclen < 1 || s.docs > INT32_MAX || s.words > INT32_MAX)
    throw OptionError("--synthetic: docs, words, topics and doclen must be positive (docs and words below 2^31)");
  Problem p;
  p.docs = s.docs;
  p.words = s.words;
  std::vector<AliasTable> phi_table;
  p.planted.resize(static_cast<std::size_t>(s.topics));
  for (int k = 0; k < s.topics; ++k) {
    RandomStream rs(seed, 0x70000000ULL + static_cast<std::uint64_t>(k));
    p.planted[static_cast<std::size_t>(k)] = dirichlet(rs, s.beta, s.words);
    phi_table.emplace_back(p.planted[static_cast<std::size_t>(k)]);
  }
  p.entries.reserve(static_cast<std::size_t>(s.docs * std::min<std::int64_t>(s.doclen, s.words)));
  std::vector<std::int32_t> words;
  for (std::int64_t d = 0; d < s.docs; ++d) {
    RandomStream rs(seed, 0x100000000ULL + static_cast<std::uint64_t>(d));
    const auto theta = cumulative(dirichlet(rs, s.alpha, s.topics));
    const auto spread = static_cast<std::int64_t>(rs.below(static_cast<std::uint64_t>(s.doclen + 1)));
    const std::int64_t length = std::max<std::int64_t>(1, s.doclen / 2 + spread);
    words.clear();
    for (std::int64_t n = 0; n < length; ++n) {
      const std::int32_t k = draw(theta, rs.uniform());
      words.push_back(phi_table[static_cast<std::size_t>(k)].draw(rs.uniform()));
    }
    append_document(p, static_cast<std::int32_t>(d), words);
  }
  p.source = fmt::format("synthetic corpus: {} documents, {} words, {} tokens from {} planted topics (alpha {}, "
                         "beta {})",
                         p.docs, p.words, p.tokens, s.topics, s.alpha, s.beta);
  return p;
}

// The first lines are looked at in the mapped file, which the loaders then read
// again: a stream read to look at them would have lost them (a pipe was read twice).
// MappedFile refuses anything but a regular file, without waiting on a FIFO.
Problem load(Runtime& rt, const std::string& path) {
  const io::MappedFile file(path);
  if (io::looks_like_docword(file.text())) return load_docword(rt, path);
  return load_text(path, file.text());
}

Problem load_docword(Runtime& rt, const std::string& path) {
  const auto counts = strata::load_docword<std::int32_t>(rt, path);
  Problem p;
  p.docs = counts.extent(0);
  p.words = counts.extent(1);
  // Documents and words are numbered with 32-bit integers.
  if (p.docs > INT32_MAX || p.words > INT32_MAX) {
    const bool docs = p.docs > INT32_MAX;
    throw ParseError(path, docs ? 1 : 2, std::to_string(docs ? p.docs : p.words),
                     fmt::format("{} {} exceed 2^31 - 1", docs ? "documents" : "words", docs ? p.docs : p.words));
  }
  // By (doc, word), the order the serial program visits.
  for (const auto& e : counts.gather_entries()) {
    p.entries.push_back({static_cast<std::int32_t>(e.index[0]), static_cast<std::int32_t>(e.index[1]), e.value});
    p.tokens += e.value;
    p.max_count = std::max(p.max_count, e.value);
  }
  // UCI ships docword.NAME.txt with vocab.NAME.txt, one word per line.
  const std::filesystem::path file(path);
  const std::string name = file.filename().string();
  const auto vocab = file.parent_path() / ("vocab." + name.substr(std::min<std::size_t>(8, name.size())));
  if (name.rfind("docword.", 0) == 0 && std::filesystem::exists(vocab)) {
    const io::MappedFile words(vocab.string());
    for_each_line(vocab.string(), words.text(), [&](std::int64_t, std::string_view w) {
      if (!w.empty() && w.back() == '\r') w.remove_suffix(1);
      p.vocabulary.emplace_back(w);
    });
  }
  p.source = fmt::format("{}: {} documents, {} words, {} tokens{}", path, p.docs, p.words, p.tokens,
                         p.vocabulary.empty() ? "" : " (with vocabulary)");
  return p;
}

Problem load_text(const std::string& path, std::string_view text) {
  // First pass over the lines: words (ids in order of first appearance) per line,
  // and in how many lines each word occurs.
  std::unordered_map<std::string, std::int32_t> id;
  std::vector<std::string> names;
  std::vector<std::int64_t> doc_freq;
  std::vector<std::vector<std::int32_t>> lines;
  std::string word;
  std::int64_t lineno = 0;
  const auto& stop = stop_words();
  for_each_line(path, text, [&](std::int64_t at, std::string_view line) {
    lineno = at;
    std::vector<std::int32_t>& ids = lines.emplace_back();
    auto flush = [&] {
      if (word.size() >= 3 && !stop.contains(word)) {
        auto [it, fresh] = id.try_emplace(word, static_cast<std::int32_t>(names.size()));
        if (fresh) {
          names.push_back(word);
          doc_freq.push_back(0);
        }
        ids.push_back(it->second);
      }
      word.clear();
    };
    for (const char ch : line) {
      const auto c = static_cast<unsigned char>(ch);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) word.push_back(static_cast<char>(c | 0x20));
      else flush();
    }
    flush();
    std::vector<std::int32_t> distinct = ids;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (const auto w : distinct) ++doc_freq[static_cast<std::size_t>(w)];
  });
  // Words of one document say nothing about co-occurrence: keep those of 2 or more.
  std::vector<std::int32_t> kept(names.size(), -1);
  Problem p;
  for (std::size_t w = 0; w < names.size(); ++w)
    if (doc_freq[w] >= 2) {
      kept[w] = static_cast<std::int32_t>(p.vocabulary.size());
      p.vocabulary.push_back(names[w]);
    }
  p.words = static_cast<std::int64_t>(p.vocabulary.size());
  std::vector<std::int32_t> words;
  for (const auto& ids : lines) {
    words.clear();
    for (const auto w : ids)
      if (kept[static_cast<std::size_t>(w)] >= 0) words.push_back(kept[static_cast<std::size_t>(w)]);
    if (words.empty()) continue;
    append_document(p, static_cast<std::int32_t>(p.docs++), words);
  }
  if (p.tokens == 0)
    throw IoError(fmt::format("{}: no line keeps a word (of 3 or more letters, not a stop word, in 2 or more lines)",
                              path));
  p.source = fmt::format("{}: {} documents (of {} lines), {} words, {} tokens", path, p.docs, lineno, p.words,
                         p.tokens);
  return p;
}

std::vector<std::vector<std::int64_t>> top_words(const std::vector<std::int32_t>& word_counts, std::int64_t words,
                                                 int K, int n) {
  std::vector<std::vector<std::int64_t>> top(static_cast<std::size_t>(K));
  std::vector<std::int64_t> ids(static_cast<std::size_t>(words));
  for (int k = 0; k < K; ++k) {
    std::iota(ids.begin(), ids.end(), 0);
    auto count = [&](std::int64_t w) { return word_counts[static_cast<std::size_t>(w * K + k)]; };
    const auto m = std::min<std::int64_t>(n, words);
    std::partial_sort(ids.begin(), ids.begin() + m, ids.end(), [&](std::int64_t a, std::int64_t b) {
      return count(a) != count(b) ? count(a) > count(b) : a < b;
    });
    for (std::int64_t i = 0; i < m && count(ids[static_cast<std::size_t>(i)]) > 0; ++i)
      top[static_cast<std::size_t>(k)].push_back(ids[static_cast<std::size_t>(i)]);
  }
  return top;
}

double topic_recovery(const Problem& p, const std::vector<std::int32_t>& word_counts, int K, double beta) {
  if (p.planted.empty()) return 0;
  const auto V = static_cast<std::size_t>(p.words);
  // Learned topics as dense unit vectors over words.
  std::vector<double> learned(static_cast<std::size_t>(K) * V);
  for (int k = 0; k < K; ++k) {
    double* l = &learned[static_cast<std::size_t>(k) * V];
    double norm = 0;
    for (std::size_t w = 0; w < V; ++w) {
      l[w] = word_counts[w * static_cast<std::size_t>(K) + static_cast<std::size_t>(k)] + beta;
      norm += l[w] * l[w];
    }
    for (std::size_t w = 0; w < V; ++w) l[w] /= std::sqrt(norm);
  }
  double sum = 0;
  for (const auto& phi : p.planted) {
    double norm = 0;
    for (const double x : phi) norm += x * x;
    double best = 0;
    for (int k = 0; k < K; ++k) {
      const double* l = &learned[static_cast<std::size_t>(k) * V];
      double dot = 0;
      for (std::size_t w = 0; w < V; ++w) dot += phi[w] * l[w];
      best = std::max(best, dot / std::sqrt(norm));
    }
    sum += best;
  }
  return sum / static_cast<double>(p.planted.size());
}

}  // namespace strata::apps::lda
