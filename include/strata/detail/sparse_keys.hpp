// A sparse array's sorted local keys (detail/key_column.hpp says how they are stored),
// read as a random-access range of Index<N> values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "strata/detail/key_column.hpp"
#include "strata/index.hpp"

namespace strata::detail {

template <std::size_t N>
class SparseKeys {
 public:
  SparseKeys() = default;
  /// Keys of an array of `shape` (their width follows from it).
  explicit SparseKeys(const Shape<N>& shape) : width_(key_width_for(shape)) {}

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Index<N> operator[](std::size_t k) const {
    Index<N> i;
    column().get(static_cast<std::int64_t>(k), i.data());
    return i;
  }

  /// Room for `n` keys (the old ones are gone), written by the engine through the
  /// returned bytes at key_width_for(shape) bytes a subscript.
  std::byte* allocate(std::size_t n) {
    release();
    bytes_.resize(n * N * static_cast<std::size_t>(width_));
    size_ = n;
    return bytes_.data();
  }
  /// Frees the storage now (not at the next allocation).
  void release() {
    std::vector<std::byte>().swap(bytes_);
    size_ = 0;
  }
  KeyColumn column() const { return {bytes_.data(), static_cast<std::int64_t>(size_), static_cast<int>(N), width_}; }

  /// The position of `i`, or -1 when it is not stored.
  std::int64_t find(const Index<N>& i) const {
    const KeyColumn c = column();
    const std::int64_t at = c.lower_bound(i.data());
    return at < c.size && c.equals(at, i.data()) ? at : -1;
  }

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Index<N>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Index<N>;
    const_iterator() = default;
    const_iterator(const SparseKeys* keys, std::size_t at) : keys_(keys), at_(at) {}
    Index<N> operator*() const { return (*keys_)[at_]; }
    Index<N> operator[](difference_type d) const { return (*keys_)[at_ + static_cast<std::size_t>(d)]; }
    const_iterator& operator++() { return ++at_, *this; }
    const_iterator operator++(int) { auto old = *this; return ++at_, old; }
    const_iterator& operator--() { return --at_, *this; }
    const_iterator operator--(int) { auto old = *this; return --at_, old; }
    const_iterator& operator+=(difference_type d) { return at_ += static_cast<std::size_t>(d), *this; }
    const_iterator& operator-=(difference_type d) { return at_ -= static_cast<std::size_t>(d), *this; }
    friend const_iterator operator+(const_iterator it, difference_type d) { return it += d; }
    friend const_iterator operator+(difference_type d, const_iterator it) { return it += d; }
    friend const_iterator operator-(const_iterator it, difference_type d) { return it -= d; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.at_) - static_cast<difference_type>(b.at_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.at_ == b.at_; }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.at_ <=> b.at_; }

   private:
    const SparseKeys* keys_ = nullptr;
    std::size_t at_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  std::vector<std::byte> bytes_;
  std::size_t size_ = 0;
  int width_ = 8;
};

}  // namespace strata::detail
