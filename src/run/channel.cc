#include "run/channel.h"

#include <sys/socket.h>

#include <cstring>

namespace confine::run {

void send_report(int channel, Phase phase, std::uint32_t step, int err) {
  ChildReport r{phase, step, err};
  [[maybe_unused]] auto n = ::send(channel, &r, sizeof r, MSG_NOSIGNAL);
}

int send_listeners(int channel, const int* fds, int count) {
  ChildReport r{Phase::listeners, static_cast<std::uint32_t>(count), 0};
  struct iovec io {&r, sizeof r};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)]{};
  struct msghdr msg {};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<unsigned>(count));
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<unsigned>(count));
  std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<unsigned>(count));
  return ::sendmsg(channel, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof r) ? 0 : -1;
}

long receive_message(int channel, ChildReport& report, int* fds, int* fd_count) {
  struct iovec io {&report, sizeof report};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  struct msghdr msg {};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  long n = ::recvmsg(channel, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  *fd_count = 0;
  if (n <= 0) return n;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int k = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    std::memcpy(fds + *fd_count, CMSG_DATA(c), sizeof(int) * static_cast<unsigned>(k));
    *fd_count += k;
  }
  return n;
}

int receive_go(int channel, int* fds) {
  char byte = 0;
  struct iovec io {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  struct msghdr msg {};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(channel, &msg, MSG_CMSG_CLOEXEC) != 1 || byte != 'g') return -1;
  int count = 0;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int n = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    std::memcpy(fds + count, CMSG_DATA(c), sizeof(int) * static_cast<unsigned>(n));
    count += n;
  }
  return count;
}

}  // namespace confine::run
