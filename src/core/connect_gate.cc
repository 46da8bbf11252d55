#include "core/connect_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>

#include "core/seccomp_compile.h"

namespace confine {
namespace {

// Offsets into struct seccomp_data: nr, arch, then the six arguments as 64-bit words (low half first on the
// little-endian ABIs confine is built for).
constexpr std::uint32_t kNrOffset = 0;
constexpr std::uint32_t kArchOffset = 4;
constexpr std::uint32_t arg_low(unsigned n) { return 16 + 8 * n; }
constexpr std::uint32_t arg_high(unsigned n) { return 16 + 8 * n + 4; }

// A prefix written with symbolic jump targets, resolved into BPF's forward offsets at the end: the next
// instruction, the notification, the program, or a label placed later.
class Prefix {
 public:
  using Target = int;
  static constexpr Target next = -1, notify = -2, program = -3;

  void load(std::uint32_t offset) { add(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset), next, next); }
  void jump_if_equal(std::uint32_t k, Target yes, Target no) { add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0), yes, no); }
  void jump_if_any_bit(std::uint32_t k, Target yes, Target no) { add(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, k, 0, 0), yes, no); }
  Target new_label() {
    labels_.push_back(0);
    return static_cast<Target>(labels_.size() - 1);
  }
  void place(Target label) { labels_[static_cast<std::size_t>(label)] = code_.size(); }

  // The instructions, then `ret USER_NOTIF`, then the program.
  std::vector<struct sock_filter> followed_by(const std::vector<struct sock_filter>& rest) const {
    std::vector<struct sock_filter> out;
    for (std::size_t i = 0; i < code_.size(); ++i) {
      auto in = code_[i].instruction;
      if (BPF_CLASS(in.code) == BPF_JMP) {
        in.jt = offset(i, code_[i].yes);
        in.jf = offset(i, code_[i].no);
      }
      out.push_back(in);
    }
    out.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  }

 private:
  struct Entry {
    struct sock_filter instruction;
    Target yes, no;
  };
  // BPF jumps forward only, by an 8-bit count of instructions skipped.
  std::uint8_t offset(std::size_t from, Target t) const {
    std::size_t to = t == next ? from + 1 : t == notify ? code_.size() : t == program ? code_.size() + 1 : labels_[static_cast<std::size_t>(t)];
    return static_cast<std::uint8_t>(to - from - 1);
  }
  void add(struct sock_filter in, Target yes, Target no) { code_.push_back({in, yes, no}); }
  std::vector<Entry> code_;
  std::vector<std::size_t> labels_;
};

}  // namespace

std::vector<struct sock_filter> network_calls_notified(const std::vector<struct sock_filter>& program) {
  Prefix p;
  auto not_sendto = p.new_label(), not_sendmsg = p.new_label();
  // The architecture first: a syscall number means something only on the native ABI; any other goes to the
  // program, which kills it.
  p.load(kArchOffset);
  p.jump_if_equal(seccomp_native_arch(), Prefix::next, Prefix::program);
  p.load(kNrOffset);
  p.jump_if_equal(SYS_connect, Prefix::notify, Prefix::next);
  p.jump_if_equal(SYS_bind, Prefix::notify, Prefix::next);
  p.jump_if_equal(SYS_listen, Prefix::notify, Prefix::next);
  // sendto(fd, buf, len, flags, addr, addrlen): Fast Open in the flags, or any destination address (64 bits).
  p.jump_if_equal(SYS_sendto, Prefix::next, not_sendto);
  p.load(arg_low(3));
  p.jump_if_any_bit(MSG_FASTOPEN, Prefix::notify, Prefix::next);
  p.load(arg_low(4));
  p.jump_if_equal(0, Prefix::next, Prefix::notify);
  p.load(arg_high(4));
  p.jump_if_equal(0, Prefix::program, Prefix::notify);
  // sendmsg(fd, msg, flags) and sendmmsg(fd, vec, n, flags): Fast Open only (their address is behind a pointer,
  // and sendmsg is how the listener itself reaches confine).
  p.place(not_sendto);
  p.jump_if_equal(SYS_sendmsg, Prefix::next, not_sendmsg);
  p.load(arg_low(2));
  p.jump_if_any_bit(MSG_FASTOPEN, Prefix::notify, Prefix::program);
  p.place(not_sendmsg);
  p.jump_if_equal(SYS_sendmmsg, Prefix::next, Prefix::program);
  p.load(arg_low(3));
  p.jump_if_any_bit(MSG_FASTOPEN, Prefix::notify, Prefix::program);
  return p.followed_by(program);
}

