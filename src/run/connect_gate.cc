#include "run/connect_gate.h"

#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "sys/syscalls.h"
#include "sys/unique_fd.h"

namespace confine::run {
namespace {

constexpr unsigned kPidfdThread = O_EXCL;  // PIDFD_THREAD (Linux 6.9): a pidfd for one thread, not its group
constexpr std::uint16_t kFirstUnprivilegedPort = 1024;  // a new network namespace's ip_unprivileged_port_start

// The descriptor table a notification's thread uses: its own pidfd where the kernel has thread pidfds, else its
// thread group's (threads share one table unless they unshared it, which only a thread pidfd gets right).
sys::UniqueFd open_caller(pid_t tid) {
  int fd = sys::pidfd_open(tid, kPidfdThread);
  if (fd < 0 && errno == EINVAL) {
    std::ifstream status("/proc/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("Tgid:", 0) == 0) fd = sys::pidfd_open(static_cast<pid_t>(std::stol(line.substr(5))), 0);
  }
  return sys::UniqueFd(fd);
}

// The caller's descriptor's close-on-exec flag, which its replacement keeps ("flags:" in fdinfo, octal).
bool close_on_exec(pid_t tid, int fd) {
  std::ifstream info("/proc/" + std::to_string(tid) + "/fdinfo/" + std::to_string(fd));
  std::string line;
  while (std::getline(info, line))
    if (line.rfind("flags:", 0) == 0) return (std::stoul(line.substr(6), nullptr, 8) & O_CLOEXEC) != 0;
  return false;
}

struct SocketFacts {
  int domain = 0, type = 0, protocol = 0;
  bool inet() const { return domain == AF_INET || domain == AF_INET6; }
  bool tcp() const { return inet() && type == SOCK_STREAM && protocol == IPPROTO_TCP; }
};

SocketFacts facts_of(int fd) {
  SocketFacts f;
  socklen_t len = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &f.domain, &len);
  len = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &f.type, &len);
  len = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &f.protocol, &len);
  return f;
}

// The options a program sets on a socket before connecting it, carried over to the host socket that replaces it.
// Each is off (all zero bytes) on a new socket, so only those the program set are written.
constexpr std::pair<int, int> kCarriedOptions[] = {
    {IPPROTO_TCP, TCP_NODELAY}, {SOL_SOCKET, SO_KEEPALIVE}, {IPPROTO_TCP, TCP_USER_TIMEOUT}, {SOL_SOCKET, SO_LINGER},
    {SOL_SOCKET, SO_RCVTIMEO},  {SOL_SOCKET, SO_SNDTIMEO},  {IPPROTO_IP, IP_TOS},
};
// Keepalive's timings have defaults of their own: carried as they are when keepalive is on.
constexpr std::pair<int, int> kKeepaliveOptions[] = {
    {IPPROTO_TCP, TCP_KEEPIDLE}, {IPPROTO_TCP, TCP_KEEPINTVL}, {IPPROTO_TCP, TCP_KEEPCNT}};

void carry_options(int from, int to) {
  bool keepalive = false;
  for (auto [level, name] : kCarriedOptions) {
    char value[32] = {};
    socklen_t len = sizeof value;
    if (::getsockopt(from, level, name, value, &len) != 0) continue;
    bool set = std::any_of(value, value + len, [](char c) { return c != 0; });
    if (set) ::setsockopt(to, level, name, value, len);
    keepalive = keepalive || (name == SO_KEEPALIVE && set);
  }
  if (!keepalive) return;
  for (auto [level, name] : kKeepaliveOptions) {
    int value = 0;
    socklen_t len = sizeof value;
    if (::getsockopt(from, level, name, &value, &len) == 0) ::setsockopt(to, level, name, &value, len);
  }
}

// One notification being answered: who called, with which descriptor, and the ways to answer.
class Call {
 public:
  Call(int listener, const struct seccomp_notif& r) : listener_(listener), id_(r.id), tid_(static_cast<pid_t>(r.pid)), data_(r.data) {}

  std::uint64_t arg(int n) const { return data_.args[n]; }
  int nr() const { return data_.nr; }
  pid_t tid() const { return tid_; }

