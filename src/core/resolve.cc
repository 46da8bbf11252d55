#include "core/resolve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <fmt/format.h>
#include <optional>
#include <tuple>
#include <utility>

#include "core/agent_config.h"
#include "core/allowlist.h"
#include "core/env_scrub.h"
#include "core/host_layout.h"
#include "core/ids.h"
#include "core/net_mode.h"
#include "core/oci_seccomp.h"
#include "core/plan.h"
#include "core/seccomp_compile.h"
#include "sys/held_path.h"
#include "sys/unique_fd.h"
#include "sys/user_files.h"

namespace confine {
namespace {

using sys::Error;
using sys::Result;

// Every problem resolve() finds, in the order it looks. A check whose input failed is skipped, so a problem is
// reported once, not again through its consequences.
class Problems {
 public:
  // The value, or nothing when `r` failed (its error kept).
  template <typename T>
  std::optional<T> take(Result<T> r) {
    if (r) return std::move(*r);
    add(r.error());
    return std::nullopt;
  }
  void add(Error e) { errors_.push_back(std::move(e)); }
  void check(const sys::Status& s) {
    if (!s) add(s.error());
  }

  // One problem as it is (its errno too); several listed one a line below their count, as load_profile does.
  Result<Policy> or_policy(Policy p) && {
    if (errors_.empty()) return p;
    if (errors_.size() == 1) return errors_.front();
    std::string all = fmt::format("{} problems:", errors_.size());
    for (const auto& e : errors_) all += "\n" + e.message();
    return sys::plain_error(all);
  }

