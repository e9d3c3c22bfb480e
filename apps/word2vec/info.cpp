// `strata word2vec`'s name, help and options, apart from its run functions (app.cpp)
// so that the command line's parser links no training code.
#include "common/app.hpp"
#include "common/relaxed_options.hpp"

namespace strata::apps {

AppInfo word2vec_info() {
  AppInfo a;
  a.name = "word2vec";
  a.summary = "word embeddings: skip-gram with negative sampling (window steps as pWord2Vec, or fastText's pair "
              "steps) through Buffers, a row per word; expected plan: data-parallel 1-D over sentences";
  a.unit = "words";
  a.synthetic_keys = Settings("--synthetic ");
  a.synthetic_keys.declare("sentences", "20000", "sentences")
      .declare("words", "5000", "topical words, on a ring: a sentence draws its words near a centre on it")
      .declare("common", "100", "common words (Zipf frequencies, no place on the ring)")
      .declare("length", "20", "mean words a sentence")
      .declare("spread", "8", "standard deviation of a sentence's words around its centre, in ring steps")
      .declare("common_share", "0.3", "share of tokens that are common words");
  a.options.declare("update", "window", "window (a window's words share their negatives, each row steps once a "
                                        "window, as pWord2Vec) | pair (negatives per word pair, as fastText)")
      .declare("dim", "100", "a word vector's length")
      .declare("window", "5", "largest distance of a context word (each word's window drawn in [1, window])")
      .declare("negatives", "5", "noise words per context word (per window with --update window)")
      .declare("noise-power", "0.75", "noise words are drawn with probability count^power (word2vec: 0.75, "
                                      "fastText: 0.5)")
      .declare("subsample", "1e-4", "sub-sampling threshold t: a word of frequency f is kept with chance "
                                    "sqrt(t/f) + t/f (0: keep all)")
      .declare("lr", "0.05", "first step size, decaying linearly to 0 over the run")
      .declare("min-count", "5", "words seen fewer times in the training sentences are dropped");
  declare_relaxed_options(a.options, "sentences", "about 10 a pass",
                          "one every 16,000 training tokens a worker (3 per vocabulary word if more)");
  a.options.declare("holdout", "0.1", "fraction of lines held out for the held-out loss")
      .declare("test", "", "a text file of held-out sentences instead of --holdout (all of --data trains)");
  return a;
}

}  // namespace strata::apps
