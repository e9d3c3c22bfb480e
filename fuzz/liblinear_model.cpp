// liblinear model files as `strata predict slr --model` reads them
// (apps/slr/model_file.cpp, parse_liblinear_model):
//   * a bad file is rejected only with ParseError, naming a line within the text;
//   * an accepted model has nr_feature finite weights, a finite bias weight, two
//     labels, a logistic-regression solver, and the positive label first;
//   * written back with write_liblinear_model's format and read again, it is the same.
#include <cmath>
#include <sstream>
#include <string>

#include "fuzz_check.hpp"
#include "slr/model_file.hpp"
#include "strata/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  apps::slr::LinearModel m;
  try {
    m = apps::slr::parse_liblinear_model(in, "fuzz.model");
  } catch (const ParseError& e) {
    FUZZ_CHECK(e.file() == "fuzz.model", "a ParseError naming another file");
    FUZZ_CHECK(e.line() >= 0, "a ParseError with a negative line");
    return 0;
  }
  FUZZ_CHECK(!m.positive.empty() && !m.negative.empty(), "a model without two labels");
  FUZZ_CHECK(m.solver == "L2R_LR" || m.solver == "L1R_LR" || m.solver == "L2R_LR_DUAL", "a solver not read as LR");
  FUZZ_CHECK(m.positive != "-1" && m.positive != "0", "the negative class first");
  for (const float v : m.w) FUZZ_CHECK(std::isfinite(v), "a weight that is not finite");
  FUZZ_CHECK(std::isfinite(m.bias) && std::isfinite(m.bias_weight), "a bias that is not finite");
  std::istringstream again(apps::slr::format_liblinear_model(m));
  const apps::slr::LinearModel back = apps::slr::parse_liblinear_model(again, "fuzz.model");
  FUZZ_CHECK(back.w == m.w && back.bias_weight == m.bias_weight, "weights that do not read back");
  FUZZ_CHECK(back.positive == m.positive && back.negative == m.negative && back.solver == m.solver,
             "labels or solver that do not read back");
  FUZZ_CHECK((back.bias < 0) == (m.bias < 0) && (m.bias < 0 || back.bias == m.bias), "a bias that does not read back");
  return 0;
}