 private:
  std::vector<Error> errors_;
};

Result<std::string> canonical_existing(const std::string& what, const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return sys::errno_error(what + " `" + path + "`");
  return std::string(buf);
}

// Run by root, a path another user could redirect is refused (see sys/held_path.h); the caller's own paths
// otherwise. The descriptor is what the mounts and the workspace checks use from here on.
Result<sys::HeldPath> hold_user_path(const std::string& what, const std::string& path, const CallerContext& c) {
  return sys::hold_path(what, path, c.uid == 0 ? sys::PathTrust::owners_checked : sys::PathTrust::follow_links);
}

std::vector<SystemDirPlace> system_dir_places() {
  // A name that does not exist here still counts as itself: nothing else can be there.
  auto real = [](std::string_view name) {
    auto resolved = canonical_existing("", std::string(name));
    return resolved ? *resolved : std::string(name);
  };
  std::vector<SystemDirPlace> places;
  for (const auto& d : system_dirs())
    places.push_back({std::string(d.path), real(d.path), d.only_when_root_owned, real(d.except)});
  return places;
}

// As root, the sandbox writes the workspace and --rw binds with root's power over them: a system directory
// there would let it rewrite what the host runs (/usr/bin) or trusts (/etc/shadow).
sys::Status refuse_system_dir(const std::string& what, const sys::HeldPath& held, const CallerContext& c) {
  if (c.uid != 0) return sys::ok_status();
  const std::string& path = held.path;
  bool owned_by_root = held.st.st_uid == 0;
  auto clash = system_dir_clash(path, owned_by_root, system_dir_places());
  if (clash.empty()) return sys::ok_status();
  return sys::plain_error(fmt::format("{} `{}` {}: as root, the sandbox could rewrite what the host runs and trusts; "
                                      "pick a project directory", what, path, clash));
}

Result<sys::HeldPath> resolve_workspace(const Options& o, const CallerContext& c) {
  auto held = hold_user_path("workspace", absolute_from(c.cwd, o.workspace.empty() ? c.cwd : o.workspace), c);
  if (!held) return held.error();
  const std::string* ws = &held->path;
  if (!S_ISDIR(held->st.st_mode)) return sys::plain_error("workspace `" + *ws + "` is not a directory");
  // The workspace defaults to the current directory, which a container job often leaves at `/`: name the flag.
  if (*ws == "/")
    return sys::plain_error(o.workspace.empty()
                                ? "the current directory `/` would be the workspace, exposing the whole host: "
                                  "give the project directory with -w DIR (or cd into it)"
                                : "workspace `/` would expose the whole host; pick a project directory");
  // A workspace that is, or contains, $HOME would bind ~/.ssh, ~/.aws … back in read-write.
  if (!c.home.empty() && is_within(normalize_absolute(c.home), *ws))
    return sys::plain_error("workspace `" + *ws + "` contains your home directory (" + c.home +
                            "), which would expose ~/.ssh and other secrets; pick a project directory");
  if (auto s = refuse_system_dir("workspace", *held, c); !s) return s.error();
  return held;
}

// --upstream-proxy http://HOST:PORT only: the upstream is reached in plain HTTP (CONNECT for TLS), like every
// proxy client does.
Result<std::pair<std::string, std::uint16_t>> parse_upstream_proxy(const std::string& spec) {
  std::string_view u = spec;
  auto bad = sys::plain_error("--upstream-proxy `" + spec + "`: expected http://HOST:PORT");
  if (!u.starts_with("http://")) return bad;
  u.remove_prefix(7);
  if (u.ends_with("/")) u.remove_suffix(1);
  auto colon = u.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || u.find_first_of("@/") != std::string_view::npos) return bad;
  auto port = port_number(u.substr(colon + 1));
  if (!port) return bad;
  return std::pair{std::string(u.substr(0, colon)), *port};
}

std::string environment_value(const std::vector<std::string>& env, const std::string& name);

// The command line's --secret/--for/--broker, then the profile's credentials that are in use: those whose name
// the command line does not give, and whose source is there (an env: source must be set in the caller's
// environment; a file or a command is read, and must work, at the start of the run).
struct CredentialFlags {
  std::vector<std::string> secrets, hosts, brokers, set_env;
  std::vector<std::string> allow;  // the endpoints the user chose (use_chosen_endpoint)
  std::vector<std::string> notes;
  std::vector<FsPolicy::CopyEdit> copy_edits;  // the agent's configuration pointed at the brokers
};

// The value the user gave VAR: --env's (the last), else the caller's environment; empty if neither.
std::string user_value(const Options& o, const CallerContext& c, const std::string& var) {
  for (auto it = o.set_env.rbegin(); it != o.set_env.rend(); ++it)
    if (it->starts_with(var + "=")) return it->substr(var.size() + 1);
  return environment_value(c.environ, var);
}

// Where the user set an endpoint, as messages name it: the variable, or the key in the agent's configuration.
struct EndpointSource {
  std::string name;  // "ANTHROPIC_BASE_URL", "`openai_base_url` in /home/u/.codex/config.toml"
  std::string url;
};

bool is_local_plain_http(const EndpointUrl& e) {
  return !e.tls && (is_loopback_address(e.host) || e.host == "localhost");
}

// A plain-HTTP endpoint on this machine (a local gateway): the sandbox reaches it at the same address, through
// confine's forward of that loopback port, which puts the key into its requests; no broker, and the variable keeps
// the user's URL.
void use_local_endpoint(Options::ProfileCredential& pc, const std::string& profile, const EndpointSource& from,
                        const EndpointUrl& e, CredentialFlags& f) {
  const std::string& var = pc.endpoint;
  pc.broker.clear();
  pc.hosts = e.host;
  std::erase_if(pc.set_env, [&](const std::string& s) { return s.starts_with(var + "="); });
  f.set_env.push_back(var + "=" + from.url);
  f.allow.push_back(fmt::format("{}:{}", e.host, e.port));
  f.notes.push_back(fmt::format("{} is yours ({}): profile `{}` puts its key into the requests to it on this "
                                "machine, instead of brokering to its own host", from.name, from.url, profile));
}

std::string clear_text_refusal(const std::string& what, const std::string& profile, const EndpointUrl& e) {
  return fmt::format("{}: profile `{}` gives its key in clear only to this machine (127.0.0.1, localhost); serve the "
                     "endpoint over https, or pass the key yourself (--secret, --for {} and --allow {}:{})",
                     what, profile, e.host, e.host, e.port);
}

// The endpoint the user chose for a profile's credential (its `endpoint` variable, or its `endpoint_key` in the
// agent's configuration): the broker goes there instead of the profile's host, that host is allowed and listed
// for the key, and the variable inside names the broker with the URL's path. Plain HTTP only on this machine's
// loopback: the key never crosses a network in clear.
void use_chosen_endpoint(Options::ProfileCredential& pc, const std::string& profile, const EndpointSource& from,
                         CredentialFlags& f, Problems& problems) {
  const std::string& var = pc.endpoint;
  auto e = problems.take(parse_endpoint_url(from.url, from.name));
  if (!e) return;
  if (is_local_plain_http(*e)) return use_local_endpoint(pc, profile, from, *e, f);
  if (!e->tls) return problems.add(sys::plain_error(clear_text_refusal(from.name + "=" + from.url, profile, *e)));
  auto local_port = pc.broker.substr(0, pc.broker.find('='));
  pc.broker = fmt::format("{}=https://{}:{}", local_port, e->host, e->port);
  pc.hosts = e->host;
  f.allow.push_back(fmt::format("{}:{}", e->host, e->port));
  for (auto& s : pc.set_env) {
    if (!s.starts_with(var + "=")) continue;
    // The broker's address as the profile wrote it ("http://127.0.0.1:14001"), with the path of the user's URL.
    auto base = s.substr(var.size() + 1);
    auto authority_end = base.find('/', base.find("://") == std::string::npos ? 0 : base.find("://") + 3);
    s = var + "=" + base.substr(0, authority_end) + e->path;
  }
  f.notes.push_back(fmt::format("{} is yours ({}): profile `{}` brokers its key to {}:{} instead of its own host",
                                from.name, from.url, profile, e->host, e->port));
}

// The agent's configuration as read at the start, when the profile names one and it is there and is TOML.
std::optional<toml::table> agent_config_document(const Options& o, Problems& problems) {
  if (!o.agent_config || !o.agent_config->text) return std::nullopt;
  auto doc = parse_agent_config(*o.agent_config->text, o.agent_config->file);
  if (doc) return std::move(*doc);
  problems.add(sys::plain_error(fmt::format("{} (profile `{}` reads your endpoints from this file; run with --net none "
                                            "to leave it unread)", doc.error().message(), o.agent_config->profile)));
  return std::nullopt;
}

// The sandbox's copy of the agent's configuration gets `key` = `value`, when the copy is made (learn makes none).
void edit_copy(const Options& o, std::vector<std::string> key, std::string value, CredentialFlags& f) {
  const auto& copies = o.private_copies;
  if (std::find(copies.begin(), copies.end(), o.agent_config->file) == copies.end()) return;
  f.copy_edits.push_back({o.agent_config->file, std::move(key), std::move(value)});
}

std::string value_of(const std::vector<std::string>& assignments, const std::string& var) {
  for (const auto& s : assignments)
    if (s.starts_with(var + "=")) return s.substr(var.size() + 1);
  return "";
}

std::string name_of(const std::string& spec) { return spec.substr(0, spec.find('=')); }

void add_unless_there(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// A profile credential in use: the user's endpoint (the variable, else the agent's configuration) replaces the
// profile's host, and the configuration's copy names what the variable names inside.
void use_profile_credential(const Options& o, const CallerContext& c, const std::optional<toml::table>& config,
                            Options::ProfileCredential used, CredentialFlags& f, Problems& problems) {
  EndpointSource from{used.endpoint, used.endpoint.empty() ? "" : user_value(o, c, used.endpoint)};
  if (from.url.empty() && !used.endpoint_key.empty() && config)
    from = {fmt::format("`{}` in {}", used.endpoint_key, o.agent_config->file), config_string(*config, used.endpoint_key)};
  if (!from.url.empty() && !used.broker.empty()) use_chosen_endpoint(used, o.profile, from, f, problems);
  f.secrets.push_back(used.secret);
  f.hosts.push_back(used.hosts);
  // Two credentials of one profile (Codex's CODEX_API_KEY and OPENAI_API_KEY) share their broker and variables.
  if (!used.broker.empty()) add_unless_there(f.brokers, used.broker);
  for (const auto& s : used.set_env) add_unless_there(f.set_env, s);
  if (used.endpoint_key.empty() || !o.agent_config) return;
  auto inside = value_of(used.set_env, used.endpoint);
  if (inside.empty()) inside = value_of(f.set_env, used.endpoint);
  if (!inside.empty()) edit_copy(o, {used.endpoint_key}, inside, f);
}

// The key `name` goes to `host` too: a secret already listed gets the host added, another is listed from env:.
void add_secret_host(CredentialFlags& f, const std::string& name, const std::string& host) {
  for (std::size_t i = 0; i < f.secrets.size(); ++i) {
    if (name_of(f.secrets[i]) != name) continue;
    if (("," + f.hosts[i] + ",").find("," + host + ",") == std::string::npos) f.hosts[i] += "," + host;
    return;
  }
  f.secrets.push_back(name);
  f.hosts.push_back(host);
}

// The user's own providers in the agent's configuration ([model_providers.NAME] with base_url and env_key): each
// whose key variable the caller has set gets its key brokered as a profile credential is. An https endpoint goes
// through a broker on the next port from 14010 that no other broker takes, which the copy names as its base_url; a
// plain-HTTP one on this machine keeps its URL (the loopback forward puts the key in); plain HTTP elsewhere is
// refused, since the key would cross a network in clear.
void use_config_providers(const Options& o, const CallerContext& c, const toml::table& config, CredentialFlags& f,
                          Problems& problems) {
  const auto& ac = *o.agent_config;
  std::uint16_t port = 14010;
  for (const auto& provider : config_providers(config, ac.providers)) {
    if (environment_value(c.environ, provider.key_variable).empty()) continue;
    auto what = fmt::format("`{}.{}.base_url` in {}", ac.providers, provider.name, ac.file);
    auto e = problems.take(parse_endpoint_url(provider.url, what));
    if (!e) continue;
    if (!e->tls && !is_local_plain_http(*e)) {
      problems.add(sys::plain_error(clear_text_refusal(what + " (" + provider.url + ")", ac.profile, *e) +
                                    ", or unset " + provider.key_variable + " for this run"));
      continue;
    }
    add_secret_host(f, provider.key_variable, e->host);
    f.allow.push_back(fmt::format("{}:{}", e->host, e->port));
    if (!e->tls) {
      f.notes.push_back(fmt::format("provider `{}` ({}) is yours: profile `{}` puts {} into the requests to it on "
                                    "this machine", provider.name, provider.url, ac.profile, provider.key_variable));
      continue;
    }
    auto taken = [&](std::uint16_t p) {
      return std::any_of(f.brokers.begin(), f.brokers.end(), [&](const std::string& b) { return name_of(b) == std::to_string(p); });
    };
    while (taken(port)) ++port;
    f.brokers.push_back(fmt::format("{}=https://{}:{}", port, e->host, e->port));
    edit_copy(o, {ac.providers, provider.name, "base_url"}, fmt::format("http://127.0.0.1:{}{}", port, e->path), f);
    f.notes.push_back(fmt::format("provider `{}` ({}) is yours: profile `{}` brokers {} to {}:{}", provider.name,
                                  provider.url, ac.profile, provider.key_variable, e->host, e->port));
    ++port;
  }
}

CredentialFlags credentials_in_use(const Options& o, const CallerContext& c, Problems& problems) {
  CredentialFlags f{o.secrets, o.secret_for, o.brokers, {}, {}, {}, {}};
  auto config = agent_config_document(o, problems);
  for (const auto& pc : o.profile_credentials) {
    auto name = name_of(pc.secret);
    if (std::any_of(o.secrets.begin(), o.secrets.end(), [&](const std::string& s) { return name_of(s) == name; }))
      continue;
    auto eq = pc.secret.find('=');
    auto source = eq == std::string::npos ? "env:" + name : pc.secret.substr(eq + 1);
    if (source.starts_with("env:") && environment_value(c.environ, source.substr(4)).empty()) continue;
    use_profile_credential(o, c, config, pc, f, problems);
  }
  if (config && !o.agent_config->providers.empty()) use_config_providers(o, c, *config, f, problems);
  return f;
}

// --secret with its --for, pairs by position; each gets its random placeholder here, once.
void resolve_secrets(const CredentialFlags& f, const CallerContext& c, NetPolicy& p, Problems& problems) {
  if (f.secrets.size() != f.hosts.size()) {
    problems.add(sys::plain_error(fmt::format("--secret needs one --for each (the hosts that receive its value): "
                                              "{} --secret, {} --for", f.secrets.size(), f.hosts.size())));
    return;
  }
  for (std::size_t i = 0; i < f.secrets.size(); ++i) {
    auto s = problems.take(parse_secret(f.secrets[i], f.hosts[i]));
    if (!s) continue;
    if (std::any_of(p.secrets.begin(), p.secrets.end(), [&](const SecretSpec& t) { return t.name == s->name; })) {
      problems.add(sys::plain_error("--secret " + s->name + " is given twice"));
      continue;
    }
    if (s->source.kind == SecretSource::Kind::file) s->source.where = absolute_from(c.cwd, s->source.where);
    s->placeholder = make_placeholder();
    p.secrets.push_back(std::move(*s));
  }
}

// --broker: its port inside must be free of confine's other listeners, and its host one the allowlist lets
// through on that port (the broker makes the same decision per request; refusing here says so before the run).
void resolve_brokers(const CredentialFlags& f, NetPolicy& p, Problems& problems) {
  auto forwards = p.allow.loopback_forwards();
  for (const auto& spec : f.brokers) {
    auto b = problems.take(parse_broker(spec));
    if (!b) continue;
    bool taken = b->local_port == kProxyPort ||
                 std::any_of(forwards.begin(), forwards.end(), [&](const auto& f) { return f.second == b->local_port; }) ||
                 std::any_of(p.brokers.begin(), p.brokers.end(), [&](const BrokerSpec& x) { return x.local_port == b->local_port; });
    if (taken) {
      problems.add(sys::plain_error(fmt::format("--broker {}: port {} inside is already taken by confine's proxy, a "
                                                "forward or another --broker", spec, b->local_port)));
      continue;
    }
    if (auto d = p.allow.check_name(b->host, b->port); !d.allowed) {
      problems.add(sys::plain_error(fmt::format("--broker {}: {}:{} is {}; add --allow {}:{}", spec, b->host, b->port,
                                                d.reason, b->host, b->port)));
      continue;
    }
    p.brokers.push_back(std::move(*b));
  }
}

// `copy_edits`: what the profile's credentials change in the sandbox's copy of the agent's configuration.
NetPolicy resolve_proxy(const Options& o, NetChoice net, const CallerContext& c, std::vector<FsPolicy::CopyEdit>& copy_edits,
                        Problems& problems) {
  NetPolicy p;
  if (net.mode != NetMode::proxy) {
    if (!o.allow.empty() || !o.upstream_proxy.empty() || o.check_sni)
      problems.add(sys::plain_error("--allow, --upstream-proxy and --check-sni need --net proxy or --net veth"));
    // Only confine's proxy can put the real value in; elsewhere the command would hold a placeholder for nothing.
    if (!o.secrets.empty() || !o.secret_for.empty() || !o.brokers.empty())
      problems.add(sys::plain_error("--secret, --for and --broker need --net proxy or --net veth"));
    // The published ports' connections are logged too, whatever the network.
    if (!o.net_log.empty() && o.publish.empty())
      problems.add(sys::plain_error("--net-log needs --net proxy, --net veth or --publish"));
    p.log_file = o.net_log.empty() || o.publish.empty() ? "" : absolute_from(c.cwd, o.net_log);
    return p;
  }
  if (o.no_namespaces)
    problems.add(sys::plain_error(fmt::format("--net {} needs a network namespace; it cannot be used with --no-namespaces",
                                              net_word(net))));
  p.over_veth = net.over_veth;
  if (p.over_veth && c.uid != 0)
    problems.add(sys::plain_error("--net veth needs root (it creates a veth pair); --net proxy gives the same allowlist "
                                  "without privilege, on the sandbox's loopback"));
  // First: the endpoints the user chose for a profile's credentials are allowed with the --allow entries.
  auto credentials = credentials_in_use(o, c, problems);
  auto allow = o.allow;
  allow.insert(allow.end(), credentials.allow.begin(), credentials.allow.end());
  std::vector<AllowEntry> entries;
  std::vector<RequestRule> rules;
  for (const auto& spec : allow) {
    if (!is_request_rule(spec)) {
      if (auto e = problems.take(parse_allow_entry(spec)))
        for (auto& entry : expand_loopback_name(std::move(*e))) entries.push_back(std::move(entry));
      continue;
    }
    // A rule allows its host too: only the requests it names then pass there.
    auto rule = problems.take(parse_request_rule(spec));
    if (!rule) continue;
    if (auto e = problems.take(parse_allow_entry(fmt::format("{}:{}", rule->host, rule->port)))) entries.push_back(*e);
    rules.push_back(std::move(*rule));
  }
  // confine learn lets every name through and records it; the entries still decide their own addresses.
  p.allow = o.subcommand == Subcommand::learn ? Allowlist::every_name(std::move(entries)) : Allowlist(std::move(entries));
  p.rules = RequestRules(std::move(rules));
  for (const auto& [host, port] : p.allow.loopback_forwards())
    if (port == kProxyPort)
      problems.add(sys::plain_error("--allow " + host + ":" + std::to_string(port) + ": that port is the proxy's own inside"));
  p.log_file = o.net_log.empty() ? "" : absolute_from(c.cwd, o.net_log);
  p.check_sni = o.check_sni;
  if (!o.upstream_proxy.empty())
    if (auto upstream = problems.take(parse_upstream_proxy(o.upstream_proxy)))
      std::tie(p.upstream_host, p.upstream_port) = *upstream;
  resolve_secrets(credentials, c, p, problems);
  resolve_brokers(credentials, p, problems);
  p.credential_env = std::move(credentials.set_env);
  p.notes = std::move(credentials.notes);
  copy_edits = std::move(credentials.copy_edits);
  return p;
}

// --publish needs the sandbox's own network namespace (with --net host its servers are the host's already), and
// each host address and port can be listened on once.
std::vector<PublishedPort> resolve_published(const Options& o, NetChoice net, Problems& problems) {
  std::vector<PublishedPort> out;
  for (const auto& spec : o.publish) {
    auto port = problems.take(parse_published_port(spec));
    if (!port) continue;
    if (net.mode == NetMode::host) {
      problems.add(sys::plain_error("--publish " + spec + ": with --net host the sandbox shares the host's network, so "
                                    "its servers are reachable without publishing"));
      continue;
    }
    if (o.no_namespaces) {
      problems.add(sys::plain_error("--publish " + spec + ": needs the sandbox's own network namespace; it cannot be "
                                    "used with --no-namespaces"));
      continue;
    }
    if (net.mode == NetMode::proxy && port->port == kProxyPort)
      problems.add(sys::plain_error(fmt::format("--publish {}: port {} inside is the proxy's own", spec, kProxyPort)));
    bool twice = std::any_of(out.begin(), out.end(), [&](const PublishedPort& p) {
      return p.host_address == port->host_address && p.host_port == port->host_port;
    });
    if (twice) problems.add(sys::plain_error("--publish " + spec + ": " + port->host_endpoint() + " is published twice"));
    out.push_back(std::move(*port));
  }
  return out;
}

// Proxy-aware clients find the proxy through these; NO_PROXY keeps the sandbox's own loopback direct, so servers
// the agent starts inside, and the host-loopback forwards, are reached without the proxy.
std::vector<std::string> proxy_environment(const NetPolicy& proxy) {
  auto url = fmt::format("http://{}:{}", proxy.over_veth ? kVethProxyAddress : "127.0.0.1", kProxyPort);
  std::vector<std::string> env;
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"})
    env.push_back(std::string(name) + "=" + url);
  for (const char* name : {"NO_PROXY", "no_proxy"}) env.push_back(std::string(name) + "=localhost,127.0.0.1,::1");
  return env;
}

// `workspace`: the held workspace, or null without one; `user`: --user's ids, if given.
Identity resolve_identity(const CallerContext& c, const sys::HeldPath* workspace, const std::optional<UserIds>& user) {
  Identity ids;
  ids.run_by_root = c.uid == 0;
  if (ids.run_by_root && workspace == nullptr) {
    ids.host_uid = kUnprivilegedHostUid;  // nothing of the host's to own: root inside, nobody outside
    ids.host_gid = kUnprivilegedHostGid;
  } else if (ids.run_by_root) {
    // Root: the command's host identity is nobody; inside it sees the workspace owner, whose files the
    // idmapped workspace mount shows as its own.
    ids.inside_uid = workspace->st.st_uid;
    ids.inside_gid = workspace->st.st_gid;
    ids.host_uid = kUnprivilegedHostUid;
    ids.host_gid = kUnprivilegedHostGid;
  } else {
    ids.inside_uid = ids.host_uid = c.uid;
    ids.inside_gid = ids.host_gid = c.gid;
  }
  if (user) {
    ids.inside_uid = user->uid;
    ids.inside_gid = user->gid;
  }
  return ids;
}

Result<UserBind> parse_bind(const std::string& spec, bool writable, const CallerContext& c) {
  const char* flag = writable ? "--rw" : "--ro";
  auto colon = spec.find(':');
  std::string src = spec.substr(0, colon);
  std::string dest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (src.empty()) return sys::plain_error(std::string(flag) + " `" + spec + "`: empty source");
  auto held = hold_user_path(flag, absolute_from(c.cwd, src), c);
  if (!held) return held.error();
  if (writable)
    if (auto s = refuse_system_dir(flag, *held, c); !s) return s.error();
  if (dest.empty()) dest = held->path;
  if (dest.front() != '/') return sys::plain_error(std::string(flag) + " `" + spec + "`: destination must be absolute");
  dest = normalize_absolute(dest);
  if (dest == "/") return sys::plain_error(std::string(flag) + " `" + spec + "`: cannot replace the sandbox's root");
  UserBind b{held->path, dest, writable, !S_ISDIR(held->st.st_mode)};
  b.source_fd = held->fd;
  return b;
}

// A directory confine makes before the run when it is missing (a profile's state directory, or its private one),
// bound read-write at `dest`. An existing one is canonicalised like any bind; a missing one keeps its path.
Result<UserBind> created_dir_bind(const std::string& source, const std::string& dest, const CallerContext& c) {
  UserBind b{normalize_absolute(source), normalize_absolute(dest), true, false, true};
  if (b.source.empty() || b.dest.empty())
    return sys::plain_error("profile directory `" + source + "` must be an absolute path or start with `~/`");
  auto held = hold_user_path("profile directory", b.source, c);
  if (!held && held.error().err == ENOENT) return b;
  if (!held) return held.error();
  if (!S_ISDIR(held->st.st_mode))
    return sys::plain_error("profile directory `" + source + "` exists but is not a directory");
  b.source = held->path;
  b.source_fd = held->fd;
  return b;
}

// A directory bound from the command line is a project's, scanned for secrets like the workspace, unless it lies
// in a system directory: that is the system's, not a project's, and hiding its `*.pem` would break a bound CA
// store (`-v /etc/ssl/certs:/etc/ssl/certs:ro`). /srv is the exception: its sites are projects.
bool is_project_directory(const UserBind& b) {
  if (b.is_file) return false;
  for (const auto& d : system_dirs())
    if (!d.only_when_root_owned && is_within(b.source, std::string(d.path)) &&
        (d.except.empty() || !is_within(b.source, std::string(d.except))))
      return false;
  return true;
}

std::string environment_value(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env)
    if (e.starts_with(name + "=")) return e.substr(name.size() + 1);
  return {};
}

// Where a profile keeps its private directories: $XDG_CACHE_HOME/confine/private/PROFILE (else ~/.cache/...); a
// profile named by path is known by its file name.
std::string private_dir_base(const std::string& profile, const CallerContext& c) {
  std::string cache = c.env.xdg_cache_home.empty() ? c.home + "/.cache" : c.env.xdg_cache_home;
  std::string name = profile.substr(profile.rfind('/') + 1);
  if (name.ends_with(".toml")) name.resize(name.size() - 5);
  if (name.empty() || name == "." || name == "..") name = "_";  // a name that would not be a directory of its own
  return normalize_absolute(cache) + "/confine/private/" + name;
}

// A private directory: below its base, at dest's path below $HOME. A symlink there (planted where a sandbox could
// write, say) must not turn it into a bind of some other host directory.
Result<UserBind> private_dir_bind(const Options::PrivateDir& d, const CallerContext& c) {
  std::string home = normalize_absolute(c.home), dest = normalize_absolute(d.dest);
  if (home.empty() || home == "/" || dest == home || !is_within(dest, home))
    return sys::plain_error("profile `" + d.profile + "`: private directory `" + d.dest + "` is not below $HOME");
  std::string base = private_dir_base(d.profile, c);
  auto b = created_dir_bind(base + dest.substr(home.size()), dest, c);
  if (!b) return b;
  char real_base[PATH_MAX];
  bool base_exists = ::realpath(base.c_str(), real_base) != nullptr;
  if (base_exists && !is_within(b->source, real_base))
    return sys::plain_error("profile `" + d.profile + "`: private directory `" + b->source + "` leads out of `" + base +
                            "` (a symlink); remove it and confine makes a new one");
  b->private_dir = true;
  return b;
}

std::vector<UserBind> profile_dirs(const Options& o, const CallerContext& c, Problems& problems) {
  std::vector<UserBind> out;
  for (const auto& dir : o.state_dirs)
    if (auto b = problems.take(created_dir_bind(dir, dir, c))) out.push_back(*b);
  for (const auto& d : o.private_dirs)
    if (auto b = problems.take(private_dir_bind(d, c))) out.push_back(*b);
  return out;
}

// Every bind, in mount order: a profile's binds (if their sources exist), its directories, then the command line's.
void resolve_binds(const Options& o, const CallerContext& c, FsPolicy& fs, Problems& problems) {
  // A profile's binds are "if it exists": an agent's state directory may not have been made yet.
  for (const auto& [specs, writable] : {std::pair{&o.optional_ro_binds, false}, std::pair{&o.optional_rw_binds, true}}) {
    for (const auto& spec : *specs) {
      struct stat st {};
      if (::lstat(absolute_from(c.cwd, spec.substr(0, spec.find(':'))).c_str(), &st) != 0) continue;
      if (auto b = problems.take(parse_bind(spec, writable, c))) fs.binds.push_back(*b);
    }
  }
  auto dirs = profile_dirs(o, c, problems);
  // The sandbox writes the workspace: a directory confine creates and binds must not be placed where it can.
  for (const auto& b : dirs)
    if (!fs.workspace.empty() && is_within(b.source, fs.workspace))
      problems.add(sys::plain_error("profile directory `" + b.source + "` lies in the workspace, where the sandbox could "
                                    "replace it; set XDG_CACHE_HOME to a directory outside it"));
  fs.binds.insert(fs.binds.end(), dirs.begin(), dirs.end());
  for (const auto& [specs, writable] : {std::pair{&o.ro_binds, false}, std::pair{&o.rw_binds, true}}) {
    for (const auto& spec : *specs) {
      auto b = problems.take(parse_bind(spec, writable, c));
      if (!b) continue;
      b->scan_secrets = is_project_directory(*b);
      fs.binds.push_back(*b);
    }
  }
}

// --device and --gpus: each host device checked to be one, each CDI device read from the specs with what it brings
// (its device nodes, binds read-only unless the spec says rw, variables, returned for the environment). Its hooks
// are not run: said, with what that means for NVIDIA's specs.
std::vector<std::string> resolve_devices(const Options& o, const CallerContext& c, Policy& p, Problems& problems) {
  std::vector<DeviceRequest> requests;
  for (const auto& spec : o.devices)
    if (auto r = problems.take(parse_device_request(spec))) requests.push_back(std::move(*r));
  bool cdi = !o.gpus.empty() || std::any_of(requests.begin(), requests.end(), [](const DeviceRequest& r) { return !r.cdi_kind.empty(); });
  CdiSpecs specs;
  std::vector<std::string> dirs(std::begin(kCdiSpecDirs), std::end(kCdiSpecDirs));
  if (!c.env.cdi_spec_dirs.empty()) dirs = c.env.cdi_spec_dirs;
  if (!cdi && requests.empty()) return {};  // a run without devices pays for none of this
  if (cdi) specs = load_cdi_specs(dirs, c.uid, [&](const std::string& dir) { return sandbox_can_write(p, dir); });
  // Where the specs were looked for, and those not read: said with a device they lack.
  auto looked_in = fmt::format(" in {}{}", fmt::join(dirs, " or "),
                               specs.skipped.empty() ? "" : fmt::format(" (not read: {})", fmt::join(specs.skipped, "; ")));
  auto gpus = o.gpus.empty() ? std::nullopt : problems.take(parse_gpus(o.gpus));
  if (gpus) {
    auto kind = std::find_if(std::begin(kGpuCdiKinds), std::end(kGpuCdiKinds),
                             [&](const char* k) { return !cdi_device_names(specs.specs, k).empty(); });
    if (kind == std::end(kGpuCdiKinds))
      problems.add(sys::plain_error(fmt::format("--gpus {}: no CDI spec for {}{}; make one with `sudo nvidia-ctk cdi "
                                                "generate --output=/etc/cdi/nvidia.yaml` (NVIDIA), or `sudo amd-ctk cdi "
                                                "generate --output=/etc/cdi/amd.json` (AMD)",
                                                o.gpus, fmt::join(kGpuCdiKinds, " or "), looked_in)));
    else if (auto n = problems.take(gpu_cdi_names(*gpus, cdi_device_names(specs.specs, *kind))))
      for (auto& name : *n) requests.push_back({"", "", {}, *kind, std::move(name)});
  }
  std::vector<std::string> env;
  std::size_t hooks = 0;
  auto add_node = [&](const std::string& host, const std::string& dest, DeviceAccess access, std::string asked_as) {
    auto source = problems.take(host_device_node(host));
    if (!source) return;
    // In the sandbox's /dev, where nothing of its own mounts covers it, and at none of confine's own names there:
    // Landlock's rules are taken by path, and the rights of confine's /dev/null would be the device's too. Without
    // namespaces the host's node is used where it is (and granted there, at its own path only).
    auto inside = normalize_absolute(dest);
    if (!o.no_namespaces && (!inside.starts_with("/dev/") || in_confines_dev(inside))) {
      problems.add(sys::plain_error(fmt::format("{}: DEST `{}` must be below /dev, and not one of the sandbox's own "
                                                "/dev/null, tty, pts/, shm/, ... (name another, such as /dev/{})",
                                                asked_as, dest, host.substr(host.rfind('/') + 1))));
      return;
    }
    if (access.mknod) p.fs.device_notes.push_back(asked_as + ": m (mknod) grants nothing: nothing inside may create device nodes");
    p.fs.devices.push_back({*source, inside, access, std::move(asked_as)});
  };
  for (const auto& r : requests) {
    if (r.cdi_kind.empty()) {
      add_node(absolute_from(c.cwd, r.path), r.dest, r.access, "--device " + r.path);
      continue;
    }
    auto edits = cdi_edits(specs.specs, r.cdi_kind, r.cdi_name);
    if (!edits) {
      problems.add(sys::plain_error(fmt::format("--device {}={}: {}{}", r.cdi_kind, r.cdi_name, edits.error().message(), looked_in)));
      continue;
    }
    auto asked_as = r.cdi_kind + "=" + r.cdi_name;
    for (const auto& n : edits->nodes) add_node(n.host_path, n.path, n.access, asked_as);
    for (const auto& m : edits->mounts)
      if (auto b = problems.take(parse_bind(m.host_path + ":" + m.container_path, m.writable, c))) p.fs.binds.push_back(*b);
    env.insert(env.end(), edits->env.begin(), edits->env.end());
    hooks += edits->hooks;
  }
  if (hooks > 0)
    p.fs.device_notes.push_back(fmt::format(
        "the CDI specs name {} hook{} (programs the container engine runs as the container starts); confine runs none: "
        "for NVIDIA's, which update the library cache, put the spec's libraries on LD_LIBRARY_PATH or run ldconfig "
        "inside", hooks, hooks == 1 ? "" : "s"));
  return env;
}

// A profile's private copies live in the sandbox's own home (a tmpfs): never below a host directory bound in,
// where writing the copy would change the host's file.
std::vector<std::string> resolve_copies(const Options& o, const FsPolicy& fs, Problems& problems) {
  std::vector<std::string> out;
  for (const auto& spec : o.private_copies) {
    std::string path = normalize_absolute(spec);
    bool in_home = !fs.home.empty() && path != fs.home && is_within(path, fs.home);
    bool in_bind = std::any_of(fs.binds.begin(), fs.binds.end(), [&](const UserBind& b) { return is_within(path, b.dest); }) ||
                   (!fs.workspace_inside.empty() && is_within(path, fs.workspace_inside));
    if (!in_home || in_bind)
      problems.add(sys::plain_error("profile copy `" + spec + "` must be a file below $HOME, outside every directory "
                                    "bound from the host (the workspace, --ro, --rw, a profile's directories)"));
    else if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

// --tmpfs DEST[:OPTIONS], as in docker: OPTIONS may set size= (bytes, or with k/m/g) and mode= (octal); rw,
// nosuid and nodev are what every tmpfs here is anyway. Anything else is refused, never dropped.
Result<TmpfsMount> parse_tmpfs(const std::string& spec) {
  auto colon = spec.find(':');
  TmpfsMount t{normalize_absolute(spec.substr(0, colon)), "mode=0755"};
  if (t.dest.empty()) return sys::plain_error("--tmpfs `" + spec + "`: must be an absolute path");
  if (colon == std::string::npos) return t;
  std::string_view rest = std::string_view(spec).substr(colon + 1);
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto opt = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    auto digits_then = [](std::string_view v, std::string_view suffixes) {
      auto end = v.find_first_not_of("0123456789");
      return end != 0 && (end == std::string_view::npos || (end + 1 == v.size() && suffixes.find(v[end]) != std::string_view::npos));
    };
    if (opt.starts_with("size=") && digits_then(opt.substr(5), "kKmMgG")) {
      t.options += "," + std::string(opt);
    } else if (opt.starts_with("mode=") && opt.size() > 5 && opt.size() <= 9 &&
               opt.substr(5).find_first_not_of("01234567") == std::string_view::npos) {
      t.options.replace(0, t.options.find(',') == std::string::npos ? t.options.size() : t.options.find(','), opt);
    } else if (opt != "rw" && opt != "nosuid" && opt != "nodev") {
      return sys::plain_error("--tmpfs `" + spec + "`: option `" + std::string(opt) +
                              "` is not supported (size=N[k|m|g], mode=OCTAL, rw, nosuid, nodev)");
    }
  }
  return t;
}

// (tmpfs size, /dev/shm size): given, or the defaults; never more than --memory, which bounds them anyway (tmpfs
// pages are charged to the sandbox's cgroup) but only where a cgroup can be had.
Result<std::pair<std::uint64_t, std::uint64_t>> resolve_tmpfs_sizes(const Options& o, const ResourceLimits& limits) {
  std::pair<std::uint64_t, std::uint64_t> sizes{kDefaultTmpfsSize, kDefaultShmSize};
  for (auto [flag, text, size] : {std::tuple{"--tmpfs-size", &o.tmpfs_size, &sizes.first},
                                  std::tuple{"--shm-size", &o.shm_size, &sizes.second}}) {
    if (text->empty()) continue;
    auto bytes = parse_size(flag, *text);
    if (!bytes) return bytes.error();
    if (*bytes < 4096) return sys::plain_error(fmt::format("{} `{}`: at least 4k", flag, *text));
    *size = *bytes;
  }
  if (limits.memory) {
    sizes.first = std::min(sizes.first, *limits.memory);
    sizes.second = std::min(sizes.second, *limits.memory);
  }
  return sizes;
}

Result<std::string> resolve_mask(const std::string& spec, const std::string& workspace) {
  std::string path = absolute_from(workspace, spec);
  if (spec.front() != '/' && !is_within(path, workspace))
    return sys::plain_error("--mask `" + spec + "`: a relative path must stay inside the workspace");
  return path;
}

// A directory fd is a way out of every mount the sandbox has: openat(fd, "..") climbs to the host's `/`. An
// O_PATH fd can be such a directory, or reopened through /proc/self/fd.
sys::Status refuse_directory_fd(int fd) {
  struct stat st {};
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fstat(fd, &st) != 0) return sys::errno_error("--preserve-fd " + std::to_string(fd));
  const char* what = S_ISDIR(st.st_mode) ? "a directory" : (flags & O_PATH) != 0 ? "an O_PATH descriptor" : nullptr;
  if (what == nullptr) return sys::ok_status();
  return sys::plain_error(fmt::format("--preserve-fd {}: {}, through which the sandbox could reach the host's whole "
                                      "filesystem; bind the directory with --ro or --rw instead", fd, what));
}

sys::Status check_preserved_fd(int fd) {
  if (fd <= 2) return sys::plain_error("--preserve-fd " + std::to_string(fd) + ": stdin/stdout/stderr are always kept");
  if (::fcntl(fd, F_GETFD) < 0) return sys::errno_error("--preserve-fd " + std::to_string(fd));
  return refuse_directory_fd(fd);
}

std::vector<int> resolve_preserved_fds(std::vector<int> fds, Problems& problems) {
  std::sort(fds.begin(), fds.end());
  fds.erase(std::unique(fds.begin(), fds.end()), fds.end());
  for (int fd : fds) problems.check(check_preserved_fd(fd));
  return fds;
}

std::vector<Layer> parse_required_layers(const std::vector<std::string>& specs, Problems& problems) {
  std::vector<Layer> out;
  for (const auto& spec : specs) {
    std::size_t start = 0;
    while (start <= spec.size()) {
      auto comma = spec.find(',', start);
      auto name = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      Layer l;
      if (parse_layer(name, l)) out.push_back(l);
      else problems.add(sys::plain_error("--require `" + name + "`: expected namespaces, landlock or seccomp"));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

// --seccomp FILE: confine's own format, or an OCI (docker) profile.
Result<SeccompPolicy> load_seccomp_file(const std::string& file, const CallerContext& c) {
  auto source = absolute_from(c.cwd, file);
  auto text = sys::read_user_file("--seccomp", source, sys::kMiB);
  if (!text) return text.error();
  struct utsname kernel {};
  ::uname(&kernel);
  return looks_like_oci_seccomp(*text) ? parse_oci_seccomp(*text, source, kernel.release)
                                       : parse_seccomp_policy(*text, source);
}

}  // namespace

std::string checkpoints_data_home(const std::string& home, const CallerEnvironment& env) {
  if (!env.xdg_data_home.empty()) return env.xdg_data_home;
  return home.empty() ? std::string() : home + "/.local/share";
}

std::string checkpoint_store(const std::string& workspace, const std::string& data_home) {
  return normalize_absolute(fmt::format("{}/confine/checkpoints/{:016x}", data_home, std::hash<std::string>{}(workspace)));
}

namespace {

// --checkpoint, once the binds are known: the store is confine's own and out of the sandbox's reach. One it could
// write would let it plant the files a restore writes into the workspace; one in the workspace, even read-only,
// would be saved into itself, and removed by a restore.
CheckpointPolicy resolve_checkpoint(const Options& o, const CallerContext& c, const Policy& p, Problems& problems) {
  CheckpointPolicy out{true, o.checkpoint_exclude, checkpoints_data_home(c.home, c.env)};
  if (out.data_home.empty()) return out;  // said when the save is tried
  auto store = checkpoint_store(p.fs.workspace, out.data_home);
  bool in_workspace = is_within(store, p.fs.workspace);
  if (in_workspace || sandbox_can_write(p, store))
    problems.add(sys::plain_error(fmt::format("--checkpoint: the store `{}` would be {} the sandbox; set XDG_DATA_HOME to "
                                              "a directory outside the workspace and the --rw binds", store,
                                              in_workspace ? "in the workspace of" : "writable inside")));
  return out;
}

ProtectionPolicy resolve_protection(const Options& o, const CallerContext& c, Problems& problems) {
  ProtectionPolicy p;
  p.request.best_effort = o.best_effort;
  p.request.no_namespaces = o.no_namespaces;
  p.request.protect_git = !o.allow_git_config;
  p.request.required = parse_required_layers(o.require, problems);
  p.allow_nested = o.allow_nested;
  p.allow_nested_profile = o.allow_nested_profile;
  p.seccomp_log = o.seccomp_log;
  if (!o.seccomp_file.empty()) {
    p.custom_seccomp = problems.take(load_seccomp_file(o.seccomp_file, c));
    p.request.custom_seccomp = p.custom_seccomp.has_value();
  }
  p.request.run_by_root = c.uid == 0;
  p.request.allow_nested = o.allow_nested;
  // What the seccomp promises are judged by: the rules compiled, the floor's beside a --seccomp policy.
  p.request.seccomp_groups = p.custom_seccomp ? seccomp_rule_groups(*p.custom_seccomp, o.allow_nested)
                                              : builtin_seccomp_rule_groups(o.allow_nested);
  if (p.custom_seccomp)
    for (auto& g : seccomp_rule_groups(seccomp_floor_policy(), o.allow_nested)) p.request.seccomp_groups.push_back(std::move(g));

  p.request.switch_user = o.user.has_value();
  if (o.no_namespaces && (!o.ro_binds.empty() || !o.rw_binds.empty() || !o.tmpfs.empty() || !o.masks.empty()))
    problems.add(sys::plain_error("--ro, --rw, --tmpfs and --mask need a mount namespace; they cannot be used with "
                                  "--no-namespaces"));
  return p;
}

Result<std::optional<int>> resolve_status_fd(const std::optional<int>& fd) {
  if (!fd) return std::optional<int>{};
  if (*fd <= 2 || ::fcntl(*fd, F_GETFD) < 0)
    return sys::plain_error("--status-fd " + std::to_string(*fd) + ": not an open file descriptor above 2");
  return fd;
}

// `confine run DIR`: DIR must be a root filesystem (what `docker export` or `umoci unpack` leave), not the host's.
Result<std::string> resolve_rootfs(const std::string& spec, const CallerContext& c) {
  auto held = hold_user_path("image directory", absolute_from(c.cwd, spec), c);
  if (!held) return held.error();
  if (!S_ISDIR(held->st.st_mode)) return sys::plain_error("image `" + spec + "` is not a directory");
  const std::string* dir = &held->path;
  if (*dir == "/") return sys::plain_error("image `/`: to run on the host's own (read-only) filesystem, name the image `host`");
  if (!c.home.empty() && is_within(normalize_absolute(c.home), *dir))
    return sys::plain_error("image `" + *dir + "` contains your home directory (" + c.home + ")");
  if (::access((*dir + "/bin").c_str(), F_OK) != 0 && ::access((*dir + "/usr/bin").c_str(), F_OK) != 0)
    return sys::plain_error("image `" + *dir + "` does not look like a root filesystem (no bin/ or usr/bin/)");
  return held->path;
}

// Docker's HOME: the user's entry in the image's /etc/passwd, else "/" (an image may have no passwd at all).
Result<std::string> image_home(const std::string& rootfs, uid_t uid) {
  auto text = sys::read_user_file("the image's passwd", rootfs + "/etc/passwd", sys::kMiB);
  if (!text && text.error().err == ENOENT) return std::string("/");
  if (!text) return text.error();
  std::string_view rest = *text;
  while (!rest.empty()) {
    auto eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
    auto fields = split_fields(line, ':');  // name:password:uid:gid:gecos:home:shell
    if (fields.size() >= 6 && parse_id(fields[2]) == uid && fields[5].starts_with("/")) return std::string(fields[5]);
  }
  return std::string("/");
}

// Docker's environment: a fixed PATH, HOSTNAME, HOME and TERM (on a terminal); `-e NAME` without a value takes
// the host's (o.pass_env), and nothing else of the host's comes in.
Result<std::vector<std::string>> docker_environment(const Options& o, const Policy& p, const CallerContext& c,
                                                    std::vector<std::string>& inherited) {
  std::vector<std::string> set = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                  "HOSTNAME=" + p.hostname};
  std::vector<std::string> keep;
  for (const auto& e : c.environ) {
    auto name = e.substr(0, e.find('='));
    if (name == "TERM" && ::isatty(STDIN_FILENO) != 0) set.push_back(e);
    if (name == "HOME" && p.fs.rootfs.empty()) set.push_back(e);
    if (std::find(o.pass_env.begin(), o.pass_env.end(), name) != o.pass_env.end()) keep.push_back(e);
  }
  if (!p.fs.rootfs.empty()) {
    auto home = image_home(p.fs.rootfs, p.ids.inside_uid);
    if (!home) return home.error();
    set.push_back("HOME=" + *home);
  }
  inherited = std::move(keep);
  return set;
}

// A secret read from another variable (env:VAR) must not come in under that name: VAR is dropped whatever the
// scrub or --pass-env said.
void drop_secret_sources(const std::vector<SecretSpec>& secrets, ProcPolicy& proc) {
  for (const auto& s : secrets) {
    if (s.source.kind != SecretSource::Kind::environment || s.source.where == s.name) continue;
    auto prefix = s.source.where + "=";
    auto before = proc.env.size();
    std::erase_if(proc.env, [&](const std::string& e) { return e.starts_with(prefix); });
    if (proc.env.size() != before) proc.dropped_env.push_back(s.source.where);
  }
}

// The command's environment: the caller's, scrubbed (docker's instead for `confine run`), with the proxy's
// variables, confine's marker and --env set.
void resolve_environment(const Options& o, const CallerContext& c, Policy& p, Problems& problems) {
  auto inherited = c.environ;
  std::vector<std::string> set_env;
  if (o.docker_run) {
    auto docker_env = problems.take(docker_environment(o, p, c, inherited));
    if (!docker_env) return;
    set_env = std::move(*docker_env);
  }
  if (p.net == NetMode::proxy) for (auto& e : proxy_environment(p.proxy)) set_env.push_back(std::move(e));
  // The marker agents can test to know they run inside confine (the profile's name comes with the profile).
  set_env.push_back("CONFINE=1");
  set_env.insert(set_env.end(), o.set_env.begin(), o.set_env.end());
  // After --env: a credential's base URL names its broker, which goes where the user's own value pointed.
  set_env.insert(set_env.end(), p.proxy.credential_env.begin(), p.proxy.credential_env.end());
  // Last, so no --env or profile variable can put anything but the placeholder in a secret's variable.
  for (const auto& s : p.proxy.secrets) set_env.push_back(s.name + "=" + s.placeholder);
  auto env = scrub_environment(inherited, o.pass_env, set_env);
  p.proc.env = std::move(env.kept);
  p.proc.dropped_env = std::move(env.dropped_names);
  drop_secret_sources(p.proxy.secrets, p.proc);
}

// What only a mount namespace can give; fallback mode must refuse rather than run without it.
std::string mount_only_features(const Policy& p) {
  std::vector<std::string> what;
  if (!p.fs.rootfs.empty()) what.push_back("the image directory");
  if (p.fs.workspace_inside != p.fs.workspace) what.push_back("a workspace at another path");
  bool moved = std::any_of(p.fs.binds.begin(), p.fs.binds.end(), [](const UserBind& b) { return b.dest != b.source; });
  if (moved) what.push_back("binds at another path");
  if (!p.fs.tmpfs.empty()) what.push_back("--tmpfs");
  if (!p.fs.copies.empty()) what.push_back("a profile's private copies");
  bool devices_moved = std::any_of(p.fs.devices.begin(), p.fs.devices.end(), [](const HostDevice& d) { return d.dest != d.source; });
  if (devices_moved) what.push_back("devices at another path");
  std::string out;
  for (const auto& w : what) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

std::string normalize_absolute(const std::string& path) {
  if (path.empty() || path.front() != '/') return {};
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    i = j + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

std::string absolute_from(const std::string& base, const std::string& path) {
  if (!path.empty() && path.front() == '/') return normalize_absolute(path);
  return normalize_absolute(base + "/" + path);
}

std::vector<std::string_view> split_fields(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    auto end = text.find(separator, start);
    fields.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

std::string system_dir_clash(const std::string& path, bool owned_by_root, const std::vector<SystemDirPlace>& places) {
  for (const auto& place : places) {
    for (const auto& at : {place.path, place.real}) {
      auto named = at == place.path ? fmt::format("`{}`", at) : fmt::format("`{}` (where `{}` leads)", at, place.path);
      bool inside = is_within(path, at);
      bool excepted = (!place.except.empty() && is_within(path, place.except)) ||
                      (place.only_when_root_owned && !owned_by_root);
      if (inside && excepted) continue;
      if (path == at) return "is the system directory " + named;
      if (inside) return "lies inside the system directory " + named;
      if (is_within(at, path)) return "contains the system directory " + named;
    }
  }
  return {};
}

bool sandbox_can_write(const Policy& p, const std::string& path) {
  if (!p.fs.workspace.empty() && !p.fs.workspace_readonly && is_within(path, p.fs.workspace)) return true;
  return std::any_of(p.fs.binds.begin(), p.fs.binds.end(),
                     [&](const UserBind& b) { return b.writable && is_within(path, b.source); });
}

bool is_within(const std::string& inner, const std::string& outer) {
  if (outer == "/") return true;
  return inner == outer || (inner.starts_with(outer) && inner[outer.size()] == '/');
}

CallerEnvironment caller_environment(const std::vector<std::string>& environ) {
  auto absolute = [&](const char* name) {
    auto value = environment_value(environ, name);
    return value.starts_with('/') ? value : std::string();
  };
  CallerEnvironment env;
  env.xdg_cache_home = absolute("XDG_CACHE_HOME");
  env.xdg_config_home = absolute("XDG_CONFIG_HOME");
  env.xdg_data_home = absolute("XDG_DATA_HOME");
  env.xdg_runtime_dir = absolute("XDG_RUNTIME_DIR");
  env.session_bus = environment_value(environ, "DBUS_SESSION_BUS_ADDRESS");
  env.container_mark = environment_value(environ, "container");
  env.in_kubernetes = !environment_value(environ, "KUBERNETES_SERVICE_HOST").empty();
  auto cdi = environment_value(environ, "CONFINE_CDI_SPEC_DIRS");
  for (std::size_t start = 0; !cdi.empty() && start <= cdi.size();) {
    auto colon = std::min(cdi.find(':', start), cdi.size());
    if (auto dir = cdi.substr(start, colon - start); dir.starts_with('/')) env.cdi_spec_dirs.push_back(dir);
    start = colon + 1;
  }
  return env;
}

Result<Policy> resolve(const Options& o, const CallerContext& c) {
  Problems problems;
  Policy p;
  p.caller_env = c.env;
  p.test_features = parse_feature_override(c.test_features);
  if (o.command.empty()) problems.add(sys::plain_error("no command given (usage: confine [OPTIONS] -- CMD [ARGS...])"));
  std::optional<sys::HeldPath> workspace;
  if (!o.no_workspace) workspace = problems.take(resolve_workspace(o, c));
  if (workspace) {
    p.fs.workspace = workspace->path;
    p.fs.workspace_fd = workspace->fd;
  }
  // What is judged against the workspace, the image or --user waits for them: a failure is reported once, not
  // again through an empty workspace or a default identity.
  bool workspace_known = o.no_workspace || workspace.has_value();
  bool rootfs_known = o.rootfs.empty();
  p.fs.workspace_inside = o.workspace_dest.empty() ? p.fs.workspace : normalize_absolute(o.workspace_dest);
  if (!o.rootfs.empty()) {
    auto rootfs = problems.take(resolve_rootfs(o.rootfs, c));
    rootfs_known = rootfs.has_value();
    p.fs.rootfs = rootfs.value_or("");
    p.fs.rootfs_writable = !o.rootfs_readonly;
  }
  if (!o.hostname.empty()) p.hostname = o.hostname;
  // A home of "/" (some service accounts) gets no tmpfs: it would cover the whole new root. An image brings its
  // own homes: nothing of the host's is in them.
  p.fs.home = o.rootfs.empty() ? normalize_absolute(c.home) : "";
  if (p.fs.home == "/") p.fs.home.clear();
  p.fs.protect_git = !o.allow_git_config;
  p.fs.workspace_readonly = o.workspace_readonly;
  if (!o.profile.empty()) p.profile_name = o.profile;

  p.net = o.net.mode;
  p.proxy = resolve_proxy(o, o.net, c, p.fs.copy_edits, problems);
  p.published = resolve_published(o, o.net, problems);
  if (!c.test_log_caps.empty()) {
    // A test build's smaller caps for --log, the sandbox's denial log and --net-log, so a test meets them quickly.
    auto log_caps = parse_log_caps(c.test_log_caps, kRefusalLogCaps);
    auto net_log_caps = parse_log_caps(c.test_log_caps, kNetLogCaps);
    if (!log_caps || !net_log_caps)
      problems.add(sys::plain_error("CONFINE_TEST_LOG_CAPS: expected lines=N,bytes=N, got `" + c.test_log_caps + "`"));
    else p.report.log_caps = *log_caps, p.proxy.log_caps = *net_log_caps;
  }

  std::optional<UserIds> user;
  if (o.user) user = problems.take(parse_user_spec(*o.user, "--user"));
  bool user_known = !o.user || user.has_value();
  if (user && o.no_namespaces && c.uid != 0)
    problems.add(sys::plain_error("--user with --no-namespaces needs root: without a user namespace only root can change uid"));
  if (workspace_known) p.ids = resolve_identity(c, workspace ? &*workspace : nullptr, user);

  resolve_binds(o, c, p.fs, problems);
  auto device_env = resolve_devices(o, c, p, problems);
  p.fs.copies = resolve_copies(o, p.fs, problems);
  for (const auto& t : o.tmpfs)
    if (auto tmpfs = problems.take(parse_tmpfs(t))) p.fs.tmpfs.push_back(*tmpfs);
  for (const auto& m : o.masks) {
    if (m.empty()) problems.add(sys::plain_error("--mask: empty path"));
    else if (workspace_known)
      if (auto path = problems.take(resolve_mask(m, p.fs.workspace))) p.fs.masks.push_back(*path);
  }
  auto names = apply_secret_name_changes(default_secret_names(), {o.secret_masks, o.scan_skip, o.scan_walk});
  if (names) p.fs.secret_names = std::move(*names);
  else problems.add(sys::plain_error("--scan-skip/--scan-walk or the profile's [secrets]: " + names.error().message()));
  for (const auto& e : o.set_env)
    if (e.find('=') == std::string::npos || e.front() == '=')
      problems.add(sys::plain_error("--env `" + e + "`: expected NAME=VALUE"));

  p.proc.preserve_fds = resolve_preserved_fds(o.preserve_fds, problems);

  p.protection = resolve_protection(o, c, problems);
  p.protection.request.net = o.net.mode;
  if (auto status_fd = problems.take(resolve_status_fd(o.status_fd))) p.report.status_fd = *status_fd;
  p.report.report_file = o.report_file.empty() ? "" : absolute_from(c.cwd, o.report_file);
  p.report.log_file = o.log_file.empty() ? "" : absolute_from(c.cwd, o.log_file);
  if (o.checkpoint) p.checkpoint = resolve_checkpoint(o, c, p, problems);

  if (auto limits = problems.take(parse_limits(o.memory, o.memory_swap, o.pids, o.cpus))) p.limits = *limits;
  // The sizes are checked with or without valid limits: --memory only caps them.
  if (auto sizes = problems.take(resolve_tmpfs_sizes(o, p.limits))) std::tie(p.fs.tmpfs_size, p.fs.shm_size) = *sizes;
  p.protection.request.limits = p.limits;
  p.protection.request.default_process_bound = !p.limits.pids;
  p.protection.request.workspace_readonly = o.workspace_readonly;
  p.protection.request.needs_mounts = mount_only_features(p);
  p.protection.request.publishes = !p.published.empty();
  p.protection.request.inside_root = p.ids.inside_uid == 0;
  p.protection.request.profile_own_copies = !p.fs.copies.empty() || !o.private_dirs.empty();
  p.protection.request.read_only_devices =
      std::any_of(p.fs.devices.begin(), p.fs.devices.end(), [](const HostDevice& d) { return !d.access.write; });

  // `confine run`'s environment reads the image's passwd for the identity's home.
  if (!o.docker_run || (rootfs_known && workspace_known && user_known)) resolve_environment(o, c, p, problems);
  for (const auto& e : device_env) set_variable(p.proc.env, e);  // a CDI device's, over the caller's
  p.proc.argv = o.command;
  p.proc.workdir = o.workdir.empty() ? (p.fs.workspace.empty() ? "/" : p.fs.workspace_inside) : normalize_absolute(o.workdir);
  if (p.proc.workdir.empty()) problems.add(sys::plain_error("--workdir `" + o.workdir + "`: must be an absolute path"));
  return std::move(problems).or_policy(std::move(p));
}

}  // namespace confine
