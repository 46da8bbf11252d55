#include "sys/file_copy.h"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace confine::sys {
namespace {

// The same bytes by plain reads and writes, for where copy_file_range cannot (another filesystem type).
Status copy_by_reading(int from, int to, off_t start, off_t end) {
  std::vector<char> buf(1 << 20);
  for (off_t pos = start; pos < end;) {
    auto want = static_cast<std::size_t>(std::min<off_t>(end - pos, static_cast<off_t>(buf.size())));
    ssize_t n = ::pread(from, buf.data(), want, pos);
    if (n < 0) return errno_error("read");
    if (n == 0) break;  // the file shrank meanwhile
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::pwrite(to, buf.data() + done, static_cast<std::size_t>(n - done), pos + done);
      if (w < 0) return errno_error("write");
      done += w;
    }
    pos += n;
  }
  return ok_status();
}

// [start, end) of `from` to the same offsets of `to`.
Status copy_range(int from, int to, off_t start, off_t end) {
  for (off_t in = start, out = start; in < end;) {
    ssize_t n = ::copy_file_range(from, &in, to, &out, static_cast<std::size_t>(end - in), 0);
    if (n > 0) continue;
    if (n == 0) return ok_status();  // the file shrank meanwhile
    if (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS) return copy_by_reading(from, to, in, end);
    return errno_error("copy_file_range");
  }
  return ok_status();
}

}  // namespace

std::uint64_t data_bytes(const struct stat& st) {
  return std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_blocks) * 512);
}

bool clone_contents(int from, int to) { return ::ioctl(to, FICLONE, from) == 0; }

Result<std::uint64_t> copy_data(int from, int to, off_t size) {
  std::uint64_t copied = 0;
  for (off_t pos = 0; pos < size;) {
    off_t data = ::lseek(from, pos, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // only a hole is left
    off_t hole = size;
    if (data < 0) data = pos;  // no SEEK_DATA here: all of it is data
    else if (off_t h = ::lseek(from, data, SEEK_HOLE); h >= 0) hole = std::min(h, size);
    if (data >= size) break;
    if (auto s = copy_range(from, to, data, hole); !s) return s.error();
    copied += static_cast<std::uint64_t>(hole - data);
    pos = hole;
  }
  // The trailing hole, if any, is made by the size alone.
  if (::ftruncate(to, size) != 0) return errno_error("truncate");
  return copied;
}

Result<CopiedContents> copy_contents(int from, int to, off_t size) {
  if (clone_contents(from, to)) return CopiedContents{.cloned = true};
  auto copied = copy_data(from, to, size);
  if (!copied) return copied.error();
  return CopiedContents{.copied = *copied};
}

}  // namespace confine::sys
