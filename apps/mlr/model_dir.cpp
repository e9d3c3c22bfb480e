#include "mlr/model_dir.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::apps::mlr {

namespace {

std::string info_path(const std::string& dir) { return (std::filesystem::path(dir) / "mlr.txt").string(); }

}  // namespace

std::string format_model_info(const ModelInfo& m) {
  std::string text = fmt::format("features {}\nbias {}\nlabels", m.features, m.bias ? 1 : 0);
  for (float l : m.labels) fmt::format_to(std::back_inserter(text), " {}", l);
  text += '\n';
  return text;
}

ModelInfo parse_model_info(std::istream& in, const std::string& path) {
  ModelInfo m;
  bool seen[3] = {};
  std::string line;
  for (std::int64_t n = 1; std::getline(in, line); ++n) {
    std::istringstream words(line);
    std::string key;
    if (!(words >> key)) continue;
    auto bad = [&](const std::string& why) { return ParseError(path, n, line, why); };
    const int k = key == "features" ? 0 : key == "bias" ? 1 : key == "labels" ? 2 : -1;
    if (k < 0) throw bad(fmt::format("unknown key '{}' (features, bias, labels)", key));
    if (seen[k]) throw bad(fmt::format("a second '{}' line", key));
    seen[k] = true;
    if (k == 0) {
      // Feature ids are 32-bit: a count beyond them is no model mlr wrote.
      if (!(words >> m.features) || m.features < 0 || m.features >= INT32_MAX)
        throw bad("features takes a count from 0 to 2147483646");
    } else if (k == 1) {
      int b = -1;
      if (!(words >> b) || (b != 0 && b != 1)) throw bad("bias takes 0 or 1");
      m.bias = b == 1;
    } else {
      for (float l; words >> l;) m.labels.push_back(l);
      if (!words.eof()) throw bad("labels takes numbers");
      if (m.labels.size() < 2) throw bad("a model has two classes or more");
      std::vector<float> sorted = m.labels;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) throw bad("a label given twice");
    }
    std::string rest;
    if (k != 2 && words >> rest) throw bad(fmt::format("'{}' after the value", rest));
  }
  if (!seen[0] || !seen[1] || !seen[2]) throw ParseError(path, 0, "", "needs the lines features, bias and labels");
  return m;
}

void write_model_info(const std::string& dir, const ModelInfo& m) {
  const std::string path = info_path(dir);
  std::ofstream out(path);
  out << format_model_info(m);
  if (!out.flush()) throw IoError(fmt::format("cannot write '{}'", path));
}

ModelInfo read_model_info(const std::string& dir) {
  const std::string path = info_path(dir);
  std::ifstream in(path);
  if (!in)
    throw IoError(fmt::format("--model: cannot read '{}' (a directory `strata train mlr --save` wrote holds it)", path));
  return parse_model_info(in, path);
}

}  // namespace strata::apps::mlr
