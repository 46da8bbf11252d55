#include "run/fd_watch.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace confine::run {

void read_inotify_events(int fd, const std::function<void(const struct inotify_event&, std::string_view name)>& on_event) {
  alignas(struct inotify_event) char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return;
    for (char* p = buf; p < buf + n;) {
      struct inotify_event ev;
      std::memcpy(&ev, p, sizeof ev);
      // The name is NUL-padded to ev.len.
      on_event(ev, std::string_view(p + sizeof ev, ev.len > 0 ? ::strnlen(p + sizeof ev, ev.len) : 0));
      p += sizeof ev + ev.len;
    }
  }
}

void FdWatches::add(int fd, std::function<void()> on_readable) { watches_.push_back({fd, std::move(on_readable)}); }

void FdWatches::remove(int fd) {
  std::erase_if(watches_, [fd](const Watch& w) { return w.fd == fd; });
}

void FdWatches::append_to(std::vector<struct pollfd>& fds) const {
  for (const auto& w : watches_) fds.push_back({w.fd, POLLIN, 0});
}

void FdWatches::serve(const std::vector<struct pollfd>& fds) {
  for (const auto& ready : fds) {
    if (ready.revents == 0) continue;
    // Looked up again for each: a callback may add or remove watches (the vector moves under a reference).
    auto it = std::find_if(watches_.begin(), watches_.end(), [&](const Watch& w) { return w.fd == ready.fd; });
    if (it == watches_.end()) continue;
    if (ready.revents & POLLIN) {
      auto on_readable = it->on_readable;
      on_readable();
    } else if (ready.revents & (POLLHUP | POLLERR | POLLNVAL)) {
      watches_.erase(it);
    }
  }
}

}  // namespace confine::run
