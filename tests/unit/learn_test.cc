#include <catch2/catch.hpp>

#include <toml++/toml.h>

#include "core/learn.h"

using namespace confine;

namespace {

Profile npm_like() {
  Profile p;
  p.name = "npm";
  p.lists[ProfileKey::filesystem_private] = {"~/.npm"};
  p.private_owners = {"npm"};
  p.lists[ProfileKey::environment_pass] = {"NPM_TOKEN"};
  p.lists[ProfileKey::network_allow] = {"registry.npmjs.org"};
  p.settings = {{ProfileKey::network_mode, {"proxy", "npm.toml:10"}}};
  p.net = NetChoice{NetMode::proxy};
  return p;
}

Profile default_like() {
  Profile p;
  p.name = "default";
  p.settings = {{ProfileKey::network_mode, {"none", "default.toml:5"}}};
  p.net = NetChoice{NetMode::none};
  return p;
}

toml::table parsed(const std::string& text) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    FAIL("not valid TOML: " << e.description() << "\n" << text);
  }
  return {};
}

std::vector<std::string> strings_at(const toml::table& t, const char* section, const char* key) {
  std::vector<std::string> out;
  if (const auto* a = t.at_path(std::string(section) + "." + key).as_array())
    for (const auto& v : *a) out.push_back(v.value<std::string>().value_or("<not a string>"));
  return out;
}

NetRecord line(std::string method, std::string host, std::uint16_t port, bool allowed, std::string reason) {
  return {std::move(method), std::move(host), port, allowed, std::move(reason)};
}

}  // namespace

TEST_CASE("learn: the base profile is chosen by the program's name") {
  CHECK(base_profile_for({"npm", "install"}) == "npm");
  CHECK(base_profile_for({"/usr/bin/npx", "x"}) == "npm");
  CHECK(base_profile_for({"pip3", "download", "x"}) == "pip");
  CHECK(base_profile_for({"cargo", "build"}) == "cargo");
  CHECK(base_profile_for({"codex"}) == "codex");
  CHECK(base_profile_for({"sh", "-c", "npm install"}) == "default");
  CHECK(base_profile_for({}) == "default");
}

TEST_CASE("learn: the net log is read back; other lines are skipped") {
  auto log = parse_net_log(
      R"j({"time":1,"method":"CONNECT","host":"registry.example","port":443,"allowed":true,"reason":"recorded by confine learn","bytes_up":1})j" "\n"
      "not json\n"
      R"j({"time":2,"method":"GET","host":"x","port":70000,"allowed":true,"reason":"r"})j" "\n"
      R"j({"time":3,"method":"TCP","host":"db.internal","port":5432,"allowed":false,"reason":"resolves to an internal address (10.0.0.1)"})j" "\n"
      R"j([1,2,3])j" "\n");
  REQUIRE(log.size() == 2);
  CHECK(log[0].method == "CONNECT");
  CHECK(log[0].door() == NetDoor::request);
  CHECK(log[1].door() == NetDoor::tcp);
  CHECK(log[0].host == "registry.example");
  CHECK(log[0].port == 443);
  CHECK(log[0].allowed);
  CHECK(log[1].port == 5432);
  CHECK_FALSE(log[1].allowed);
}

TEST_CASE("learn: the denial log's seccomp lines are read back; other layers and lines are skipped") {
  auto refusals = parse_seccomp_denials(
      R"j({"time":1,"layer":"seccomp","action":"refused","syscall":"unshare","errno":"EPERM","rule":"new-namespaces","pid":2,"comm":"bwrap"})j" "\n"
      R"j({"time":2,"layer":"network","action":"refused","host":"x"})j" "\n"
      R"j({"time":3,"layer":"seccomp","syscall":"ptrace"})j" "\n"
      "garbage\n");
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0].syscall == "unshare");
  CHECK(refusals[0].rule == "new-namespaces");
  CHECK(refusals[0].err == "EPERM");
}