std::vector<struct sock_filter> path_lookups_notified(const std::vector<struct sock_filter>& program) {
  // O_TMPFILE needs a write mode, so O_WRONLY|O_RDWR covers it.
  constexpr std::uint32_t kMayWrite = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;
  Prefix p;
  p.load(kArchOffset);
  p.jump_if_equal(seccomp_native_arch(), Prefix::next, Prefix::program);
  p.load(kNrOffset);
  for (long nr : {SYS_newfstatat, SYS_statx, SYS_faccessat, SYS_faccessat2})
    p.jump_if_equal(static_cast<std::uint32_t>(nr), Prefix::notify, Prefix::next);
#ifdef SYS_open
  for (long nr : {SYS_stat, SYS_lstat, SYS_access}) p.jump_if_equal(static_cast<std::uint32_t>(nr), Prefix::notify, Prefix::next);
  auto not_open = p.new_label();
  p.jump_if_equal(SYS_open, Prefix::next, not_open);
  p.load(arg_low(1));
  p.jump_if_any_bit(kMayWrite, Prefix::program, Prefix::notify);
  p.place(not_open);
#endif
  p.jump_if_equal(SYS_openat, Prefix::next, Prefix::program);
  p.load(arg_low(2));
  p.jump_if_any_bit(kMayWrite, Prefix::program, Prefix::notify);
  return p.followed_by(program);
}

SocketAddress read_socket_address(std::string_view bytes) {
  SocketAddress out;
  sa_family_t family = 0;
  if (bytes.size() < sizeof family) return out;
  std::memcpy(&family, bytes.data(), sizeof family);
  char text[INET6_ADDRSTRLEN] = {};
  switch (family) {
    case AF_UNSPEC:
      out.kind = SocketAddress::Kind::unspecified;
      return out;
    case AF_INET: {
      sockaddr_in in{};
      if (bytes.size() < sizeof in) return out;
      std::memcpy(&in, bytes.data(), sizeof in);
      ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
      out.kind = SocketAddress::Kind::ipv4;
      out.address = text;
      out.port = ntohs(in.sin_port);
      return out;
    }
    case AF_INET6: {
      sockaddr_in6 in6{};
      // The kernel takes the 24-byte form without sin6_scope_id (SIN6_LEN_RFC2133).
      if (bytes.size() < 24) return out;
      std::memcpy(&in6, bytes.data(), std::min(bytes.size(), sizeof in6));
      out.port = ntohs(in6.sin6_port);
      if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
        ::inet_ntop(AF_INET, &in6.sin6_addr.s6_addr[12], text, sizeof text);
        out.kind = SocketAddress::Kind::ipv4;
        out.mapped = true;
      } else {
        ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
        out.kind = SocketAddress::Kind::ipv6;
      }
      out.address = text;
      return out;
    }
    default:
      out.kind = SocketAddress::Kind::other;
      return out;
  }
}

bool is_loopback(std::string_view address) {
  // The unspecified addresses connect to this host itself: inside, the sandbox's own loopback.
  return address == "::1" || address.rfind("127.", 0) == 0 || address == "0.0.0.0" || address == "::";
}

bool is_name_address(std::string_view address) { return address.rfind("127.77.", 0) == 0; }

namespace {

std::optional<Ipv4> ipv4_of(const std::string& text) {
  in_addr a{};
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1) return std::nullopt;
  Ipv4 out;
  std::memcpy(out.octets.data(), &a, 4);
  return out;
}

// Whether confine must read the bytes to `host`:`port`: a secret to put in, rules to check, a TLS name to check,
// or an upstream proxy to go through.
bool must_read(const GatePolicy& p, const std::string& host, std::uint16_t port) {
  return p.secrets.lists(host) || p.rules.restricts(host, port) || (p.check_sni && port == 443) || p.upstream;
}

