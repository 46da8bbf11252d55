#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/limits.h"
#include "core/resolve.h"
#include "temp_dir.h"

using namespace confine;

namespace {

struct TempTree : testing::TempDir {
  TempTree() {
    mkdir("ws");
    mkdir("home");
  }
};

CallerContext caller(const TempTree& t) {
  CallerContext c;
  c.uid = 1000;
  c.gid = 1000;
  c.cwd = t.root + "/ws";
  c.home = t.root + "/home";
  c.environ = {"PATH=/usr/bin", "GH_TOKEN=x"};
  return c;
}

Options with_command() {
  Options o;
  o.command = {"true"};
  return o;
}

}  // namespace

TEST_CASE("paths are normalised lexically") {
  CHECK(normalize_absolute("/a/./b/../c/") == "/a/c");
  CHECK(normalize_absolute("/../..") == "/");
  CHECK(normalize_absolute("relative").empty());
  CHECK(absolute_from("/w", "x/../y") == "/w/y");
  CHECK(absolute_from("/w", "/abs") == "/abs");
  CHECK(is_within("/a/b", "/a"));
  CHECK(is_within("/a", "/a"));
  CHECK_FALSE(is_within("/ab", "/a"));
  CHECK(is_within("/anything", "/"));
}

TEST_CASE("the default policy: workspace is the cwd, credentials scrubbed, net none") {
  TempTree t;
  auto p = resolve(with_command(), caller(t));
  REQUIRE(p.ok());
  CHECK(p->fs.workspace == t.root + "/ws");
  CHECK(p->proc.workdir == t.root + "/ws");
  CHECK(p->net == NetMode::none);
  CHECK(p->proc.env == std::vector<std::string>{"PATH=/usr/bin", "CONFINE=1"});  // the marker agents can test
  CHECK(p->ids.inside_uid == 1000);
  CHECK(p->ids.host_uid == 1000);
  CHECK_FALSE(p->ids.run_by_root);
  CHECK(p->fs.protect_git);
}

TEST_CASE("the log files' caps: the real ones, or a test build's CONFINE_TEST_LOG_CAPS for both files") {
  TempTree t;
  auto o = with_command();
  o.net = NetChoice{NetMode::proxy};
  auto standard = resolve(o, caller(t));
  REQUIRE(standard.ok());
  CHECK(standard->report.log_caps.lines == kRefusalLogCaps.lines);
  CHECK(standard->proxy.log_caps.bytes == kNetLogCaps.bytes);
  auto c = caller(t);
  c.test_log_caps = "lines=7";
  auto lowered = resolve(o, c);
  REQUIRE(lowered.ok());
  CHECK(lowered->report.log_caps.lines == 7);
  CHECK(lowered->report.log_caps.bytes == kRefusalLogCaps.bytes);
  CHECK(lowered->proxy.log_caps.lines == 7);
  c.test_log_caps = "size=1";
  auto bad = resolve(o, c);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "CONFINE_TEST_LOG_CAPS: expected lines=N,bytes=N, got `size=1`");
}

TEST_CASE("run by root: the host identity is nobody, inside the workspace owner") {
  TempTree t;
  auto c = caller(t);
  c.uid = 0;
  c.gid = 0;
  auto p = resolve(with_command(), c);
  REQUIRE(p.ok());
  CHECK(p->ids.run_by_root);
  CHECK(p->ids.host_uid == kUnprivilegedHostUid);
  CHECK(p->ids.host_gid == kUnprivilegedHostGid);
  struct stat st {};
  REQUIRE(::stat((t.root + "/ws").c_str(), &st) == 0);
  CHECK(p->ids.inside_uid == st.st_uid);
}

