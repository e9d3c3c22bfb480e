// What every harness asserts with, and the reference line split the text harnesses
// compare the library's scanning against.
//
// FUZZ_CHECK aborts with a message: libFuzzer reports the abort as a crash and saves
// the input. A harness lets every exception other than the typed errors it expects
// escape, which also ends in an abort: a std::bad_alloc, length_error or out_of_range
// out of a reader is a bug (hostile input must get a typed error naming the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#define FUZZ_CHECK(cond, what)                                                              \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
                   std::string_view(what).data());                                         \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

namespace strata::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// The lines of `text` as the loaders define them: split at '\n' (which belongs to no
/// line); a final '\n' ends the last line rather than starting an empty one.
inline std::vector<std::string_view> reference_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

/// Reads the leading bytes of a fuzz input as settings, leaving the rest as text.
class Settings {
 public:
  Settings(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() {
    if (size_ == 0) return 0;
    --size_;
    return *data_++;
  }
  std::string_view rest() const { return as_text(data_, size_); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
};

}  // namespace strata::fuzz
