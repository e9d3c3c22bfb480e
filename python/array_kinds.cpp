#include "array_kinds.hpp"

#include "strata/io/checkpoint_format.hpp"

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
  const detail::CheckpointManifest m =
      detail::parse_manifest(detail::read_manifest_text(dir), (dir / detail::kManifestName).string());
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
