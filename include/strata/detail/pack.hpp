// Packing trivially copyable values into byte buffers for the collectives.
#pragma once

#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "strata/comm.hpp"
#include "strata/error.hpp"

namespace strata::detail {

template <class T>
void append(Bytes& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

template <class T>
void append_span(Bytes& out, std::span<const T> v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto at = out.size();
  out.resize(at + v.size_bytes());
  if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size_bytes());
}

/// Appends a length-prefixed string.
inline void append_string(Bytes& out, const std::string& s) {
  append<std::uint64_t>(out, s.size());
  append_span<char>(out, std::span(s.data(), s.size()));
}

/// Reads values back in the order they were appended; checks for overruns.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    STRATA_CHECK(sizeof(T) <= remaining(), "message shorter than expected");
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  template <class T>
  void get_span(std::span<T> out) {
    STRATA_CHECK(out.size_bytes() <= remaining(), "message shorter than expected");
    if (!out.empty()) std::memcpy(out.data(), in_.data() + pos_, out.size_bytes());
    pos_ += out.size_bytes();
  }
  /// The next `n` bytes, in place.
  std::span<const std::byte> take(std::size_t n) {
    STRATA_CHECK(n <= remaining(), "message shorter than expected");
    const auto out = in_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  /// A string written by append_string. The length is checked against the bytes left
  /// before anything is allocated: the buffer may come from a damaged or crafted file.
  std::string get_string() {
    const auto n = get_count(1);
    std::string s(n, '\0');
    get_span(std::span(s.data(), s.size()));
    return s;
  }
  /// A count written by append<std::uint64_t> of items that take at least
  /// `min_bytes_each` bytes each; checked against the bytes left, so that a count read
  /// from a file can size a container safely.
  std::size_t get_count(std::size_t min_bytes_each) {
    const auto n = get<std::uint64_t>();
    STRATA_CHECK(min_bytes_each == 0 || n <= remaining() / min_bytes_each, "message shorter than expected");
    return static_cast<std::size_t>(n);
  }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

/// Reinterprets a received buffer as an array of T (sizes must divide evenly).
template <class T>
std::vector<T> as_vector(std::span<const std::byte> in) {
  static_assert(std::is_trivially_copyable_v<T>);
  STRATA_CHECK(in.size() % sizeof(T) == 0, "message size is not a multiple of the element size");
  std::vector<T> out(in.size() / sizeof(T));
  if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
  return out;
}

}  // namespace strata::detail