TEST_CASE("learn: each host:port reached is one allow entry with its count; the base's own are named, not repeated") {
  LearnRecords r;
  r.command = {"npm", "install", "left-pad"};
  for (int i = 0; i < 12; ++i) r.network.push_back(line("CONNECT", "registry.npmjs.org", 443, true, "allowed by registry.npmjs.org"));
  for (int i = 0; i < 3; ++i) r.network.push_back(line("GET", "Mirror.Example", 8080, true, "recorded by confine learn"));
  r.network.push_back(line("CONNECT", "cdn.example", 443, true, "recorded by confine learn"));
  r.network.push_back(line("CONNECT", "gone.example", 443, true, "unresolvable"));
  r.network.push_back(line("TCP", "db.example", 5432, false, "resolves to an internal address (10.0.0.5); allow it by address to reach it"));
  r.network.push_back(line("CONNECT", "127.0.0.1", 6379, false, "IP-literal destinations need an address entry"));
  r.network.push_back(line("DNS", "whatever.example", 0, true, "recorded by confine learn"));
  auto text = learned_profile(r, "npm", npm_like());
  auto t = parsed(text);
  CHECK(t["format"].value_or(std::string()) == "confine-profile/1");
  CHECK(t["extends"].value_or(std::string()) == "npm");
  CHECK(t.at_path("network.mode").value_or(std::string()) == "proxy");
  // Sorted by host; port 443 is an entry's default.
  CHECK(strings_at(t, "network", "allow") == std::vector<std::string>{"cdn.example", "mirror.example:8080", "gone.example"});
  CHECK_THAT(text, Catch::Contains("# reached mirror.example:8080 ×3"));
  CHECK_THAT(text, Catch::Contains("registry.npmjs.org:443 ×12: already allowed by the base profile"));
  CHECK_THAT(text, Catch::Contains("did not answer (unresolvable)"));
  // Refusals are comments with the flag that would allow them, never entries.
  CHECK_THAT(text, Catch::Contains("# refused during the run: db.example:5432 ×1"));
  CHECK_THAT(text, Catch::Contains("--allow 10.0.0.5:5432 allows it"));
  CHECK_THAT(text, Catch::Contains("--allow 127.0.0.1:6379 allows it"));
  CHECK_THAT(text, Catch::Contains("record of a run you trusted"));
}

TEST_CASE("learn: a base whose network mode the profile would change is copied, and named in the header") {
  LearnRecords r;
  r.command = {"./fetch.sh"};
  r.network.push_back(line("CONNECT", "api.example", 443, true, "recorded by confine learn"));
  auto base = default_like();
  base.settings.push_back({ProfileKey::filesystem_workspace, {"ro", "read-only.toml:3"}});
  base.settings.push_back({ProfileKey::sandbox_allow_nested, {"true", "x.toml:1"}});
  base.lists[ProfileKey::filesystem_ro] = {"~/.gitconfig"};
  auto text = learned_profile(r, "read-only", base);
  auto t = parsed(text);
  CHECK_FALSE(t.contains("extends"));
  CHECK_THAT(text, Catch::Contains("# Base: the `read-only` profile, copied"));
  CHECK(t.at_path("network.mode").value_or(std::string()) == "proxy");
  CHECK(t.at_path("filesystem.workspace").value_or(std::string()) == "ro");
  CHECK(t.at_path("sandbox.allow_nested").value_or(false));
  CHECK(strings_at(t, "filesystem", "ro") == std::vector<std::string>{"~/.gitconfig"});
}

TEST_CASE("learn: a run that used no network leaves the base's mode alone") {
  LearnRecords r;
  r.command = {"true"};
  auto t = parsed(learned_profile(r, "default", default_like()));
  CHECK_FALSE(t.contains("network"));
  CHECK(t["extends"].value_or(std::string()) == "default");  // nothing to change: extended
}

TEST_CASE("learn: files written below $HOME become private directories, the narrowest that keeps them") {
  LearnRecords r;
  r.command = {"npm", "install"};
  r.home_writes = {".cache/x", ".cache/tool/a", ".cache/tool/b/c", ".npm/_cacache/index", ".local/share/app/db",
                   ".toolrc", ".config/app/settings.json"};
  auto text = learned_profile(r, "npm", npm_like());
  auto t = parsed(text);
  CHECK(strings_at(t, "filesystem", "private") ==
        std::vector<std::string>{"~/.cache", "~/.cache/tool", "~/.config/app", "~/.local/share/app"});
  CHECK_THAT(text, Catch::Contains("wrote 2 files there (~/.cache/tool/a)"));
  CHECK_THAT(text, Catch::Contains("under private ~/.npm (e.g. ~/.npm/_cacache/index): kept by the base profile"));
  CHECK_THAT(text, Catch::Contains("wrote ~/.toolrc directly in $HOME"));
  CHECK(strings_at(t, "filesystem", "rw").empty());  // never rw
}