  // Still the same call (the caller was not interrupted, its pid not reused): checked after every read of it.
  bool valid() const { return ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_ID_VALID, &id_) == 0; }

  void answer(int error) const {
    struct seccomp_notif_resp r {};
    r.id = id_;
    r.error = error == 0 ? 0 : -error;
    ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_SEND, &r);
  }
  // Lets the kernel run the call as made: only for calls whose every outcome the kernel bounds by itself.
  void proceed() const {
    struct seccomp_notif_resp r {};
    r.id = id_;
    r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_SEND, &r);
  }
  // Puts `socket` at the caller's descriptor number (replacing the socket there), then answers 0.
  void replace_and_succeed(int socket, int target, bool cloexec) const {
    struct seccomp_notif_addfd add {};
    add.id = id_;
    add.flags = SECCOMP_ADDFD_FLAG_SETFD;
    add.srcfd = static_cast<std::uint32_t>(socket);
    add.newfd = static_cast<std::uint32_t>(target);
    add.newfd_flags = cloexec ? O_CLOEXEC : 0;
    if (::ioctl(listener_, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0) return answer(errno == EBADF ? EBADF : ECONNABORTED);
    answer(0);
  }

 private:
  int listener_;
  std::uint64_t id_;
  pid_t tid_;
  struct seccomp_data data_;
};

// The socket address at `pointer` in the caller's memory, `length` bytes (the kernel's limits), read once.
std::optional<std::string> read_address(pid_t tid, std::uint64_t pointer, std::uint64_t length, int& error) {
  if (length > sizeof(sockaddr_storage)) {
    error = EINVAL;
    return std::nullopt;
  }
  std::string bytes(length, '\0');
  struct iovec local {bytes.data(), bytes.size()};
  struct iovec remote {reinterpret_cast<void*>(pointer), bytes.size()};
  if (length > 0 && ::process_vm_readv(tid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(length)) {
    error = EFAULT;
    return std::nullopt;
  }
  return bytes;
}

bool refuses_datagram(const SocketFacts& f, const SocketAddress& to) {
  return f.inet() && !f.tcp() && (to.kind == SocketAddress::Kind::ipv4 || to.kind == SocketAddress::Kind::ipv6) &&
         !is_loopback(to.address);
}

// Whether `socket` was made in the sandbox's network namespace. A socket whose namespace confine cannot ask is not.
bool made_in(int socket, ino_t netns) {
  return netns != 0 && socket_netns(socket) == netns;
}

// A connection confine made from the host is that one connection: it is never bound, listened on or connected
// again (Landlock would refuse the kernel's own try; confine refuses its own).
void refuse_on_host_socket(const Call& call, net::Proxy& proxy, const char* what, const SocketAddress& to) {
  proxy.record_refused_call(NetDoor::tcp, to.address, to.port, std::string(what) + " on a connection confine made from the host");
  call.answer(EACCES);
}

// Where a socket is bound, for the record of a listen on it.
SocketAddress local_address(int socket) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(socket, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  return read_socket_address(std::string_view(reinterpret_cast<const char*>(&ss), len));
}

// confine could not hold the caller's socket (out of descriptors, or no access): the call fails, and is recorded.
void fail_without_descriptors(const Call& call, net::Proxy& proxy, int error) {
  bool exhausted = error == EMFILE || error == ENFILE;
  proxy.record_refused_call(NetDoor::tcp, "(confine could not take the call)", 0,
                            std::string("confine could not take the call: ") + std::strerror(error));
  call.answer(exhausted ? EAGAIN : EPERM);
}

}  // namespace

ino_t socket_netns(int socket) {
  sys::UniqueFd ns(::ioctl(socket, SIOCGSKNS));
  struct stat st {};
  return ns.valid() && ::fstat(ns.get(), &st) == 0 ? st.st_ino : 0;
}

ConnectGate::ConnectGate(int listener, ino_t sandbox_netns, net::Proxy& proxy)
    : listener_(listener), sandbox_netns_(sandbox_netns), proxy_(proxy) {}

