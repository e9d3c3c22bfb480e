// `strata lda`'s name, help and options, apart from its run functions (app.cpp) so
// that the command line's parser links no training code.
#include "common/app.hpp"

namespace strata::apps {

AppInfo lda_info() {
  AppInfo a;
  a.name = "lda";
  a.summary =
      "topic model (LDA) by collapsed Gibbs sampling (SparseLDA or Metropolis-Hastings); expected plan: 2-D over "
      "(doc, word)";
  a.unit = "tokens";
  a.synthetic_keys = Settings("--synthetic ");
  a.synthetic_keys.declare("docs", "2000", "documents")
      .declare("words", "5000", "vocabulary size")
      .declare("topics", "20", "topics of the generating model (priors alpha 0.1, beta 0.01)")
      .declare("doclen", "100", "mean tokens per document (uniform in [doclen/2, 3 doclen/2])");
  a.options.declare("topics", "auto", "topics K to learn (auto: the planted topics on synthetic data, else 20)")
      .declare("alpha", "0.1", "Dirichlet prior of document-topic distributions")
      .declare("beta", "0.01", "Dirichlet prior of topic-word distributions")
      .declare("sampler", "sparse",
               "sparse: SparseLDA's exact draw, O(topics of the document and of the word) a token; mh: "
               "Metropolis-Hastings over document and word proposals (LightLDA's), O(topics of the document)")
      .declare("mh-steps", "2", "mh: cycles of a document and a word move per token (1-16)")
      .declare("top-words", "10", "words listed per topic after training (0: none)")
      .declare("rounds", "0", "2-D plan: times the word blocks go round the workers per pass (0: Strata's choice)")
      .declare("slices", "0",
               "2-D plan: slices of each worker's documents, one per round in turn (0: Strata's choice)");
  return a;
}

}  // namespace strata::apps