TEST_CASE("bad input is refused with a message naming the problem") {
  TempTree t;
  auto c = caller(t);
  auto refused = [&](Options o, const std::string& needle) {
    if (o.command.empty()) o.command = {"true"};
    auto p = resolve(o, c);
    REQUIRE_FALSE(p.ok());
    INFO(p.error().message());
    CHECK(p.error().message().find(needle) != std::string::npos);
  };
  Options o;
  o.workspace = t.root + "/missing";
  refused(o, "missing");
  o = {};
  o.workspace = "/";
  refused(o, "whole host");
  o = {};
  o.workspace = t.root;  // contains $HOME
  refused(o, "home directory");
  o = {};
  o.masks = {"../outside"};
  refused(o, "inside the workspace");
  o = {};
  o.user = "alice";
  refused(o, "numeric");
  o = {};
  o.user = "4294967295";  // (uid_t)-1: setresuid would leave the uid unchanged
  refused(o, "4294967295");
  o = {};
  o.user = "0:4294967295";
  refused(o, "4294967295");
  o = {};
  o.set_env = {"NOEQUALS"};
  refused(o, "NAME=VALUE");
  o = {};
  o.ro_binds = {t.root + "/nope"};
  refused(o, "--ro");
  o = {};
  o.rw_binds = {t.root + "/ws:relative/dest"};
  refused(o, "absolute");
  o = {};
  o.preserve_fds = {2};
  refused(o, "always kept");
  // A directory fd reaches the host's `/` through `..`; an O_PATH fd may be one, or be reopened.
  int dir_fd = ::open(t.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int path_fd = ::open("/etc/hostname", O_PATH | O_CLOEXEC);
  int file_fd = ::open("/etc/hostname", O_RDONLY | O_CLOEXEC);
  REQUIRE((dir_fd > 2 && path_fd > 2 && file_fd > 2));
  o = {};
  o.preserve_fds = {dir_fd};
  refused(o, "--preserve-fd " + std::to_string(dir_fd) + ": a directory");
  o = {};
  o.preserve_fds = {path_fd};
  refused(o, "--preserve-fd " + std::to_string(path_fd) + ": an O_PATH descriptor");
  Options file = with_command();
  file.preserve_fds = {file_fd};
  CHECK(resolve(file, c).ok());
  for (int fd : {dir_fd, path_fd, file_fd}) ::close(fd);
  Options empty;
  auto p = resolve(empty, c);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().message().find("no command") != std::string::npos);
}

TEST_CASE("every independent problem is reported at once, one a line below their count") {
  TempTree t;
  Options o = with_command();
  o.ro_binds = {t.root + "/nope"};
  o.memory = "lots";
  o.masks = {""};
  o.set_env = {"NOEQUALS"};
  o.workdir = "relative";
  auto p = resolve(o, caller(t));
  REQUIRE_FALSE(p.ok());
  auto expected = parse_limits("lots", "", "", "");
  REQUIRE_FALSE(expected.ok());
  CHECK(p.error().message() == "5 problems:\n"
                               "--ro `" + t.root + "/nope`: No such file or directory\n"
                               "--mask: empty path\n"
                               "--env `NOEQUALS`: expected NAME=VALUE\n" +
                                   expected.error().message() + "\n"
                               "--workdir `relative`: must be an absolute path");
}

TEST_CASE("one problem keeps its own message; what depends on a failed input is not judged") {
  TempTree t;
  auto c = caller(t);
  Options o = with_command();
  o.workdir = "relative";
  auto alone = resolve(o, c);
  REQUIRE_FALSE(alone.ok());
  CHECK(alone.error().message() == "--workdir `relative`: must be an absolute path");
  // Whether --user can be applied without namespaces is asked of a valid --user only.
  Options user = with_command();
  user.user = "4294967295";
  user.no_namespaces = true;
  auto bad_user = resolve(user, c);
  REQUIRE_FALSE(bad_user.ok());
  CHECK(bad_user.error().message().find("--user `4294967295`") == 0);
  CHECK(bad_user.error().message().find('\n') == std::string::npos);
  user.user = "0:0";
  auto unprivileged = resolve(user, c);
  REQUIRE_FALSE(unprivileged.ok());
  CHECK(unprivileged.error().message() ==
        "--user with --no-namespaces needs root: without a user namespace only root can change uid");
}

TEST_CASE("a project directory bound from the command line is scanned for secrets; a file or a system one is not") {
  TempTree t;
  ::close(::creat((t.root + "/file").c_str(), 0644));
  Options o = with_command();
  o.ro_binds = {"../home:/h", t.root + "/file:/f", "/etc/ssl:/ssl"};
  o.rw_binds = {t.root + ":/proj"};
  o.optional_ro_binds = {t.root + "/home:/profile-state"};
  auto p = resolve(o, caller(t));
  REQUIRE(p.ok());
  std::vector<std::pair<std::string, bool>> scanned;
  for (const auto& b : p->fs.binds) scanned.emplace_back(b.dest, b.scan_secrets);
  CHECK(scanned == std::vector<std::pair<std::string, bool>>{
                       {"/profile-state", false}, {"/h", true}, {"/f", false}, {"/ssl", false}, {"/proj", true}});
}

