// The local elements of a dense DistArray: value-initialised storage that costs no
// memory until it is touched, and whose pages can be handed back while it lives.
//
// Large storage is mapped straight from the kernel, whose fresh anonymous pages read
// as zero, so an array of a type whose value-initialisation is all zero bytes starts
// without a pass that writes zeros: a page is faulted in when a loop first uses it.
// release() gives the whole pages of a range back (they read as zero afterwards);
// that is how an array travelling with a 2-D plan's time blocks holds only the blocks
// its rank is using although it is addressed as the whole array.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

#include "strata/detail/huge_pages.hpp"

namespace strata::detail {

/// Local: the whole pages inside `bytes` go back to the system; they read as zero
/// afterwards, and the bytes of the partial pages at either end keep their values.
/// `bytes` must lie in private anonymous memory the caller owns (any heap or mapped
/// allocation). A page in use by nobody else is what makes this safe.
inline void release_pages(std::span<std::byte> bytes) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(bytes.data()) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size()) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

template <class T>
class DenseStorage {
  static_assert(std::is_trivially_copyable_v<T>, "dense storage holds trivially copyable elements");

 public:
  DenseStorage() = default;
  /// n value-initialised elements. `huge_pages`: ask for transparent huge pages (fewer
  /// TLB misses for rows reached at random; off where ranges are released).
  explicit DenseStorage(std::size_t n, bool huge_pages = true) : size_(n) {
    if (n == 0) return;
    bytes_ = n * sizeof(T);
    if (bytes_ >= kMapAtLeast) {
      void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      data_ = static_cast<T*>(p);
      mapped_ = true;
      if (huge_pages) advise_huge_pages(p, bytes_);
      if constexpr (!std::is_trivially_default_constructible_v<T>) std::uninitialized_value_construct_n(data_, n);
    } else {
      data_ = static_cast<T*>(::operator new(bytes_, std::align_val_t(alignof(T))));
      std::uninitialized_value_construct_n(data_, n);
    }
  }
  DenseStorage(const DenseStorage& o) : DenseStorage(o.size_) {
    if (size_) std::memcpy(static_cast<void*>(data_), o.data(), size_ * sizeof(T));
  }
  DenseStorage(DenseStorage&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), bytes_(std::exchange(o.bytes_, 0)),
        window_(std::exchange(o.window_, 0)), mapped_(std::exchange(o.mapped_, false)) {}
  DenseStorage& operator=(DenseStorage o) noexcept {
    swap(o);
    return *this;
  }
  ~DenseStorage() { free(); }

  void swap(DenseStorage& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(bytes_, o.bytes_);
    std::swap(window_, o.window_);
    std::swap(mapped_, o.mapped_);
  }

  // The elements in use: all of the allocation, or a window of it (narrow).
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_ + window_; }
  const T* data() const { return data_ + window_; }
  T& operator[](std::size_t k) { return data()[k]; }
  const T& operator[](std::size_t k) const { return data()[k]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  /// Elements [from, from + count) are no longer needed here: their whole pages go back
  /// to the system (see release_pages; the elements read as zero bytes or keep their values).
  void release(std::size_t from, std::size_t count) {
    release_pages(std::as_writable_bytes(std::span<T>(data() + from, count)));
  }

  /// Copies the elements in use to `to`, 4 MiB at a time, giving each chunk's pages
  /// back once copied: the copy and the original together hold little more than one
  /// of them (a travelling array's part moving into storage for the whole array).
  void move_to(T* to) {
    constexpr std::size_t kChunk = (std::size_t{4} << 20) / sizeof(T) + 1;
    for (std::size_t k = 0; k < size_; k += kChunk) {
      const std::size_t n = std::min(kChunk, size_ - k);
      std::memcpy(static_cast<void*>(to + k), data() + k, n * sizeof(T));
      release(k, n);
    }
  }

  /// From now on only elements [from, from + count) are in use (they become elements 0..):
  /// the pages of the rest go back to the system, the allocation stays. A travelling
  /// array ends its journey this way, keeping its home rows where they already lie.
  void narrow(std::size_t from, std::size_t count) {
    release(0, from);
    release(from + count, size_ - from - count);
    window_ += from;
    size_ = count;
  }
  /// The number of elements allocated, and where the window in use starts among them.
  std::size_t allocated() const { return bytes_ / sizeof(T); }
  std::size_t window_start() const { return window_; }
  /// Back to the whole allocation in use (elements outside the window read as zero
  /// where their pages were released).
  void widen() {
    size_ = allocated();
    window_ = 0;
  }

 private:
  // Below this a mapping's system calls cost more than zeroing the bytes.
  static constexpr std::size_t kMapAtLeast = std::size_t{1} << 20;

  void free() {
    if (!data_) return;
    if (mapped_)
      ::munmap(data_, bytes_);
    else
      ::operator delete(data_, std::align_val_t(alignof(T)));
    data_ = nullptr;
  }

  T* data_ = nullptr;      // the allocation
  std::size_t size_ = 0;   // elements in use
  std::size_t bytes_ = 0;  // of the allocation
  std::size_t window_ = 0; // the first element in use
  bool mapped_ = false;
};

}  // namespace strata::detail
