#include "slr/model_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::apps::slr {

std::string format_liblinear_model(const LinearModel& m) {
  std::string text = fmt::format("solver_type {}\nnr_class 2\nlabel {} {}\nnr_feature {}\n", m.solver, m.positive,
                                 m.negative, m.w.size());
  text += m.bias >= 0 ? fmt::format("bias {:.17g}\nw\n", m.bias) : "bias -1\nw\n";
  for (const float v : m.w) fmt::format_to(std::back_inserter(text), "{:.9g} \n", v);
  if (m.bias >= 0) fmt::format_to(std::back_inserter(text), "{:.9g} \n", m.bias_weight);
  return text;
}

void write_liblinear_model(const std::string& path, const LinearModel& m) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) throw IoError(fmt::format("cannot write '{}'", path));
  const std::string text = format_liblinear_model(m);
  std::fwrite(text.data(), 1, text.size(), out);
  if (std::fclose(out) != 0) throw IoError(fmt::format("error writing '{}'", path));
}

namespace {

// A weight or the bias: a number a float holds (a larger one is no model of ours).
float number(const std::string& path, std::int64_t line, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v) ||
      std::fabs(v) > std::numeric_limits<float>::max())
    throw ParseError(path, line, text, "not a finite number a float holds");
  return static_cast<float>(v);
}

// nr_feature: a count of 0 to 2^31 - 1, as slr's feature ids are.
std::int64_t count(const std::string& path, std::int64_t line, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < 0 || v > INT32_MAX)
    throw ParseError(path, line, text, "not a feature count from 0 to 2^31 - 1");
  return v;
}

}  // namespace

LinearModel read_liblinear_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("--model: cannot read '{}'", path));
  return parse_liblinear_model(in, path);
}

LinearModel parse_liblinear_model(std::istream& in, const std::string& path) {
  LinearModel m;
  std::int64_t features = -1, line_no = 0;
  std::string line;
  bool weights = false;
  while (!weights && std::getline(in, line)) {
    ++line_no;
    std::istringstream fields(line);
    std::string key, a, b;
    fields >> key;
    if (key == "solver_type") {
      fields >> m.solver;
      if (m.solver != "L2R_LR" && m.solver != "L1R_LR" && m.solver != "L2R_LR_DUAL")
        throw ParseError(path, line_no, line,
                         "not a logistic-regression model (solver_type L2R_LR, L1R_LR or L2R_LR_DUAL)");
    } else if (key == "nr_class") {
      fields >> a;
      if (a != "2") throw ParseError(path, line_no, line, "slr reads two-class models only");
    } else if (key == "label") {
      std::string extra;
      if (!(fields >> m.positive >> m.negative) || (fields >> extra))
        throw ParseError(path, line_no, line, "two labels expected");
      // The classes of the LIBSVM files slr reads: 1 (or +1), and -1 (or 0), either first.
      auto positive = [](const std::string& l) { return l == "1" || l == "+1"; };
      auto negative = [](const std::string& l) { return l == "-1" || l == "0"; };
      if (!(positive(m.positive) && negative(m.negative)) && !(negative(m.positive) && positive(m.negative)))
        throw ParseError(path, line_no, line, "slr's models are of the classes 1 and -1 (or 0)");
    } else if (key == "nr_feature") {
      fields >> a;
      features = count(path, line_no, a);
    } else if (key == "bias") {
      fields >> a;
      m.bias = number(path, line_no, a);
    } else if (key == "w") {
      weights = true;
    } else if (!key.empty()) {
      throw ParseError(path, line_no, line, fmt::format("unknown header key '{}' (liblinear model expected)", key));
    }
  }
  if (!weights || features < 0)
    throw ParseError(path, line_no, line, "no 'nr_feature' and 'w' lines: not a liblinear model");
  // The weights grow line by line: a header's count is not trusted with an allocation.
  const std::int64_t rows = features + (m.bias >= 0 ? 1 : 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    if (!std::getline(in, line))
      throw ParseError(path, line_no, "", fmt::format("{} weights expected, {} found", rows, r));
    ++line_no;
    std::istringstream fields(line);
    std::string a, extra;
    if (!(fields >> a) || (fields >> extra)) throw ParseError(path, line_no, line, "one weight a line expected");
    const float v = number(path, line_no, a);
    if (r < features) m.w.push_back(v);
    else m.bias_weight = v;
  }
  // liblinear's w is for the first label: make it the positive class's.
  const bool first_is_negative = m.positive == "-1" || m.positive == "0";  // the label line's rule: the other is 1
  if (first_is_negative) {
    std::swap(m.positive, m.negative);
    for (float& v : m.w) v = -v;
    m.bias_weight = -m.bias_weight;
  }
  return m;
}

}  // namespace strata::apps::slr