TEST_CASE("binds, masks and --user resolve to absolute sandbox paths") {
  TempTree t;
  Options o = with_command();
  o.ro_binds = {"../home:/opt/h"};
  o.masks = {"sub/../cfg.json", "/etc/hostname"};
  o.user = "0:0";
  auto p = resolve(o, caller(t));
  REQUIRE(p.ok());
  REQUIRE(p->fs.binds.size() == 1);
  CHECK(p->fs.binds[0].source == t.root + "/home");
  CHECK(p->fs.binds[0].dest == "/opt/h");
  CHECK_FALSE(p->fs.binds[0].writable);
  CHECK(p->fs.masks == std::vector<std::string>{t.root + "/ws/cfg.json", "/etc/hostname"});
  CHECK(p->ids.inside_uid == 0);
  CHECK(p->ids.host_uid == 1000);
}

TEST_CASE("as root, a system directory is never the workspace nor a --rw bind") {
  std::vector<SystemDirPlace> places = {
      {"/etc", "/etc", false, ""},
      {"/usr", "/usr", false, ""},
      {"/lib", "/usr/lib", false, ""},         // merged /usr: /lib leads to /usr/lib
      {"/opt", "/data/opt", false, ""},        // a relocated /opt
      {"/var", "/var", false, "/var/tmp"},
      {"/srv", "/srv", true, ""},
  };
  auto clash = [&](const std::string& path, bool owned_by_root = true) { return system_dir_clash(path, owned_by_root, places); };
  CHECK(clash("/etc") == "is the system directory `/etc`");
  CHECK(clash("/etc/ssh") == "lies inside the system directory `/etc`");
  CHECK(clash("/usr/lib") == "lies inside the system directory `/usr`");
  CHECK(clash("/data/opt/app") == "lies inside the system directory `/data/opt` (where `/opt` leads)");
  CHECK(clash("/data") == "contains the system directory `/data/opt` (where `/opt` leads)");
  CHECK(clash("/var") == "is the system directory `/var`");
  CHECK(clash("/var/lib/app") == "lies inside the system directory `/var`");
  CHECK(clash("/var/tmp").empty());
  CHECK(clash("/var/tmp/project").empty());
  CHECK(clash("/srv/site") == "lies inside the system directory `/srv`");
  CHECK(clash("/srv/site", false).empty());  // a site a user owns is the user's to hand out
  CHECK(clash("/home/alice/src").empty());
  CHECK(clash("/etcetera").empty());
  CHECK(clash("/data/optional").empty());
}

TEST_CASE("root's workspace and --rw binds are refused in a system directory, with the reason") {
  TempTree t;
  auto c = caller(t);
  c.uid = 0;
  c.gid = 0;
  auto refused = [&](Options o, const std::string& needle) {
    o.command = {"true"};
    auto p = resolve(o, c);
    REQUIRE_FALSE(p.ok());
    INFO(p.error().message());
    CHECK(p.error().message().find(needle) != std::string::npos);
  };
  Options o;
  o.workspace = "/etc";
  refused(o, "workspace `/etc` is the system directory `/etc`");
  o.workspace = "/usr/../usr/lib";
  refused(o, "workspace `/usr/lib` lies inside the system directory `/usr`");
  c.cwd = "/etc";  // the default workspace is the current directory
  refused(Options{}, "workspace `/etc` is the system directory");
  c = caller(t);
  c.uid = 0;
  o = {};
  o.rw_binds = {"/usr/bin"};
  refused(o, "--rw `/usr/bin` lies inside the system directory `/usr`");
  o = {};
  o.ro_binds = {"/usr/bin"};  // read-only: nothing of the host's can change
  o.command = {"true"};
  CHECK(resolve(o, c).ok());
  c.uid = 1000;  // not root: the kernel's own permissions already stop the sandbox there
  o = {};
  o.workspace = "/etc";
  o.command = {"true"};
  CHECK(resolve(o, c).ok());
}