bool ConnectGate::take(const struct seccomp_notif& request) {
  const int nr = request.data.nr;
  if (nr != SYS_connect && nr != SYS_bind && nr != SYS_listen && nr != SYS_sendto && nr != SYS_sendmsg && nr != SYS_sendmmsg)
    return false;
  Call call(listener_, request);
  // Fast Open connects on the first send, out of the gate's sight (and Landlock's): refused as fallback mode does.
  bool fast_open = (nr == SYS_sendto && (call.arg(3) & MSG_FASTOPEN)) || (nr == SYS_sendmsg && (call.arg(2) & MSG_FASTOPEN)) ||
                   (nr == SYS_sendmmsg && (call.arg(3) & MSG_FASTOPEN));
  if (fast_open) {
    proxy_.record_refused_call(NetDoor::tcp, "(TCP Fast Open)", 0, "TCP Fast Open (a connection without connect()) is refused in the sandbox");
    call.answer(EACCES);
    return true;
  }
  auto caller = open_caller(call.tid());
  if (!caller.valid()) {
    // Gone (nobody to answer), or confine is out of descriptors: the call fails, it never waits.
    if (call.valid()) fail_without_descriptors(call, proxy_, errno);
    return true;
  }
  if (!call.valid()) return true;
  sys::UniqueFd socket(sys::pidfd_getfd(caller.get(), static_cast<int>(call.arg(0))));
  if (!socket.valid()) {
    if (errno == EBADF) call.answer(EBADF);
    else fail_without_descriptors(call, proxy_, errno);
    return true;
  }
  struct stat st {};
  if (::fstat(socket.get(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    call.answer(ENOTSOCK);
    return true;
  }
  std::string raw;
  if (nr != SYS_listen) {
    int error = 0;
    auto pointer = nr == SYS_sendto ? call.arg(4) : call.arg(1);
    auto length = nr == SYS_sendto ? call.arg(5) : call.arg(2);
    auto bytes = read_address(call.tid(), pointer, length, error);
    if (!bytes) {
      call.answer(error);
      return true;
    }
    raw = std::move(*bytes);
  }
  // The address and descriptor read belong to this call only if it is still waiting.
  if (!call.valid()) return true;
  auto facts = facts_of(socket.get());
  auto to = read_socket_address(raw);
  bool host_socket = facts.tcp() && !made_in(socket.get(), sandbox_netns_);
  switch (nr) {
    case SYS_sendto:
      if (refuses_datagram(facts, to)) {
        proxy_.record_refused_call(NetDoor::udp, to.address, to.port, "a datagram outside the sandbox: none leaves it (only its DNS is answered, inside)");
        call.answer(ENETUNREACH);
      } else {
        call.proceed();  // Landlock does not see datagrams; the namespace has no route for one anyway
      }
      return true;
    case SYS_listen:
      if (host_socket) return refuse_on_host_socket(call, proxy_, "listen", local_address(socket.get())), true;
      call.answer(::listen(socket.get(), static_cast<int>(call.arg(1))) == 0 ? 0 : errno);
      return true;
    case SYS_bind:
      if (!facts.tcp()) return call.proceed(), true;  // Landlock refuses TCP binds the kernel would redo
      if (host_socket) return refuse_on_host_socket(call, proxy_, "bind", to), true;
      if (to.port != 0 && to.port < kFirstUnprivilegedPort) return call.answer(EACCES), true;
      call.answer(::bind(socket.get(), reinterpret_cast<const sockaddr*>(raw.data()), static_cast<socklen_t>(raw.size())) == 0 ? 0 : errno);
      return true;
    default:  // connect
      break;
  }
  if (!facts.tcp()) {
    if (refuses_datagram(facts, to)) {
      proxy_.record_refused_call(NetDoor::udp, to.address, to.port, "a datagram outside the sandbox: none leaves it (only its DNS is answered, inside)");
      call.answer(ENETUNREACH);
    } else {
      call.proceed();
    }
    return true;
  }
  if (host_socket) {
    // A connection confine made on the host, dissolved (AF_UNSPEC) or not: never connected again.
    if (to.kind == SocketAddress::Kind::unspecified) {
      call.answer(::connect(socket.get(), reinterpret_cast<const sockaddr*>(raw.data()), static_cast<socklen_t>(raw.size())) == 0 ? 0 : errno);
      return true;
    }
    return refuse_on_host_socket(call, proxy_, "connect", to), true;
  }
  if (to.kind != SocketAddress::Kind::ipv4 && to.kind != SocketAddress::Kind::ipv6) {
    // AF_UNSPEC, another family, a short address: the kernel's own answer, on the socket confine checked.
    call.answer(::connect(socket.get(), reinterpret_cast<const sockaddr*>(raw.data()), static_cast<socklen_t>(raw.size())) == 0 ? 0 : errno);
    return true;
  }
  net::GatedConnect gated;
  gated.nonblocking = (::fcntl(socket.get(), F_GETFL) & O_NONBLOCK) != 0;
  bool cloexec = close_on_exec(call.tid(), static_cast<int>(call.arg(0)));
  int target = static_cast<int>(call.arg(0));
  int original = socket.get();
  gated.raw_address = std::move(raw);
  gated.to = to;
  gated.answer = [call](int error) { call.answer(error); };
  gated.hand_over = [call, target, cloexec, original, nonblocking = gated.nonblocking](sys::UniqueFd host) {
    carry_options(original, host.get());
    // The caller's blocking mode, whatever confine's own connect left on the socket.
    int flags = ::fcntl(host.get(), F_GETFL) & ~O_NONBLOCK;
    ::fcntl(host.get(), F_SETFL, nonblocking ? flags | O_NONBLOCK : flags);
    call.replace_and_succeed(host.get(), target, cloexec);
  };
  gated.socket = std::move(socket);
  proxy_.gate_connect(std::move(gated));
  return true;
}

}  // namespace confine::run
