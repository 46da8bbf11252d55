// The descriptors confine serves while the sandbox runs, besides its own (signals, pid 1's channel): the command's
// seccomp listener and the masks' inotify watch. The supervisor polls them in its one loop on confine's main
// thread, so a run starts no thread for them (tests/budget/plain-run.txt).
#pragma once

#include <poll.h>

#include <sys/inotify.h>

#include <functional>
#include <string_view>
#include <vector>

namespace confine::run {

// Reads every event queued on a non-blocking inotify descriptor, calling `on_event` with each and its name (empty
// for an event on the watched object itself).
void read_inotify_events(int fd, const std::function<void(const struct inotify_event&, std::string_view name)>& on_event);

class FdWatches {
 public:
  FdWatches() = default;
  FdWatches(const FdWatches&) = delete;
  FdWatches& operator=(const FdWatches&) = delete;

  // Calls `on_readable` each time `fd` is readable, until `fd` reports a hang-up (every writer gone: the seccomp
  // listener's processes) or `remove(fd)`. `fd` must stay open until then.
  void add(int fd, std::function<void()> on_readable);
  void remove(int fd);

  // For the supervisor's poll: one entry per watched descriptor, after its own.
  void append_to(std::vector<struct pollfd>& fds) const;
  // Serves what poll reported in `fds` (the entries `append_to` added, and others it skips).
  void serve(const std::vector<struct pollfd>& fds);

 private:
  struct Watch {
    int fd;
    std::function<void()> on_readable;
  };
  std::vector<Watch> watches_;
};

}  // namespace confine::run
