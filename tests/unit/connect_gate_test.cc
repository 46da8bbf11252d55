// The gate's pure parts: which calls the filter hands confine, what a socket address says, and where each
// connect() from inside goes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "allowlist_of.h"
#include "core/connect_gate.h"
#include "core/seccomp_compile.h"
#include "core/seccomp_verdict.h"

using namespace confine;

namespace {

constexpr std::uint64_t AT_FDCWD_U = static_cast<std::uint32_t>(AT_FDCWD);

// A program that allows everything on the native ABI and kills anything else, as confine's own do.
std::vector<struct sock_filter> allow_all() {
  return {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4),
          BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_native_arch(), 1, 0),
          BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
          BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
}

std::uint32_t verdict(int nr, std::initializer_list<std::uint64_t> args, std::uint32_t arch = seccomp_native_arch()) {
  SeccompCall call;
  call.nr = nr;
  call.arch = arch;
  int i = 0;
  for (auto a : args) call.args[i++] = a;
  auto v = seccomp_verdict(network_calls_notified(allow_all()), call);
  REQUIRE(v);
  return *v & SECCOMP_RET_ACTION_FULL;
}

std::string ipv4(const char* address, std::uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  ::inet_pton(AF_INET, address, &in.sin_addr);
  return std::string(reinterpret_cast<const char*>(&in), sizeof in);
}

std::string ipv6(const char* address, std::uint16_t port) {
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(port);
  ::inet_pton(AF_INET6, address, &in6.sin6_addr);
  return std::string(reinterpret_cast<const char*>(&in6), sizeof in6);
}

}  // namespace

TEST_CASE("network_calls_notified: connect, bind and listen go to confine, other calls keep their verdict") {
  CHECK(verdict(SYS_connect, {3, 0x1000, 16}) == SECCOMP_RET_USER_NOTIF);
  CHECK(verdict(SYS_bind, {3, 0x1000, 16}) == SECCOMP_RET_USER_NOTIF);
  CHECK(verdict(SYS_listen, {3, 128}) == SECCOMP_RET_USER_NOTIF);
  CHECK(verdict(SYS_read, {3, 0x1000, 16}) == SECCOMP_RET_ALLOW);
  CHECK(verdict(SYS_socket, {AF_INET, SOCK_STREAM, 0}) == SECCOMP_RET_ALLOW);
  CHECK(verdict(SYS_accept4, {3, 0, 0, 0}) == SECCOMP_RET_ALLOW);
}

TEST_CASE("network_calls_notified: sends with Fast Open or a destination go to confine, plain sends do not") {
  CHECK(verdict(SYS_sendto, {3, 0x1000, 10, 0, 0, 0}) == SECCOMP_RET_ALLOW);
  CHECK(verdict(SYS_sendto, {3, 0x1000, 10, MSG_NOSIGNAL, 0, 0}) == SECCOMP_RET_ALLOW);
  CHECK(verdict(SYS_sendto, {3, 0x1000, 10, MSG_FASTOPEN, 0, 0}) == SECCOMP_RET_USER_NOTIF);
  CHECK(verdict(SYS_sendto, {3, 0x1000, 10, 0, 0x7fff0000, 16}) == SECCOMP_RET_USER_NOTIF);
  CHECK(verdict(SYS_sendto, {3, 0x1000, 10, 0, 0x100000000ULL, 16}) == SECCOMP_RET_USER_NOTIF);  // high half only
  CHECK(verdict(SYS_sendmsg, {3, 0x1000, MSG_NOSIGNAL}) == SECCOMP_RET_ALLOW);
  CHECK(verdict(SYS_sendmsg, {3, 0x1000, MSG_FASTOPEN}) == SECCOMP_RET_USER_NOTIF);
  CHECK(verdict(SYS_sendmmsg, {3, 0x1000, 2, 0}) == SECCOMP_RET_ALLOW);
  CHECK(verdict(SYS_sendmmsg, {3, 0x1000, 2, MSG_FASTOPEN}) == SECCOMP_RET_USER_NOTIF);
}

TEST_CASE("network_calls_notified: another ABI reaches the program, which kills it") {
  CHECK(verdict(SYS_connect, {3, 0x1000, 16}, 0x40000003 /* AUDIT_ARCH_I386 */) == SECCOMP_RET_KILL_PROCESS);
}

