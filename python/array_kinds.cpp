#include "array_kinds.hpp"

#include <string_view>

#include "strata/io/checkpoint_format.hpp"
#include "strata/io/files.hpp"

namespace py = pybind11;

namespace strata::python {

std::string numpy_tag(const py::array& a) {
  if (py::isinstance<py::array_t<float>>(a)) return "f32";
  if (py::isinstance<py::array_t<double>>(a)) return "f64";
  if (py::isinstance<py::array_t<std::int32_t>>(a)) return "i32";
  if (py::isinstance<py::array_t<std::int64_t>>(a)) return "i64";
  return "";
}

SavedKind saved_kind(const std::filesystem::path& dir) {
  const auto file = dir / detail::kManifestName;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) throw CheckpointError(fmt::format("{}: missing", file.string()));
  const Bytes text = detail::read_file(file, detail::kMaxManifestBytes, detail::Links::refuse);
  const std::string_view chars(reinterpret_cast<const char*>(text.data()), text.size());
  const detail::CheckpointManifest m = detail::parse_manifest(chars, file.string());
  return {m.type_tag, m.dims};
}

void check_same_on_every_rank(Runtime& rt, std::span<const std::byte> head, std::span<const std::byte> body,
                              const std::string& what) {
  if (rt.size() == 1) return;
  const std::uint64_t mine[2] = {detail::checkpoint_checksum(head), detail::checkpoint_checksum(body)};
  const auto all = rt.comm().allgatherv(std::as_bytes(std::span(mine)));
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw OptionError(fmt::format("{}: rank {} passed other values than rank 0 (under mpirun every rank passes the "
                                    "whole of it, the same on every rank)",
                                    what, r));
}

}  // namespace strata::python
