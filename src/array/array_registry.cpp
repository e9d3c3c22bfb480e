// The per-process registry of live arrays (loop planning finds every array a loop
// touches by id, even on a rank whose own iterations never touched it), and the
// names of access sites.
#include <atomic>
#include <string>
#include <string_view>

#include "runtime/registry.hpp"
#include "strata/detail/array_base.hpp"

namespace strata::detail {

namespace {
std::atomic<std::uint64_t> ids_counter{0};
}  // namespace

std::uint64_t ArrayBase::next_id() { return ++ids_counter; }

std::uint64_t ArrayBase::ids_before_live() {
  const std::uint64_t oldest = registry_of<ArrayBase>().lowest_key();
  return oldest != 0 ? oldest - 1 : ids_counter.load();
}

// Arrays are found by id only. A moved-to array takes over its source's id (replace);
// the source keeps id 0, like the library's anonymous temporaries, and has nothing
// to withdraw.
void ArrayBase::enroll() {
  if (id_ != 0) registry_of<ArrayBase>().replace(this, id_);
}

void ArrayBase::withdraw() {
  if (id_ != 0) registry_of<ArrayBase>().withdraw(this, id_);
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

ArrayBase* ArrayBase::find_array(std::uint64_t id) { return registry_of<ArrayBase>().find(id); }

}  // namespace strata::detail