TEST_CASE("path_lookups_notified (learn): lookups that read go to confine; writes, creates and the rest keep their verdict") {
  auto lookup = [](int nr, std::initializer_list<std::uint64_t> args, std::uint32_t arch = seccomp_native_arch()) {
    SeccompCall call;
    call.nr = nr;
    call.arch = arch;
    int i = 0;
    for (auto a : args) call.args[i++] = a;
    auto v = seccomp_verdict(path_lookups_notified(network_calls_notified(allow_all())), call);
    REQUIRE(v);
    return *v & SECCOMP_RET_ACTION_FULL;
  };
  CHECK(lookup(SYS_openat, {AT_FDCWD_U, 0x1000, O_RDONLY | O_CLOEXEC}) == SECCOMP_RET_USER_NOTIF);
  CHECK(lookup(SYS_openat, {AT_FDCWD_U, 0x1000, O_RDONLY | O_DIRECTORY}) == SECCOMP_RET_USER_NOTIF);
  CHECK(lookup(SYS_newfstatat, {AT_FDCWD_U, 0x1000, 0x2000, 0}) == SECCOMP_RET_USER_NOTIF);
  CHECK(lookup(SYS_statx, {AT_FDCWD_U, 0x1000, 0, 0, 0x2000}) == SECCOMP_RET_USER_NOTIF);
  CHECK(lookup(SYS_faccessat2, {AT_FDCWD_U, 0x1000, 4, 0}) == SECCOMP_RET_USER_NOTIF);
  // What may write or create reaches the program, which checks a created file's mode (setuid files).
  CHECK(lookup(SYS_openat, {AT_FDCWD_U, 0x1000, O_WRONLY | O_CREAT, 04755}) == SECCOMP_RET_ALLOW);
  CHECK(lookup(SYS_openat, {AT_FDCWD_U, 0x1000, O_RDWR | O_TMPFILE, 04755}) == SECCOMP_RET_ALLOW);
  CHECK(lookup(SYS_openat, {AT_FDCWD_U, 0x1000, O_RDONLY | O_CREAT, 04755}) == SECCOMP_RET_ALLOW);
  CHECK(lookup(SYS_openat, {AT_FDCWD_U, 0x1000, O_RDONLY | O_TRUNC}) == SECCOMP_RET_ALLOW);
  CHECK(lookup(SYS_read, {3, 0x1000, 16}) == SECCOMP_RET_ALLOW);
  CHECK(lookup(SYS_connect, {3, 0x1000, 16}) == SECCOMP_RET_USER_NOTIF);  // the network prefix still applies
#ifdef SYS_open
  CHECK(lookup(SYS_open, {0x1000, O_RDONLY}) == SECCOMP_RET_USER_NOTIF);
  CHECK(lookup(SYS_open, {0x1000, O_WRONLY | O_CREAT, 04755}) == SECCOMP_RET_ALLOW);
  CHECK(lookup(SYS_stat, {0x1000, 0x2000}) == SECCOMP_RET_USER_NOTIF);
#endif
  CHECK(lookup(SYS_openat, {AT_FDCWD_U, 0x1000, O_RDONLY}, 0x40000003 /* AUDIT_ARCH_I386 */) == SECCOMP_RET_KILL_PROCESS);
}

TEST_CASE("read_socket_address: families, lengths and mapped addresses") {
  auto a = read_socket_address(ipv4("127.0.0.1", 9123));
  CHECK(a.kind == SocketAddress::Kind::ipv4);
  CHECK(a.address == "127.0.0.1");
  CHECK(a.port == 9123);
  auto m = read_socket_address(ipv6("::ffff:10.1.2.3", 80));
  CHECK(m.kind == SocketAddress::Kind::ipv4);
  CHECK(m.mapped);
  CHECK(m.address == "10.1.2.3");
  auto six = read_socket_address(ipv6("::1", 443));
  CHECK(six.kind == SocketAddress::Kind::ipv6);
  CHECK(six.address == "::1");
  CHECK(read_socket_address(ipv4("1.2.3.4", 1).substr(0, 8)).kind == SocketAddress::Kind::malformed);
  CHECK(read_socket_address("").kind == SocketAddress::Kind::malformed);
  sa_family_t unspec = AF_UNSPEC, unix_family = AF_UNIX;
  CHECK(read_socket_address(std::string(reinterpret_cast<char*>(&unspec), 2)).kind == SocketAddress::Kind::unspecified);
  CHECK(read_socket_address(std::string(reinterpret_cast<char*>(&unix_family), 2) + "/x").kind == SocketAddress::Kind::other);
}

