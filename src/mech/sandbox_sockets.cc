#include "mech/sandbox_sockets.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>

#include "sys/syscalls.h"

namespace confine::mech {
namespace {

struct Request {
  int family;
  int type;
};

bool allowed_request(const Request& r) {
  return (r.family == AF_INET || r.family == AF_INET6) && (r.type == SOCK_STREAM || r.type == SOCK_DGRAM);
}

// One reply: the errno of the attempt, and the socket as SCM_RIGHTS when it is 0.
int send_reply(int channel, int err, int fd) {
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct iovec iov {&err, sizeof err};
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (err == 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    auto* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  return ::sendmsg(channel, &msg, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

bool same_namespace(int ns_fd, const char* own) {
  struct stat theirs {}, ours {};
  return ::fstat(ns_fd, &theirs) == 0 && ::stat(own, &ours) == 0 && theirs.st_ino == ours.st_ino &&
         theirs.st_dev == ours.st_dev;
}

// The socket maker's whole life (a forked child of confine: system calls only, no allocation).
[[noreturn]] void serve(int channel, int user_ns, int net_ns, pid_t confine) {
  // Gone with confine, however confine ends; if it already ended, nobody is left to ask.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != confine) _exit(1);
  // A fork of confine holds what confine held (a --secret's real value): once in the sandbox's user namespace, no
  // process there may read its memory, even one that could name it.
  if (::prctl(PR_SET_DUMPABLE, 0) != 0) _exit(1);
  int keep[] = {channel, user_ns, net_ns};
  std::sort(std::begin(keep), std::end(keep));  // close_fds_from takes them in ascending order
  if (sys::close_fds_from(3, keep, 3) != 0) _exit(1);
  // The user namespace first: there the maker holds CAP_SYS_ADMIN over the network namespace, which setns() needs.
  // Run by root without a user namespace of its own, the sandbox shares confine's, and root may enter directly.
  if (!same_namespace(user_ns, "/proc/self/ns/user") && ::setns(user_ns, CLONE_NEWUSER) != 0) _exit(1);
  if (::setns(net_ns, CLONE_NEWNET) != 0) _exit(1);
  ::close(user_ns);
  ::close(net_ns);
  for (;;) {
    Request r{};
    ssize_t n = ::recv(channel, &r, sizeof r, 0);
    if (n == 0) _exit(0);  // confine closed its end: the run is over
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof r)) _exit(1);
    int fd = allowed_request(r) ? ::socket(r.family, r.type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) : -1;
    int err = fd >= 0 ? 0 : (allowed_request(r) ? errno : EINVAL);
    int sent = send_reply(channel, err, fd);
    if (fd >= 0) ::close(fd);
    if (sent != 0) _exit(1);
  }
}

sys::Result<sys::UniqueFd> open_namespace(pid_t pid, const char* kind) {
  auto path = "/proc/" + std::to_string(pid) + "/ns/" + kind;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys::errno_error("cannot open the sandbox's " + std::string(kind) + " namespace (" + path + ")");
  return sys::UniqueFd(fd);
}

}  // namespace

sys::Result<SandboxSockets> SandboxSockets::start(pid_t sandbox_pid) {
  auto user_ns = open_namespace(sandbox_pid, "user");
  if (!user_ns) return user_ns.error();
  auto net_ns = open_namespace(sandbox_pid, "net");
  if (!net_ns) return net_ns.error();
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return sys::errno_error("cannot make the socket maker's channel");
  sys::UniqueFd ours(pair[0]), theirs(pair[1]);
  pid_t confine = ::getpid();
  pid_t maker = ::fork();
  if (maker < 0) return sys::errno_error("cannot start the socket maker");
  if (maker == 0) serve(theirs.get(), user_ns->get(), net_ns->get(), confine);
  return SandboxSockets(maker, std::move(ours));
}

SandboxSockets::SandboxSockets(SandboxSockets&& o) noexcept
    : maker_(std::exchange(o.maker_, -1)), channel_(std::move(o.channel_)), asking_(std::move(o.asking_)) {}

SandboxSockets& SandboxSockets::operator=(SandboxSockets&& o) noexcept {
  if (this != &o) {
    stop();
    maker_ = std::exchange(o.maker_, -1);
    channel_ = std::move(o.channel_);
    asking_ = std::move(o.asking_);
  }
  return *this;
}

SandboxSockets::~SandboxSockets() { stop(); }

void SandboxSockets::stop() {
  // Closing the channel is the maker's signal to exit; waiting for it leaves no zombie behind.
  channel_.reset();
  if (maker_ > 0) {
    while (::waitpid(maker_, nullptr, 0) < 0 && errno == EINTR) {}
    maker_ = -1;
  }
}

sys::Result<sys::UniqueFd> SandboxSockets::make(int family, int type) const {
  Request r{family, type};
  std::lock_guard one_at_a_time(*asking_);
  if (::send(channel_.get(), &r, sizeof r, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof r))
    return sys::errno_error("the socket maker is gone");
  int err = 0;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct iovec iov {&err, sizeof err};
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(channel_.get(), &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
  if (n != static_cast<ssize_t>(sizeof err)) return sys::errno_error("the socket maker is gone");
  auto* c = CMSG_FIRSTHDR(&msg);
  if (err != 0 || c == nullptr || c->cmsg_type != SCM_RIGHTS) {
    // A socket sent but cut off on the way in: confine had no descriptor left to receive it in.
    errno = err != 0 ? err : (msg.msg_flags & MSG_CTRUNC) != 0 ? EMFILE : EPROTO;
    return sys::errno_error("cannot make a socket in the sandbox's network namespace");
  }
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return sys::UniqueFd(fd);
}

}  // namespace confine::mech
