#include "mlr/model_dir.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::apps::mlr {

namespace {

std::string info_path(const std::string& dir) { return (std::filesystem::path(dir) / "mlr.txt").string(); }

}  // namespace

void write_model_info(const std::string& dir, const ModelInfo& m) {
  const std::string path = info_path(dir);
  std::ofstream out(path);
  out << fmt::format("features {}\nbias {}\nlabels", m.features, m.bias ? 1 : 0);
  for (float l : m.labels) out << fmt::format(" {}", l);
  out << '\n';
  if (!out.flush()) throw IoError(fmt::format("cannot write '{}'", path));
}

ModelInfo read_model_info(const std::string& dir) {
  const std::string path = info_path(dir);
  std::ifstream in(path);
  if (!in)
    throw IoError(fmt::format("--model: cannot read '{}' (a directory `strata train mlr --save` wrote holds it)", path));
  ModelInfo m;
  bool seen[3] = {};
  std::string line;
  for (std::int64_t n = 1; std::getline(in, line); ++n) {
    std::istringstream words(line);
    std::string key;
    if (!(words >> key)) continue;
    auto bad = [&](const std::string& why) { return ParseError(path, n, line, why); };
    if (key == "features") {
      if (!(words >> m.features) || m.features < 0) throw bad("features takes a count");
      seen[0] = true;
    } else if (key == "bias") {
      int b = -1;
      if (!(words >> b) || (b != 0 && b != 1)) throw bad("bias takes 0 or 1");
      m.bias = b == 1;
      seen[1] = true;
    } else if (key == "labels") {
      for (float l; words >> l;) m.labels.push_back(l);
      if (!words.eof()) throw bad("labels takes numbers");
      if (m.labels.size() < 2) throw bad("a model has two classes or more");
      seen[2] = true;
    } else {
      throw bad(fmt::format("unknown key '{}' (features, bias, labels)", key));
    }
    std::string rest;
    if (key != "labels" && words >> rest) throw bad(fmt::format("'{}' after the value", rest));
  }
  if (!seen[0] || !seen[1] || !seen[2]) throw ParseError(path, 0, "", "needs the lines features, bias and labels");
  return m;
}

}  // namespace strata::apps::mlr