TEST_CASE("route_connect: one decision for every direct connection") {
  auto allow = test::list({"127.0.0.1:9123", "api.example.com", "10.0.0.5:8080", "secret.example.com"});
  auto rule = parse_request_rule("GET ruled.example.com/v1/*");
  REQUIRE(rule.ok());
  RequestRules rules(std::vector<RequestRule>{*rule});
  SecretSpec spec;
  spec.name = "TOK";
  spec.hosts = {"secret.example.com"};
  spec.placeholder = "confine-placeholder-x";
  SecretSet secrets(std::vector<LoadedSecret>{{spec, "value"}});
  GatePolicy policy{allow, rules, secrets, false, false, {3128}};
  AddressBook book;
  auto api = book.address_for("api.example.com")->text();
  auto secret = book.address_for("secret.example.com")->text();
  auto to = [](std::string address, std::uint16_t port) {
    return read_socket_address(address.find(':') != std::string::npos ? ipv6(address.c_str(), port) : ipv4(address.c_str(), port));
  };

  SECTION("a name's address: the name, decided as a CONNECT, connected from the host") {
    auto r = route_connect(policy, book, to(api, 443));
    CHECK(r.kind == ConnectRoute::Kind::host);
    CHECK(r.host == "api.example.com");
    CHECK(r.port == 443);
    auto other_port = route_connect(policy, book, to(api, 22));
    CHECK(other_port.kind == ConnectRoute::Kind::refused);
    CHECK_THAT(other_port.allow_with, Catch::StartsWith("--allow api.example.com:22"));
  }
  SECTION("a name with a secret: confine's listener inside reads the bytes") {
    auto r = route_connect(policy, book, to(secret, 443));
    CHECK(r.kind == ConnectRoute::Kind::inside);
    CHECK(r.host == secret);
  }
  SECTION("an address no name was given: inside, where nothing listens") {
    CHECK(route_connect(policy, book, to("127.77.9.9", 443)).kind == ConnectRoute::Kind::inside);
  }
  SECTION("the host's loopback: allowed ports from the host, confine's own inside, the rest refused if nothing inside listens") {
    CHECK(route_connect(policy, book, to("127.0.0.1", 9123)).kind == ConnectRoute::Kind::host);
    CHECK(route_connect(policy, book, to("127.0.0.1", 3128)).kind == ConnectRoute::Kind::inside);
    auto r = route_connect(policy, book, to("127.0.0.1", 9124));
    CHECK(r.kind == ConnectRoute::Kind::inside);
    CHECK(r.unallowed_if_refused);
    CHECK_THAT(r.allow_with, Catch::StartsWith("--allow 127.0.0.1:9124"));
    auto six = route_connect(policy, book, to("::1", 9123));
    CHECK(six.unallowed_if_refused);
    CHECK_THAT(six.allow_with, Catch::StartsWith("--allow [::1]:9123"));
  }
  SECTION("learning: the host's loopback after the sandbox's own, any port; an entry's port from the host") {
    auto every = Allowlist::every_name(allow.entries());
    GatePolicy learning{every, rules, secrets, false, false, {3128}};
    auto r = route_connect(learning, book, to("127.0.0.1", 9124));
    CHECK(r.kind == ConnectRoute::Kind::inside);
    CHECK(r.host_if_refused);
    CHECK_FALSE(r.unallowed_if_refused);
    CHECK(route_connect(learning, book, to("::1", 22)).host_if_refused);
    CHECK(route_connect(learning, book, to("127.0.0.1", 9123)).kind == ConnectRoute::Kind::host);
    CHECK(route_connect(learning, book, to("127.0.0.1", 3128)).kind == ConnectRoute::Kind::inside);
    CHECK_FALSE(route_connect(learning, book, to("127.0.0.1", 3128)).host_if_refused);
    CHECK(route_connect(learning, book, to("10.0.0.5", 22)).kind == ConnectRoute::Kind::refused);
    CHECK_FALSE(route_connect(policy, book, to("127.0.0.1", 9124)).host_if_refused);  // strict: never
  }
  SECTION("any other address: an address entry, or refused") {
    CHECK(route_connect(policy, book, to("10.0.0.5", 8080)).kind == ConnectRoute::Kind::host);
    auto r = route_connect(policy, book, to("10.0.0.5", 22));
    CHECK(r.kind == ConnectRoute::Kind::refused);
    CHECK_THAT(r.allow_with, Catch::StartsWith("--allow 10.0.0.5:22"));
    CHECK(route_connect(policy, book, to("93.184.216.34", 443)).kind == ConnectRoute::Kind::refused);
    CHECK(route_connect(policy, book, to("::ffff:10.0.0.5", 8080)).kind == ConnectRoute::Kind::host);
  }
  SECTION("an upstream proxy or --check-sni: through confine's relay") {
    GatePolicy upstream{allow, rules, secrets, false, true, {3128}};
    CHECK(route_connect(upstream, book, to(api, 443)).kind == ConnectRoute::Kind::inside);
    GatePolicy sni{allow, rules, secrets, true, false, {3128}};
    CHECK(route_connect(sni, book, to(api, 443)).kind == ConnectRoute::Kind::inside);
  }
}