ConnectRoute refused(std::string host, std::uint16_t port, NetRefusal why, std::string reason) {
  ConnectRoute r;
  r.kind = ConnectRoute::Kind::refused;
  r.allow_with = allow_hint(why, host, port);
  r.host = std::move(host);
  r.port = port;
  r.refusal = why;
  r.reason = std::move(reason);
  return r;
}

ConnectRoute routed(ConnectRoute::Kind kind, std::string host, std::uint16_t port) {
  ConnectRoute r;
  r.kind = kind;
  r.host = std::move(host);
  r.port = port;
  return r;
}

// An address the DNS stub gave a name: decided as a CONNECT to name:port.
ConnectRoute route_name(const GatePolicy& p, const std::string& name, const std::string& address, std::uint16_t port) {
  auto admission = admit(p.allow, p.rules, NetAsk{.host = name, .port = port});
  if (!admission.allowed) return refused(name, port, admission.refusal, admission.reason);
  // confine's listener at the name's address reads the bytes; it exists on the ports transparent_ports lists.
  if (must_read(p, name, port)) return routed(ConnectRoute::Kind::inside, address, port);
  return routed(ConnectRoute::Kind::host, name, port);
}

// The sandbox's loopback: its own servers, confine's listeners, and the host-loopback ports the allowlist names.
ConnectRoute route_loopback(const GatePolicy& p, const SocketAddress& to) {
  bool own = std::find(p.own_ports.begin(), p.own_ports.end(), to.port) != p.own_ports.end();
  if (own && to.address == "127.0.0.1") return routed(ConnectRoute::Kind::inside, to.address, to.port);
  // An address literal: it needs an address entry.
  auto admission = admit(p.allow, p.rules, NetAsk{.host = to.address, .port = to.port});
  if (!admission.allowed && admission.refusal == NetRefusal::request_rule)
    return refused(to.address, to.port, admission.refusal, admission.reason);
  if (admission.allowed) {
    // A secret listed for `localhost` is listed for the loopback it names.
    if (must_read(p, to.address, to.port) || p.secrets.lists("localhost"))
      return routed(ConnectRoute::Kind::inside, to.address, to.port);
    // Learning, every port of the host's loopback is allowed, but a server of the sandbox's own at that port (a
    // test suite's) is what the command meant when one listens: the host's port only when none does.
    if (!p.allow.check_address(to.address, to.port).allowed) {
      auto r = routed(ConnectRoute::Kind::inside, to.address, to.port);
      r.host_if_refused = true;
      return r;
    }
    return routed(ConnectRoute::Kind::host, to.address, to.port);
  }
  auto r = routed(ConnectRoute::Kind::inside, to.address, to.port);
  r.unallowed_if_refused = true;
  r.refusal = NetRefusal::not_allowed;
  r.reason = "nothing listens there in the sandbox, and the host's port is not in the allowlist";
  r.allow_with = allow_hint(NetRefusal::not_allowed, to.address, to.port);
  return r;
}

}  // namespace

ConnectRoute route_connect(const GatePolicy& p, const AddressBook& book, const SocketAddress& to) {
  if (is_name_address(to.address)) {
    auto address = ipv4_of(to.address);
    auto name = address ? book.name_at(*address) : std::nullopt;
    // No name has this address: nothing listens there, as without confine.
    if (!name) return routed(ConnectRoute::Kind::inside, to.address, to.port);
    return route_name(p, std::string(*name), to.address, to.port);
  }
  if (is_loopback(to.address)) return route_loopback(p, to);
  // An address literal: it needs an address entry.
  auto admission = admit(p.allow, p.rules, NetAsk{.host = to.address, .port = to.port});
  if (!admission.allowed) return refused(to.address, to.port, admission.refusal, admission.reason);
  if (must_read(p, to.address, to.port))
    return refused(to.address, to.port, NetRefusal::request_rule,
                   "confine reads what goes to " + to.address + " (a secret, rules or --check-sni): reach it through "
                   "the proxy ($HTTPS_PROXY)");
  return routed(ConnectRoute::Kind::host, to.address, to.port);
}

}  // namespace confine
