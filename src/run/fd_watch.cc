#include "run/fd_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace confine::run {

FdWatch::FdWatch(int fd, std::function<void()> on_readable)
    : fd_(fd), on_readable_(std::move(on_readable)), stop_(::eventfd(0, EFD_CLOEXEC)) {
  thread_ = std::thread([this] { serve(); });
}

FdWatch::~FdWatch() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(stop_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void FdWatch::serve() {
  for (;;) {
    struct pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) on_readable_();
    else if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) return;
  }
}

}  // namespace confine::run