TEST_CASE("expand_loopback_name: localhost is the loopback addresses") {
  auto entry = [](const char* spec) {
    auto e = parse_allow_entry(spec);
    REQUIRE(e.ok());
    return *e;
  };
  auto e = expand_loopback_name(entry("localhost:9123"));
  REQUIRE(e.size() == 3);
  CHECK(e[0].kind == AllowEntry::Kind::exact);
  CHECK(e[0].host == "localhost");
  CHECK(e[1].kind == AllowEntry::Kind::address);
  CHECK(e[1].host == "127.0.0.1");
  CHECK(e[2].host == "::1");
  CHECK(e[1].ports == std::vector<std::uint16_t>{9123});
  CHECK(expand_loopback_name(entry("api.localhost:80")).size() == 3);
  CHECK(expand_loopback_name(entry("localhost.example.com:80")).size() == 1);
}

TEST_CASE("admit: one decision for a request or a connection, whichever door it came by") {
  auto allow = test::list({"api.example.com", "ruled.example.com:80"});
  auto rule = parse_request_rule("GET ruled.example.com:80/v1/*");
  REQUIRE(rule.ok());
  RequestRules rules(std::vector<RequestRule>{*rule});

  SECTION("the allowlist first, on every door") {
    auto refused = admit(allow, rules, NetAsk{.host = "other.example.com", .port = 443});
    CHECK_FALSE(refused.allowed);
    CHECK(refused.refusal == NetRefusal::not_allowed);
    auto request = admit(allow, rules, NetAsk{.host = "other.example.com", .port = 80, .method = "GET", .target = "/"});
    CHECK(request.refusal == NetRefusal::not_allowed);
    CHECK(admit(allow, rules, NetAsk{.host = "api.example.com", .port = 443}).allowed);
  }
  SECTION("method/path rules: a request read in clear is matched, bytes passed on unread are refused") {
    CHECK(admit(allow, rules, NetAsk{.host = "ruled.example.com", .port = 80, .method = "GET", .target = "/v1/x"}).allowed);
    auto post = admit(allow, rules, NetAsk{.host = "ruled.example.com", .port = 80, .method = "POST", .target = "/v1/x"});
    CHECK(post.refusal == NetRefusal::request_rule);
    auto dotdot = admit(allow, rules, NetAsk{.host = "ruled.example.com", .port = 80, .method = "GET", .target = "/v1/..;/admin"});
    CHECK_FALSE(dotdot.allowed);
    auto tunnel = admit(allow, rules, NetAsk{.host = "ruled.example.com", .port = 80, .unread_by = "a CONNECT tunnel"});
    CHECK(tunnel.refusal == NetRefusal::request_rule);
    CHECK_THAT(tunnel.reason, Catch::Contains("a CONNECT tunnel would bypass"));
  }
  SECTION("the gate takes the same decision for a direct connect() to the name's address") {
    AddressBook book;
    SecretSet secrets;
    GatePolicy policy{allow, rules, secrets, false, false, {3128}};
    auto address = book.address_for("ruled.example.com")->text();
    auto r = route_connect(policy, book, read_socket_address(ipv4(address.c_str(), 80)));
    CHECK(r.kind == ConnectRoute::Kind::refused);
    CHECK(r.refusal == NetRefusal::request_rule);
    CHECK(r.reason == admit(allow, rules, NetAsk{.host = "ruled.example.com", .port = 80}).reason);
  }
}