TEST_CASE("a profile's state and private directories are bound even before they exist; copies stay in the home") {
  TempTree t;
  auto c = caller(t);
  c.environ.push_back("XDG_CACHE_HOME=" + t.root + "/cache");
  c.env = caller_environment(c.environ);
  auto o = with_command();
  o.state_dirs = {c.home + "/.tool/sessions"};
  o.private_dirs = {{"/etc/confine/profiles/tool.toml", c.home + "/.cache/tool"}};
  o.private_copies = {c.home + "/.tool/config.toml"};
  auto p = resolve(o, c);
  REQUIRE(p.ok());
  REQUIRE(p->fs.binds.size() == 2);
  CHECK(p->fs.binds[0].source == c.home + "/.tool/sessions");
  CHECK(p->fs.binds[0].dest == c.home + "/.tool/sessions");
  CHECK(p->fs.binds[0].create);
  CHECK(p->fs.binds[0].writable);
  // Kept under the profile's file name, at the path below $HOME; bound at the tool's path.
  CHECK(p->fs.binds[1].source == t.root + "/cache/confine/private/tool/.cache/tool");
  CHECK(p->fs.binds[1].dest == c.home + "/.cache/tool");
  CHECK(p->fs.copies == std::vector<std::string>{c.home + "/.tool/config.toml"});

  // A copy below a directory bound from the host would be written to the host: refused.
  o.private_copies = {c.home + "/.tool/sessions/x.json"};
  auto below = resolve(o, c);
  REQUIRE_FALSE(below.ok());
  CHECK(below.error().what.find("outside every directory bound from the host") != std::string::npos);
  // A cache kept in the workspace could be swapped for a symlink by the sandbox: refused.
  o.private_copies.clear();
  c.environ.back() = "XDG_CACHE_HOME=" + t.root + "/ws/.cache";
  c.env = caller_environment(c.environ);
  auto in_ws = resolve(o, c);
  REQUIRE_FALSE(in_ws.ok());
  CHECK(in_ws.error().what.find("lies in the workspace") != std::string::npos);
}

TEST_CASE("--secret: the variable inside holds the placeholder; an env: source variable is dropped") {
  TempTree t;
  auto o = with_command();
  o.net = NetChoice{NetMode::proxy};
  o.allow = {"api.example"};
  o.secrets = {"KEY=env:MY_KEY"};
  o.secret_for = {"api.example"};
  o.brokers = {"14000=https://api.example"};
  o.pass_env = {"MY_KEY"};  // passing it explicitly does not bring it in either
  o.set_env = {"KEY=from-env-flag"};
  auto c = caller(t);
  c.environ.push_back("MY_KEY=sk-real");
  auto p = resolve(o, c);
  REQUIRE(p.ok());
  REQUIRE(p->proxy.secrets.size() == 1);
  const auto& s = p->proxy.secrets[0];
  CHECK(s.placeholder.starts_with("confine-placeholder-"));
  CHECK(std::count(p->proc.env.begin(), p->proc.env.end(), "KEY=" + s.placeholder) == 1);
  for (const auto& e : p->proc.env) {
    CHECK_FALSE(e.starts_with("MY_KEY="));
    CHECK(e.find("sk-real") == std::string::npos);
    CHECK(e != "KEY=from-env-flag");
  }
  REQUIRE(p->proxy.brokers.size() == 1);
  CHECK(p->proxy.brokers[0].local_port == 14000);
}

TEST_CASE("--secret and --broker: bad combinations are refused") {
  TempTree t;
  auto refused = [&](Options o, const std::string& want) {
    o.command = {"true"};
    auto p = resolve(o, caller(t));
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.error().message(), Catch::Contains(want));
  };
  Options none;
  none.secrets = {"K"};
  none.secret_for = {"a.example"};
  refused(none, "need --net proxy or --net veth");
  Options unpaired;
  unpaired.net = NetChoice{NetMode::proxy};
  unpaired.secrets = {"K", "L"};
  unpaired.secret_for = {"a.example"};
  refused(unpaired, "2 --secret, 1 --for");
  Options twice;
  twice.net = NetChoice{NetMode::proxy};
  twice.secrets = {"K", "K=env:X"};
  twice.secret_for = {"a.example", "a.example"};
  refused(twice, "--secret K is given twice");
  Options not_allowed;
  not_allowed.net = NetChoice{NetMode::proxy};
  not_allowed.brokers = {"14000=https://a.example"};
  refused(not_allowed, "add --allow a.example:443");
  Options proxy_port;
  proxy_port.net = NetChoice{NetMode::proxy};
  proxy_port.allow = {"a.example"};
  proxy_port.brokers = {"3128=https://a.example"};
  refused(proxy_port, "already taken");
}

