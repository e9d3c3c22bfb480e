// mlr.txt, the shape and labels of a model `strata predict mlr --model` reads
// (apps/mlr/model_dir.cpp, parse_model_info):
//   * a bad file is rejected only with ParseError, naming a line within the text;
//   * an accepted one has features in [0, 2^31 - 1) (so rows() cannot overflow) and two
//     or more distinct finite labels;
//   * written back with format_model_info and read again, it is the same.
#include <cmath>
#include <sstream>
#include <string>

#include "fuzz_check.hpp"
#include "mlr/model_dir.hpp"
#include "strata/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  apps::mlr::ModelInfo m;
  try {
    m = apps::mlr::parse_model_info(in, "mlr.txt");
  } catch (const ParseError& e) {
    FUZZ_CHECK(e.file() == "mlr.txt", "a ParseError naming another file");
    FUZZ_CHECK(e.line() >= 0, "a ParseError with a negative line");
    return 0;
  }
  FUZZ_CHECK(m.features >= 0 && m.features < INT32_MAX, "features outside the 32-bit ids");
  FUZZ_CHECK(m.rows() == m.features + (m.bias ? 1 : 0), "rows that are not features plus the bias");
  FUZZ_CHECK(m.labels.size() >= 2, "fewer than two labels");
  for (const float l : m.labels) FUZZ_CHECK(std::isfinite(l), "a label that is not finite");
  std::istringstream again(apps::mlr::format_model_info(m));
  const apps::mlr::ModelInfo back = apps::mlr::parse_model_info(again, "mlr.txt");
  FUZZ_CHECK(back.features == m.features && back.bias == m.bias && back.labels == m.labels,
             "a model that does not read back");
  return 0;
}
