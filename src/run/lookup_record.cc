#include "run/lookup_record.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <optional>
#include <string>

namespace confine::run {
namespace {

constexpr std::size_t kMaxNames = 100000;  // a run that looks up more is recorded in part
constexpr std::size_t kPageSize = 4096;

struct PathArgument {
  int dir = -1;  // the argument holding the directory fd, -1: the current directory
  int path = 0;
};

// Where the path of a lookup call is, by its number; none for any other call.
std::optional<PathArgument> path_argument(int nr) {
  switch (nr) {
#ifdef SYS_open
    case SYS_open:
    case SYS_stat:
    case SYS_lstat:
    case SYS_access:
      return PathArgument{-1, 0};
#endif
    case SYS_openat:
    case SYS_newfstatat:
    case SYS_statx:
    case SYS_faccessat:
    case SYS_faccessat2:
      return PathArgument{0, 1};
    default:
      return std::nullopt;
  }
}

// The NUL-terminated string at `pointer` in the caller's memory, read a page at a time (a name may end just
// before an unmapped page); empty when unreadable or longer than PATH_MAX.
std::string read_name(pid_t tid, std::uint64_t pointer) {
  std::string out;
  while (out.size() < PATH_MAX) {
    std::size_t chunk = kPageSize - (pointer % kPageSize);
    char buf[kPageSize];
    struct iovec local {buf, chunk};
    struct iovec remote {reinterpret_cast<void*>(pointer), chunk};
    auto n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n <= 0) return {};
    std::string_view got(buf, static_cast<std::size_t>(n));
    if (auto nul = got.find('\0'); nul != std::string_view::npos) return out + std::string(got.substr(0, nul));
    out += got;
    pointer += static_cast<std::uint64_t>(n);
  }
  return {};
}

// The directory a relative name starts from, as the sandbox names it: the caller's current directory or the
// directory fd it passed (the kernel writes both links in the caller's own view); empty when it is not one.
std::string start_directory(pid_t tid, int dir_argument, std::uint64_t value) {
  int fd = static_cast<int>(value);
  std::string link = "/proc/" + std::to_string(tid) + (dir_argument < 0 || fd == AT_FDCWD ? "/cwd" : "/fd/" + std::to_string(fd));
  char buf[PATH_MAX];
  auto n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf || buf[0] != '/') return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

bool LookupRecorder::take(const struct seccomp_notif& request) {
  auto where = path_argument(request.data.nr);
  if (!where) return false;
  auto tid = static_cast<pid_t>(request.pid);
  auto name = read_name(tid, request.data.args[where->path]);
  if (!name.empty() && name.front() != '/') {
    auto start = start_directory(tid, where->dir, where->dir < 0 ? 0 : request.data.args[where->dir]);
    name = start.empty() ? std::string() : start + "/" + name;
  }
  // The name read belongs to this call only if it is still waiting; a name from a reused pid is not recorded.
  bool valid = ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_ID_VALID, &request.id) == 0;
  if (valid && !name.empty() && out_ >= 0 && seen_.size() < kMaxNames && seen_.insert(name).second) {
    name.push_back('\0');
    [[maybe_unused]] auto n = ::write(out_, name.data(), name.size());
  }
  struct seccomp_notif_resp response {};
  response.id = request.id;
  response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;  // recorded, never decided: the kernel runs the call as made
  ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_SEND, &response);
  return true;
}

}  // namespace confine::run
