#include "mech/netns.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace confine::mech {

int bring_loopback_up() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  struct ifreq ifr {};
  std::memcpy(ifr.ifr_name, "lo", 3);
  int rc = ::ioctl(s, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    rc = ::ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  int saved = errno;
  ::close(s);
  errno = saved;
  return rc;
}

int listen_on_loopback(bool ipv6, unsigned short port) {
  int s = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  int one = 1;
  ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (ipv6) {
    struct sockaddr_in6 a {};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    a.sin6_addr = in6addr_loopback;
    rc = ::bind(s, reinterpret_cast<struct sockaddr*>(&a), sizeof a);
  } else {
    struct sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = ::bind(s, reinterpret_cast<struct sockaddr*>(&a), sizeof a);
  }
  if (rc == 0) rc = ::listen(s, 256);
  if (rc != 0) {
    int saved = errno;
    ::close(s);
    errno = saved;
    return -1;
  }
  return s;
}

int bind_udp(const char* address, unsigned short port) {
  struct sockaddr_in a {};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, address, &a.sin_addr) != 1) {
    errno = EINVAL;
    return -1;
  }
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  if (::bind(s, reinterpret_cast<struct sockaddr*>(&a), sizeof a) != 0) {
    int saved = errno;
    ::close(s);
    errno = saved;
    return -1;
  }
  return s;
}

}  // namespace confine::mech
