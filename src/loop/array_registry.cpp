// The per-process registry of live arrays (loop planning finds every array a loop
// touches by id, even on a rank whose own iterations never touched it), and the
// names of access sites.
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "strata/loop/access.hpp"

namespace strata::detail {
namespace {
std::mutex g_mu;
std::unordered_map<std::uint64_t, ArrayBase*>& registry() {
  static std::unordered_map<std::uint64_t, ArrayBase*> r;
  return r;
}
}  // namespace

std::uint64_t ArrayBase::next_id() {
  static std::uint64_t counter = 0;
  std::lock_guard lock(g_mu);
  return ++counter;
}

void ArrayBase::enroll() {
  if (id_ == 0) return;
  std::lock_guard lock(g_mu);
  registry()[id_] = this;
}

void ArrayBase::withdraw() {
  if (id_ == 0) return;
  std::lock_guard lock(g_mu);
  auto it = registry().find(id_);
  if (it != registry().end() && it->second == this) registry().erase(it);
}

std::string site_label(const std::source_location& where) {
  std::string_view file = where.file_name();
  if (const auto slash = file.rfind('/'); slash != std::string_view::npos) file = file.substr(slash + 1);
  return std::string(file) + ":" + std::to_string(where.line()) + ":" + std::to_string(where.column());
}

bool same_site(const std::source_location& a, const std::source_location& b) {
  return identical_site(a, b) || (a.line() == b.line() && a.column() == b.column() &&
                                  std::string_view(a.file_name()) == std::string_view(b.file_name()));
}

std::string array_label(const ArrayBase& array) {
  return array.name().empty() ? "array#" + std::to_string(array.array_id()) : array.name();
}

std::string array_label(std::uint64_t array_id) {
  const ArrayBase* a = ArrayBase::find_array(array_id);
  return a ? array_label(*a) : "#" + std::to_string(array_id);
}

ArrayBase* ArrayBase::find_array(std::uint64_t id) {
  std::lock_guard lock(g_mu);
  auto it = registry().find(id);
  return it == registry().end() ? nullptr : it->second;
}

}  // namespace strata::detail
