#include "run/channel.h"

#include <sys/socket.h>

#include <cstring>

namespace confine::run {
namespace {

// One message of `len` bytes with up to kMaxPassedFds descriptors attached (SCM_RIGHTS).
long send_with_fds(int channel, const void* data, std::size_t len, const int* fds, int count) {
  struct iovec io {const_cast<void*>(data), len};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)]{};
  struct msghdr msg {};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  if (count > 0) {
    auto bytes = sizeof(int) * static_cast<unsigned>(count);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(bytes);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(bytes);
    std::memcpy(CMSG_DATA(c), fds, bytes);
  }
  return ::sendmsg(channel, &msg, MSG_NOSIGNAL);
}

// Receives one message into `data`; descriptors that came with it go to `fds` (close-on-exec), their number to
// *count. Returns recvmsg's value.
long receive_with_fds(int channel, void* data, std::size_t len, int* fds, int* count, int flags) {
  struct iovec io {data, len};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  struct msghdr msg {};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  long n = ::recvmsg(channel, &msg, flags | MSG_CMSG_CLOEXEC);
  *count = 0;
  if (n <= 0) return n;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int k = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    std::memcpy(fds + *count, CMSG_DATA(c), sizeof(int) * static_cast<unsigned>(k));
    *count += k;
  }
  return n;
}

}  // namespace

void send_report(int channel, Phase phase, std::uint32_t step, int err) {
  ChildReport r{phase, step, err};
  [[maybe_unused]] auto n = ::send(channel, &r, sizeof r, MSG_NOSIGNAL);
}

int send_fds(int channel, Phase phase, const int* fds, int count, std::uint32_t detail) {
  ChildReport r{phase, static_cast<std::uint32_t>(count), static_cast<std::int32_t>(detail)};
  return send_with_fds(channel, &r, sizeof r, fds, count) == static_cast<long>(sizeof r) ? 0 : -1;
}

long receive_message(int channel, ChildReport& report, int* fds, int* fd_count) {
  return receive_with_fds(channel, &report, sizeof report, fds, fd_count, MSG_DONTWAIT);
}

int send_go(int channel, const int* fds, int count) {
  const char go = 'g';
  return send_with_fds(channel, &go, 1, fds, count) == 1 ? 0 : -1;
}

int receive_go(int channel, int* fds) {
  char byte = 0;
  int count = 0;
  if (receive_with_fds(channel, &byte, 1, fds, &count, 0) != 1 || byte != 'g') return -1;
  return count;
}

}  // namespace confine::run