TEST_CASE("a profile's credential is used only when its variable is set; the command line's wins") {
  TempTree t;
  auto o = with_command();
  o.net = NetChoice{NetMode::proxy};
  o.allow = {"api.example"};
  o.profile_credentials = {{"API_KEY", "api.example", "14000=https://api.example", {"API_BASE=http://127.0.0.1:14000"}}};
  auto unset = resolve(o, caller(t));
  REQUIRE(unset.ok());
  CHECK(unset->proxy.secrets.empty());
  CHECK(unset->proxy.brokers.empty());
  for (const auto& e : unset->proc.env) CHECK_FALSE(e.starts_with("API_BASE="));
  auto c = caller(t);
  c.environ.push_back("API_KEY=sk-real");
  auto set = resolve(o, c);
  REQUIRE(set.ok());
  REQUIRE(set->proxy.secrets.size() == 1);
  CHECK(set->proxy.brokers.size() == 1);
  CHECK(std::count(set->proc.env.begin(), set->proc.env.end(), "API_BASE=http://127.0.0.1:14000") == 1);
  o.secrets = {"API_KEY=env:OTHER"};
  o.secret_for = {"other.example"};
  auto cli = resolve(o, c);
  REQUIRE(cli.ok());
  REQUIRE(cli->proxy.secrets.size() == 1);
  CHECK(cli->proxy.secrets[0].hosts == std::vector<std::string>{"other.example"});
}

namespace {

// A profile like codex's: two credentials sharing a broker, and the agent's configuration with its providers.
Options with_agent_config(const TempTree& t, std::string config_text) {
  auto o = with_command();
  o.net = NetChoice{NetMode::proxy};
  o.profile = "agent";
  o.allow = {"api.example"};
  Options::ProfileCredential cred{"API_KEY", "api.example", "14000=https://api.example",
                                  {"API_BASE=http://127.0.0.1:14000/v1"}, "API_BASE", "base_url"};
  auto other = cred;
  other.secret = "OTHER_API_KEY";
  o.profile_credentials = {cred, other};
  auto file = t.root + "/home/.agent/config.toml";
  o.private_copies = {file};
  o.agent_config = Options::AgentConfig{"agent", file, "providers", std::move(config_text)};
  return o;
}

std::string broker_to(const Policy& p, std::uint16_t local_port) {
  for (const auto& b : p.proxy.brokers)
    if (b.local_port == local_port) return b.host + ":" + std::to_string(b.port);
  return "";
}

std::string edit_at(const Policy& p, const std::string& key) {
  for (const auto& e : p.fs.copy_edits) {
    std::string k;
    for (const auto& part : e.key) k += (k.empty() ? "" : ".") + part;
    if (k == key) return e.value;
  }
  return "";
}

}  // namespace

