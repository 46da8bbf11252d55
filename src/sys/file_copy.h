// Copying one regular file's contents the cheapest way the filesystem allows: a clone (reflink: btrfs, XFS,
// bcachefs share the blocks until either copy changes), else only its data, so a sparse file stays sparse.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>

#include "sys/result.h"

namespace confine::sys {

struct CopiedContents {
  bool cloned = false;        // the blocks are shared (FICLONE): nothing was copied
  std::uint64_t copied = 0;   // bytes of data copied (holes are not data)
};

// Makes the empty regular file `to` share the blocks of `from` (FICLONE), where the filesystem can (both on
// the same btrfs, XFS or bcachefs). False, and nothing changed, where it cannot.
bool clone_contents(int from, int to);

// Copies the data of the first `size` bytes of the regular file `from` into the empty regular file `to`: only
// the ranges SEEK_DATA/SEEK_HOLE report (copy_file_range, read/write where that cannot), so the holes stay
// holes. Returns the bytes copied.
Result<std::uint64_t> copy_data(int from, int to, off_t size);

// A clone where the filesystem can make one, else copy_data.
Result<CopiedContents> copy_contents(int from, int to, off_t size);

// The bytes of data a file of this `st` holds, what copying it costs: its size, or less when it is sparse.
std::uint64_t data_bytes(const struct stat& st);

}  // namespace confine::sys
