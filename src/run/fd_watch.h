// A thread that calls back whenever a descriptor is readable: the seccomp listener and the masks' inotify watch
// are each served this way while the sandbox runs.
#pragma once

#include <functional>
#include <thread>

#include "sys/unique_fd.h"

namespace confine::run {

class FdWatch {
 public:
  // Calls `on_readable` on its own thread each time `fd` is readable, until `fd` reports a hang-up (every writer
  // gone: the seccomp listener's processes) or the watch is destroyed. `fd` must outlive the watch.
  FdWatch(int fd, std::function<void()> on_readable);
  FdWatch(const FdWatch&) = delete;
  FdWatch& operator=(const FdWatch&) = delete;
  // Stops the thread and waits for it: a callback under way finishes first.
  ~FdWatch();

 private:
  void serve();
  int fd_;
  std::function<void()> on_readable_;
  sys::UniqueFd stop_;
  std::thread thread_;
};

}  // namespace confine::run