TEST_CASE("the agent's configuration: its endpoint and providers are brokered, and the copy names the brokers") {
  TempTree t;
  auto o = with_agent_config(t, R"(base_url = "https://gw.example:8443/api/v1"
[providers.mine]
base_url = "https://llm.example/v1"
env_key = "MINE_KEY"
[providers.local]
base_url = "http://127.0.0.1:11434/v1"
env_key = "LOCAL_KEY"
[providers.unset]
base_url = "https://unset.example/v1"
env_key = "UNSET_KEY"
)");
  auto c = caller(t);
  c.environ.insert(c.environ.end(), {"API_KEY=a", "OTHER_API_KEY=b", "MINE_KEY=m", "LOCAL_KEY=l"});
  auto p = resolve(o, c);
  REQUIRE(p.ok());
  // The two credentials share the one broker, to the user's endpoint instead of the profile's host.
  CHECK(broker_to(*p, 14000) == "gw.example:8443");
  CHECK(broker_to(*p, 14010) == "llm.example:443");
  CHECK(p->proxy.brokers.size() == 2);
  CHECK(edit_at(*p, "base_url") == "http://127.0.0.1:14000/api/v1");
  CHECK(edit_at(*p, "providers.mine.base_url") == "http://127.0.0.1:14010/v1");
  CHECK(edit_at(*p, "providers.local.base_url").empty());  // plain HTTP on this machine keeps its URL
  CHECK(edit_at(*p, "providers.unset.base_url").empty());  // no key set: left alone
  std::map<std::string, std::vector<std::string>> hosts;
  for (const auto& s : p->proxy.secrets) hosts[s.name] = s.hosts;
  CHECK(hosts["API_KEY"] == std::vector<std::string>{"gw.example"});
  CHECK(hosts["MINE_KEY"] == std::vector<std::string>{"llm.example"});
  CHECK(hosts["LOCAL_KEY"] == std::vector<std::string>{"127.0.0.1"});
  CHECK(hosts.count("UNSET_KEY") == 0);
  CHECK(p->proxy.allow.check_name("llm.example", 443).allowed);
  CHECK(p->proxy.allow.check_name("gw.example", 8443).allowed);
  CHECK_FALSE(p->proxy.allow.check_name("unset.example", 443).allowed);

  SECTION("the variable wins over the configuration") {
    c.environ.push_back("API_BASE=https://env.example/v2");
    auto q = resolve(o, c);
    REQUIRE(q.ok());
    CHECK(broker_to(*q, 14000) == "env.example:443");
    CHECK(edit_at(*q, "base_url") == "http://127.0.0.1:14000/v2");
  }
  SECTION("a provider in clear off this machine is refused, naming the key to unset") {
    auto bad = with_agent_config(t, "[providers.far]\nbase_url = \"http://far.example/v1\"\nenv_key = \"FAR_KEY\"\n");
    c.environ.push_back("FAR_KEY=f");
    auto q = resolve(bad, c);
    REQUIRE_FALSE(q.ok());
    CHECK_THAT(q.error().message(), Catch::Contains("`providers.far.base_url` in " + t.root + "/home/.agent/config.toml"));
    CHECK_THAT(q.error().message(), Catch::Contains("or unset FAR_KEY for this run"));
  }
  SECTION("a configuration that is not TOML is one line naming the file, its line and why confine reads it") {
    auto bad = with_agent_config(t, "ok = 1\nx = [\n");
    auto q = resolve(bad, c);
    REQUIRE_FALSE(q.ok());
    CHECK_THAT(q.error().message(), Catch::StartsWith(t.root + "/home/.agent/config.toml:"));
    CHECK_THAT(q.error().message(), Catch::Contains("profile `agent` reads your endpoints from this file"));
  }
  SECTION("no copy (learn makes none): nothing to edit") {
    o.private_copies.clear();
    auto q = resolve(o, c);
    REQUIRE(q.ok());
    CHECK(q->fs.copy_edits.empty());
  }
}

TEST_CASE("--publish resolves to ports on the host's loopback unless an address is given") {
  TempTree t;
  auto c = caller(t);
  auto o = with_command();
  o.publish = {"3000:3000", "0.0.0.0:8080:80/tcp"};
  for (const char* net : {"none", "proxy"}) {
    auto chosen = parse_net(net);
    REQUIRE(chosen.ok());
    o.net = *chosen;
    auto p = resolve(o, c);
    REQUIRE(p.ok());
    REQUIRE(p->published.size() == 2);
    CHECK(p->published[0].host_endpoint() == "127.0.0.1:3000");
    CHECK(p->published[1].host_endpoint() == "0.0.0.0:8080");
    CHECK(p->published[1].port == 80);
    CHECK(p->protection.request.publishes);
  }
  CHECK_FALSE(resolve(with_command(), c)->protection.request.publishes);
}

TEST_CASE("--publish is refused where there is nothing to publish, and for a bad or repeated spec") {
  TempTree t;
  auto c = caller(t);
  auto refused = [&](std::vector<std::string> specs, const std::string& net, bool no_namespaces, const std::string& needle) {
    auto o = with_command();
    o.publish = std::move(specs);
    auto chosen = parse_net(net);
    REQUIRE(chosen.ok());
    o.net = *chosen;
    o.no_namespaces = no_namespaces;
    auto p = resolve(o, c);
    REQUIRE_FALSE(p.ok());
    INFO(p.error().message());
    CHECK(p.error().message().find(needle) != std::string::npos);
  };
  refused({"3000:3000"}, "host", false, "--publish 3000:3000: with --net host the sandbox shares the host's network");
  refused({"3000:3000"}, "none", true, "--publish 3000:3000: needs the sandbox's own network namespace");
  refused({"70000:1"}, "none", false, "--publish 70000:1: host port `70000`");
  refused({"1:2/udp"}, "none", false, "--publish 1:2/udp: only TCP ports can be published");
  refused({"3000:3000", "127.0.0.1:3000:4000"}, "none", false, "--publish 127.0.0.1:3000:4000: 127.0.0.1:3000 is published twice");
  refused({"3128:3128"}, "proxy", false, "port 3128 inside is the proxy's own");
}