TEST_CASE("learn: hostile names come out as valid TOML that reads back as the same name") {
  const std::vector<std::string> names = {
      "q\"uote/x", "new\nline/x", "brack]et/x", "back\\slash/x", "tab\there/x", "ünïcødé/ファイル", "emoji🙂/x",
      "#hash/x", "x\"]\nrw = [\"~\"]\n#/y", "\x1b[31mred/x", "del\x7f/x",
      "\n'''''1/x",  // three single quotes end the multi-line literal a TOML printer may choose for a newline
  };
  LearnRecords r;
  r.command = {"sh", "-c", "evil\n[network]\nallow = [\"*\"]"};
  r.home_writes = names;
  r.home_writes.push_back("bad\xff\xfeutf8/x");
  r.network.push_back(line("CONNECT", "a\"b\nc]", 443, false, "malformed host name"));
  r.dropped_env = {"EVIL\"\n[x]", "GITHUB_TOKEN"};
  r.seccomp = {{"ptrace\n[y]", "kernel-attack-surface", "EPERM"}};
  auto text = learned_profile(r, "default", default_like());
  auto t = parsed(text);
  std::vector<std::string> want;
  for (const auto& n : names) want.push_back("~/" + n.substr(0, n.rfind('/')));
  std::sort(want.begin(), want.end());
  CHECK(strings_at(t, "filesystem", "private") == want);
  // Nothing hostile became a key or a table of its own.
  CHECK_FALSE(t.at_path("filesystem.rw"));
  CHECK_FALSE(t.contains("x"));
  CHECK_FALSE(t.contains("y"));
  CHECK_FALSE(t.at_path("network.allow"));
  CHECK_FALSE(t.at_path("environment.pass"));
  CHECK_THAT(t["description"].value_or(std::string()), Catch::Contains("learned from: sh -c evil?[network]?allow"));
  CHECK_THAT(text, Catch::Contains("whose name is not UTF-8"));
}

