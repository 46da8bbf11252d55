// Credentials the sandbox never holds (--secret NAME[=SOURCE] --for HOST[,HOST…]) and the brokered HTTPS
// endpoints they are mostly used through (--broker PORT=https://HOST[:PORT]). Pure: parsing the flags into types,
// making placeholders, and the one substitution rule (a placeholder in a request header to a listed host becomes
// the real value, in clear text only to a loopback address or a port named plain HTTP; anywhere else it stays as
// it is). Reading the real values is confine's, at the start of a run (src/run/secret_values.cc); the proxy and the
// broker (src/net/) only ask these types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

// Where confine reads a secret's real value, on the host, before the run.
struct SecretSource {
  enum class Kind {
    environment,  // env:VAR, the caller's variable (default: the secret's own name)
    file,         // file:PATH, the whole file less one trailing newline
    command,      // cmd:COMMAND, run by /bin/sh as the caller; its output less trailing newlines
  } kind = Kind::environment;
  std::string where;  // the variable, the absolute path, or the command line
};

// A host's port where the real value may go in plain HTTP although the host is not on this machine
// (--for http://HOST:PORT): the user says that port speaks only plain HTTP.
struct PlainHttpPort {
  std::string host;  // normalised
  std::uint16_t port = 80;
  bool operator==(const PlainHttpPort&) const = default;
};

struct SecretSpec {
  std::string name;                // the variable that holds the placeholder inside
  SecretSource source;
  std::vector<std::string> hosts;  // normalised host names that receive the real value
  std::vector<PlainHttpPort> plain_http;  // where it may also go in clear text to a remote address; hosts has each
  std::string placeholder;         // random per run; empty until make_placeholder
};

// "NAME", "NAME=env:VAR", "NAME=file:PATH", "NAME=cmd:COMMAND" with its --for "ITEM[,ITEM…]", each ITEM a host
// name (over TLS, or in clear text to a loopback address) or http://HOST[:PORT] (the host, and plain HTTP on that
// port, 80 if none, wherever the host is). A relative file path stays relative here (the caller makes it absolute).
sys::Result<SecretSpec> parse_secret(std::string_view spec, std::string_view for_hosts);

// May the real value of `spec` be written in clear text (a plain-HTTP request to `host`, normalised and listed for
// it) to `address`:`port`? Only to a loopback address, where it stays on this machine, or to a port the user named
// plain HTTP for that host (--for http://HOST:PORT). `address` empty: not known (an upstream proxy carries the
// request on), so not loopback.
bool may_substitute_in_clear(std::string_view address, std::uint16_t port, std::string_view host, const SecretSpec& spec);

// The first bytes a client sent on a connection: the start of an HTTP/1 request (`METHOD SP TARGET SP HTTP/1.x`
// and the end of that line), surely something else (TLS, SSH, a binary protocol), or too few bytes to tell.
enum class RequestStart { http, other, need_more };
RequestStart classify_request_start(std::string_view bytes);

// The placeholder's shape: a fixed prefix and 64 hex digits, so it cannot be mistaken for real data.
std::string placeholder_from_random(const unsigned char (&random)[32]);
// A fresh placeholder from the kernel's random source (a run's secrets each get their own).
std::string make_placeholder();

// A local plain-HTTP endpoint inside the sandbox that confine forwards over verified TLS to `host`.
struct BrokerSpec {
  std::uint16_t local_port = 0;  // on the sandbox's 127.0.0.1
  std::string host;              // normalised
  std::uint16_t port = 443;
  std::string text;              // as given, for messages
};

// "PORT=https://HOST[:PORT]" (no path, no userinfo).
sys::Result<BrokerSpec> parse_broker(std::string_view spec);

// 127.0.0.0/8, ::1 or ::ffff:127.x (brackets allowed): an address of this machine's own loopback.
bool is_loopback_address(std::string_view address);

// A service's base URL as an agent takes it (ANTHROPIC_BASE_URL): http[s]://HOST[:PORT][/PATH]; no userinfo,
// query, fragment or bracketed address. `what` names it in errors.
struct EndpointUrl {
  bool tls = true;
  std::string host;  // normalised
  std::uint16_t port = 443;
  std::string path;  // "" or "/…", without a trailing slash
};
sys::Result<EndpointUrl> parse_endpoint_url(std::string_view url, const std::string& what);

// A secret's real value with its spec, held by confine only.
struct LoadedSecret {
  SecretSpec spec;
  std::string value;
};

// Where a request's headers go: the host it names and, for plain HTTP, the peer they are written to in clear.
struct RequestDestination {
  std::string host;         // normalised
  std::uint16_t port = 0;
  bool tls = false;         // over TLS (a broker): never in clear on the wire
  std::string address;      // plain HTTP: the address written to; empty: not known (an upstream proxy)
};

// What the substitution did to one header value.
struct HeaderSubstitution {
  std::string value;                     // the value to send
  std::vector<std::string> substituted;  // names of the secrets put in
  std::vector<std::string> withheld;     // names whose placeholder went out as is: `host` is not listed for them
  // Names listed for the host whose value may not go there in clear text (may_substitute_in_clear): their
  // placeholder stays, and the caller refuses the request.
  std::vector<std::string> refused;
};

class SecretSet {
 public:
  SecretSet() = default;
  explicit SecretSet(std::vector<LoadedSecret> secrets) : secrets_(std::move(secrets)) {}

  // The value of request header `header_name` to `to`: each placeholder of a secret listed for `to.host` becomes
  // its real value, over TLS or where may_substitute_in_clear allows it (else it stays, and is named in
  // `refused`); any other placeholder stays. The Host header is never substituted: it names the destination, like
  // the URL.
  [[nodiscard]] HeaderSubstitution substitute_header(std::string_view header_name, std::string_view value,
                                                     const RequestDestination& to) const;
  // True when some secret is listed for `host` (normalised): its plain-HTTP requests are read to substitute.
  [[nodiscard]] bool lists(std::string_view host) const;
  // True when `text` holds a real value (a short value only when `text` is exactly it: "abc" is in too much).
  [[nodiscard]] bool any_value_in(std::string_view text) const;
  [[nodiscard]] bool empty() const { return secrets_.empty(); }

 private:
  std::vector<LoadedSecret> secrets_;
};

// The variables of `env` ("NAME=value") whose value holds a real value of `secrets`, under whatever name the
// caller had it: the plan leaves them out of the command's environment.
std::vector<std::string> variables_holding_secrets(const std::vector<std::string>& env, const SecretSet& secrets);

}  // namespace confine
