#include "strata/detail/collective_error.hpp"

#include <cstring>
#include <string>

#include "strata/detail/pack.hpp"

namespace strata::detail {
namespace {

enum class Kind : std::uint8_t { none, generic, parse, io, checkpoint, shape, option, comm, timeout };

Bytes encode(std::exception_ptr err, int rank) {
  Bytes out;
  if (!err) {
    append(out, Kind::none);
    return out;
  }
  try {
    std::rethrow_exception(err);
  } catch (const ParseError& e) {
    append(out, Kind::parse);
    append_string(out, e.file());
    append<std::int64_t>(out, e.line());
    append_string(out, e.text());
    append_string(out, e.reason());
  } catch (const Error& e) {
    Kind k = Kind::generic;
    if (dynamic_cast<const IoError*>(&e)) k = Kind::io;
    else if (dynamic_cast<const CheckpointError*>(&e)) k = Kind::checkpoint;
    else if (dynamic_cast<const ShapeError*>(&e)) k = Kind::shape;
    else if (dynamic_cast<const OptionError*>(&e)) k = Kind::option;
    else if (dynamic_cast<const CommError*>(&e)) k = Kind::comm;
    else if (dynamic_cast<const TimeoutError*>(&e)) k = Kind::timeout;
    append(out, k);
    append_string(out, e.what());
  } catch (const std::exception& e) {
    append(out, Kind::generic);
    append_string(out, "rank " + std::to_string(rank) + ": " + e.what());
  } catch (...) {
    append(out, Kind::generic);
    append_string(out, "rank " + std::to_string(rank) + " failed with an exception that is not a std::exception");
  }
  return out;
}

[[noreturn]] void raise(Reader& in, Kind k) {
  if (k == Kind::parse) {
    std::string file = in.get_string();
    const auto line = in.get<std::int64_t>();
    std::string text = in.get_string(), reason = in.get_string();
    throw ParseError(std::move(file), line, std::move(text), reason);
  }
  const std::string what = in.get_string();
  switch (k) {
    case Kind::io: throw IoError(what);
    case Kind::checkpoint: throw CheckpointError(what);
    case Kind::shape: throw ShapeError(what);
    case Kind::option: throw OptionError(what);
    default: throw Error(what);
  }
}

}  // namespace

void agree_on_error(Comm& comm, std::exception_ptr local) {
  if (comm.size() == 1) {
    if (local) std::rethrow_exception(local);
    return;
  }
  const Bytes mine = encode(local, comm.rank());
  const auto all = comm.allgatherv(mine);
  for (int r = 0; r < comm.size(); ++r) {
    Reader in(all[static_cast<std::size_t>(r)]);
    const auto k = in.get<Kind>();
    if (k == Kind::none) continue;
    // The failing rank rethrows its own exception object (keeps any subclass data).
    if (r == comm.rank() && local) std::rethrow_exception(local);
    raise(in, k);
  }
}

}  // namespace strata::detail
