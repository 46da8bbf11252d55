// confine-tls: the TLS leg of one brokered request (--broker), in a process of its own so that confine itself
// never loads OpenSSL: runs without a broker pay nothing for it (docs/design.md, "Brokered endpoints").
//
//   confine-tls HOST        fd 3: a TCP connection to HOST that confine made (and checked against the allowlist)
//                           fd 4: confine's end of a socketpair, carrying the request and answer in clear
//
// It verifies the peer (the system's trust store, or SSL_CERT_FILE/SSL_CERT_DIR; SNI; HOST's name or address),
// then writes one status line on fd 4 — "ok" or "error: WHY" — and, after "ok", relays bytes both ways until
// the answer ends. Nothing is read from the command line but HOST, and nothing is printed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

namespace {

constexpr int kUpstream = 3;
constexpr int kPlain = 4;
constexpr int kHandshakeSeconds = 15;  // with confine's connect, the broker's 15 s for connect and handshake

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

int fail(const std::string& why) {
  std::string line = "error: " + why + "\n";
  write_all(kPlain, line.data(), line.size());
  return 1;
}

bool is_address(const char* host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host, buf) == 1 || ::inet_pton(AF_INET6, host, buf) == 1;
}

void set_timeouts(int fd, int seconds) {
  struct timeval tv {seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// The handshake, verifying the chain and the name; empty, or why it failed (as the broker's 502 says it).
std::string handshake(SSL* ssl, const char* host) {
  // SNI names the host (an address is not sent as a server name, RFC 6066); the certificate must name it.
  bool named = is_address(host) ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
                                : SSL_set_tlsext_host_name(ssl, host) == 1 && SSL_set1_host(ssl, host) == 1;
  if (!named) return "cannot set the name to verify";
  SSL_set_verify(ssl, SSL_VERIFY_PEER, nullptr);
  set_timeouts(kUpstream, kHandshakeSeconds);
  int rc = SSL_connect(ssl);
  set_timeouts(kUpstream, 0);
  if (rc == 1) return {};
  auto verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) return std::string("certificate not trusted: ") + X509_verify_cert_error_string(verify);
  unsigned long err = ERR_peek_error();
  if (err != 0) return std::string("TLS handshake failed: ") + ERR_reason_error_string(err);
  return std::string("TLS handshake failed: ") + (errno != 0 ? std::strerror(errno) : "the connection closed");
}

// Both directions until the real host ends its answer (one request per connection). The request's end (the
// client's half-close) only stops the upward direction.
int relay(SSL* ssl) {
  char buf[16 * 1024];
  bool up_open = true;
  for (;;) {
    // Bytes OpenSSL already decrypted are invisible to poll: they go down before waiting again.
    bool down = SSL_pending(ssl) > 0;
    bool up = false;
    if (!down) {
      struct pollfd fds[2] = {{kUpstream, POLLIN, 0}, {kPlain, static_cast<short>(up_open ? POLLIN : 0), 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return 1;
      }
      down = fds[0].revents != 0;
      up = up_open && fds[1].revents != 0;
    }
    if (down) {
      int n = SSL_read(ssl, buf, sizeof buf);
      // A record that held no data (a TLS 1.3 session ticket): nothing to hand down, wait again.
      if (n <= 0 && SSL_get_error(ssl, n) == SSL_ERROR_WANT_READ) continue;
      if (n <= 0) return ::shutdown(kPlain, SHUT_WR), 0;  // the answer ended
      if (!write_all(kPlain, buf, static_cast<std::size_t>(n))) return 1;
    }
    if (up) {
      ssize_t n = ::read(kPlain, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) up_open = false;
      else if (SSL_write(ssl, buf, static_cast<int>(n)) <= 0) return 1;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  // The connection comes from confine's event loop, non-blocking; this process waits on it.
  for (int fd : {kUpstream, kPlain}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  ::signal(SIGPIPE, SIG_IGN);  // a client gone mid-answer is a failed write, not a death
  // Never outlive confine (a killed confine cannot end this request itself).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 1;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return fail("cannot make a TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Without it a blocking SSL_read that meets a record without data (a session ticket) waits for the next one,
  // while the request it answers is still unread on the other side: the relay would stall.
  SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
  // OpenSSL's default paths honour SSL_CERT_FILE and SSL_CERT_DIR (confine's own environment, inherited).
  SSL_CTX_set_default_verify_paths(ctx);
  SSL* ssl = SSL_new(ctx);
  if (ssl == nullptr || SSL_set_fd(ssl, kUpstream) != 1) return fail("cannot make a TLS connection");
  errno = 0;
  if (auto why = handshake(ssl, argv[1]); !why.empty()) return fail(why);
  if (!write_all(kPlain, "ok\n", 3)) return 1;
  return relay(ssl);
}
