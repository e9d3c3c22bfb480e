// A read-only memory map of a whole file. Every rank maps the file and touches only
// its own byte range, so the operating system reads each byte once per host.
//
// A file truncated while it is mapped would kill the process with SIGBUS at the first
// touch past its new end. Strata's SIGBUS handler instead maps zero pages over the
// lost part of a MappedFile and marks it, and readers call check_unchanged() after
// reading: the load fails with an IoError naming the file. Faults outside mapped
// files go to the handler that was there before (or end the process as usual).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace strata::io {

class MappedFile {
 public:
  /// Throws IoError naming the path when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view text() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  /// IoError naming the file when it was truncated under the map (a read past its new
  /// end found zeros instead of dying) or its size differs now from when it was mapped.
  void check_unchanged() const;

  /// Drops the whole pages of bytes [begin, end) from the process's memory: a later
  /// read of them reads the file again. A loader calls it on what it has parsed, so
  /// its resident memory holds what it made of the file, not also the file.
  void release(std::size_t begin, std::size_t end) const;

 private:
  std::string path_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  int slot_ = -1;  ///< in the SIGBUS handler's table of mapped files (-1: none)
};

/// What kind of file a stat mode describes, for messages: "a directory", "a FIFO or
/// pipe", "a character device", ... ("a regular file" for one).
const char* file_kind(unsigned mode);

/// The lines whose first byte lies in [begin, end) of `text`, as a byte range
/// [first, last) that starts and ends on line boundaries. Applying it to adjacent
/// ranges yields adjacent results, so every line lands in exactly one range.
std::pair<std::size_t, std::size_t> snap_to_lines(std::string_view text, std::size_t begin, std::size_t end,
                                                  std::size_t region_begin = 0);

/// Share `part` of `parts` (0 <= part < parts) of the lines that start in
/// [begin, end) of `text`: the bytes are split evenly, then snapped to lines. The
/// shares of parts 0 .. parts-1 are adjacent and together hold exactly those lines.
/// A parallel scan splits a file's records among ranks, and a rank's among threads, so.
std::pair<std::size_t, std::size_t> line_share(std::string_view text, std::size_t begin, std::size_t end,
                                               std::size_t part, std::size_t parts);

}  // namespace strata::io