TEST_CASE("learn: variables the scrub dropped are offered as a comment, never passed") {
  LearnRecords r;
  r.command = {"npm", "install"};
  r.dropped_env = {"GITHUB_TOKEN", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"};
  auto text = learned_profile(r, "npm", npm_like());
  auto t = parsed(text);
  CHECK_FALSE(t.at_path("environment.pass"));
  CHECK_THAT(text, Catch::Contains("# pass = [\"AWS_SECRET_ACCESS_KEY\", \"GITHUB_TOKEN\"]"));
  CHECK_THAT(text, Catch::Contains("passed by the base profile when set: NPM_TOKEN"));
}

TEST_CASE("learn: seccomp refusals map to allow_nested where a key exists, else a comment") {
  LearnRecords r;
  r.command = {"codex"};
  r.seccomp = {{"unshare", "new-namespaces", "EPERM"}, {"unshare", "new-namespaces", "EPERM"}, {"mount", "mounts", "EPERM"},
               {"ptrace", "kernel-attack-surface", "EPERM"}};
  auto text = learned_profile(r, "codex", npm_like());
  auto t = parsed(text);
  CHECK(t.at_path("sandbox.allow_nested").value_or(false));
  CHECK_THAT(text, Catch::Contains("# seccomp refused mount ×1 (rule `mounts`); unshare ×2 (rule `new-namespaces`): the tool builds"));
  CHECK_THAT(text, Catch::Contains("# seccomp refused ptrace ×1 (rule `kernel-attack-surface`): no profile key allows it"));
}

TEST_CASE("learn: no private directory hides a path the user bound, or a parent of one") {
  LearnRecords r;
  r.command = {"tool"};
  // The mount point confine made for `--ro ~/.config/myapp`, and what the run wrote beside and above it.
  r.bound = {"~/.config/myapp", "~/.cache/app/shared"};
  r.home_writes = {".config/myapp", ".config/x", ".config/other/y", ".cache/app/state", ".cache/app/shared"};
  auto text = learned_profile(r, "default", default_like());
  auto t = parsed(text);
  CHECK(strings_at(t, "filesystem", "private") == std::vector<std::string>{"~/.config/other"});
  CHECK_THAT(text, Catch::Contains("wrote 1 file under ~/.config (~/.config/x): not kept: a private ~/.config would hide ~/.config/myapp, which the run was given"));
  CHECK_THAT(text, Catch::Contains("wrote 1 file under ~/.cache/app (~/.cache/app/state): not kept: a private ~/.cache/app would hide ~/.cache/app/shared"));
  CHECK_THAT(text, !Catch::Contains("(~/.config/myapp)"));  // confine's own mount point, not a write
}

TEST_CASE("learn: a service on the host's loopback the run reached is allowed by address, with the proxy") {
  LearnRecords r;
  r.command = {"./client.sh"};
  r.network.push_back(line("TCP", "127.0.0.1", 8765, true, "recorded by confine learn; connected directly (the kernel carries the bytes)"));
  r.network.push_back(line("TCP", "::1", 8766, true, "recorded by confine learn; connected directly (the kernel carries the bytes)"));
  auto text = learned_profile(r, "default", default_like());
  auto t = parsed(text);
  CHECK(t.at_path("network.mode").value_or(std::string()) == "proxy");
  CHECK(strings_at(t, "network", "allow") == std::vector<std::string>{"127.0.0.1:8765", "[::1]:8766"});
  CHECK_THAT(text, Catch::Contains("# reached 127.0.0.1:8765 ×1, a service on this machine's loopback"));
}

TEST_CASE("learn: files read outside the run's view become ro entries, the narrowest that shows them") {
  LearnRecords r;
  r.command = {"./app.sh"};
  auto file = [](std::string path, bool beside_secret = false) { return ReadRecord{std::move(path), false, false, beside_secret}; };
  r.reads = {
      file("~/.config/app/config.ini"),
      {"~/.config", true, false, false},  // looked up on the way
      {"~/.config/app", true, false, false},
      file("~/.config/tool/a.toml"), file("~/.config/tool/b.toml"),  // two in one directory: the directory
      file("~/.config/x.conf"), file("~/.config/y.conf"),            // two in a shared directory: each file
      file("~/.toolrc"), file("~/.profile"),                          // two in $HOME: each file
      file("~/.myapp/a", true), file("~/.myapp/b", true),             // beside a credential: each file
      {"~/.ssh/id_ed25519", false, true, true},                       // a credential: never
      file("~/.aws/credentials"), file("~/.aws/config"),              // where credentials live: never
      file("/data/set/one.csv"), file("/data/set/two.csv"),
      file("/mnt/a"), file("/mnt/b"),                                 // at the top: each file
      file("/home/bob/.x"), file("/home/bob/.y"),                     // another home: each file
      file("/root/.x"), file("/root/.y"),
      {"~/.config/empty", true, false, false},                       // looked in, nothing read
      file("~/.gitconfig"),                                           // the base shows it
  };
  auto base = default_like();
  base.lists[ProfileKey::filesystem_ro] = {"~/.gitconfig"};
  auto text = learned_profile(r, "default", base);
  auto t = parsed(text);
  auto ro = strings_at(t, "filesystem", "ro");
  std::sort(ro.begin(), ro.end());
  CHECK(ro == std::vector<std::string>{"/data/set", "/home/bob/.x", "/home/bob/.y", "/mnt/a", "/mnt/b", "/root/.x", "/root/.y", "~/.config/app/config.ini", "~/.config/tool",
                                       "~/.config/x.conf", "~/.config/y.conf", "~/.myapp/a", "~/.myapp/b", "~/.profile",
                                       "~/.toolrc"});
  CHECK_THAT(text, Catch::Contains("# read 2 files there (~/.config/tool/a.toml), which the sandbox does not show"));
  CHECK_THAT(text, Catch::Contains("# read ~/.config/app/config.ini, which the sandbox does not show"));
  CHECK_THAT(text, Catch::Contains("read ~/.ssh/id_ed25519, which may hold a credential: not added"));
  CHECK_THAT(text, Catch::Contains("read ~/.aws/credentials, which may hold a credential: not added"));
  CHECK_THAT(text, Catch::Contains("looked in ~/.config/empty and read nothing there: not added"));
  CHECK_THAT(text, !Catch::Contains("looked in ~/.config/app"));
  CHECK(strings_at(t, "filesystem", "private").empty());
}

TEST_CASE("learn: every door the recorder names is read back as that door; a request is named by its method") {
  for (auto door : {NetDoor::tcp, NetDoor::udp, NetDoor::forward, NetDoor::dns, NetDoor::publish}) {
    CHECK_FALSE(net_door_word(door).empty());
    CHECK(net_door_of(net_door_word(door)) == door);
  }
  CHECK(net_door_of(net_door_word(NetDoor::request)) == NetDoor::request);
  CHECK(net_door_of("POST") == NetDoor::request);
  CHECK(net_door_of("CONNECT") == NetDoor::request);
}
