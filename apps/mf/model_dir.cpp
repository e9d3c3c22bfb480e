#include "mf/model_dir.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::apps::mf {

namespace {

constexpr const char* kLossNames[] = {"squared", "absolute", "logistic", "hinge"};

void write_ids(const std::filesystem::path& path, const std::vector<std::int64_t>& ids) {
  std::ofstream out(path);
  for (const std::int64_t id : ids) out << id << '\n';
  if (!out.flush()) throw IoError(fmt::format("--save: cannot write '{}'", path.string()));
}

std::vector<std::int64_t> read_ids(const std::filesystem::path& path, std::int64_t expected) {
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("--model: cannot open '{}'", path.string()));
  std::vector<std::int64_t> ids;
  std::string line;
  for (std::int64_t n = 1; std::getline(in, line); ++n) {
    std::size_t used = 0;
    std::int64_t id = -1;
    try {
      id = std::stoll(line, &used);
    } catch (const std::exception&) {
    }
    if (used != line.size() || id < 0 || (!ids.empty() && id <= ids.back()))
      throw ParseError(path.string(), n, line, "expected an id greater than the line before's");
    ids.push_back(id);
  }
  if (static_cast<std::int64_t>(ids.size()) != expected)
    throw ParseError(path.string(), static_cast<std::int64_t>(ids.size()), "",
                     fmt::format("{} ids where mf.txt says {}", ids.size(), expected));
  return ids;
}

}  // namespace

const char* loss_name(Loss loss) { return kLossNames[static_cast<int>(loss)]; }

Loss parse_loss(const std::string& name, const std::string& option) {
  for (int k = 0; k < 4; ++k)
    if (name == kLossNames[k]) return static_cast<Loss>(k);
  throw OptionError(fmt::format("{}: '{}' is not one of squared, absolute, logistic, hinge", option, name));
}

void write_model_info(const std::string& dir, const Problem& p, const Options& o) {
  const std::filesystem::path d(dir);
  std::ofstream out(d / "mf.txt");
  out << "strata mf model\nrank " << o.rank << "\nloss " << loss_name(o.loss) << "\nusers " << p.users << "\nitems "
      << p.items << "\n";
  if (!out.flush()) throw IoError(fmt::format("--save: cannot write '{}'", (d / "mf.txt").string()));
  if (!p.user_ids.empty()) write_ids(d / "user_ids.txt", p.user_ids);
  if (!p.item_ids.empty()) write_ids(d / "item_ids.txt", p.item_ids);
}

ModelInfo read_model_info(const std::string& dir) {
  const std::filesystem::path d(dir), path = d / "mf.txt";
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("--model: cannot open '{}' (a directory `strata train mf --save` wrote)",
                                     path.string()));
  ModelInfo m;
  std::string line;
  const char* keys[] = {"strata mf model", "rank ", "loss ", "users ", "items "};
  for (int n = 1; n <= 5; ++n) {
    if (!std::getline(in, line) || line.rfind(keys[n - 1], 0) != 0)
      throw ParseError(path.string(), n, line, fmt::format("expected '{}...'", keys[n - 1]));
    const std::string value = line.substr(std::string(keys[n - 1]).size());
    try {
      if (n == 2) m.rank = std::stoi(value);
      if (n == 3) m.loss = parse_loss(value, path.string());
      if (n == 4) m.users = std::stoll(value);
      if (n == 5) m.items = std::stoll(value);
    } catch (const std::logic_error&) {
      throw ParseError(path.string(), n, line, "not a number");
    }
  }
  if (std::filesystem::exists(d / "user_ids.txt")) m.user_ids = read_ids(d / "user_ids.txt", m.users);
  if (std::filesystem::exists(d / "item_ids.txt")) m.item_ids = read_ids(d / "item_ids.txt", m.items);
  return m;
}

}  // namespace strata::apps::mf
