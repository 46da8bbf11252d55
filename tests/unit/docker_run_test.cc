// `confine run`: the docker-run parser's pure steps (volumes, mounts, the workspace pick, --env-file) and
// cli::parse end to end on whole command lines.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "cli/cli.h"
#include "cli/docker_run.h"
#include "core/env_scrub.h"

using namespace confine;
using cli::Volume;

namespace {

// The error message of a failed Result, or "" when it succeeded (so a CHECK shows what went wrong).
template <typename T>
std::string error_of(const sys::Result<T>& r) {
  return r ? std::string() : r.error().message();
}

bool contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// A command line for cli::parse: argv[0] "confine", then the words.
std::variant<Options, cli::ExitNow> parse_words(const std::vector<std::string>& words) {
  std::vector<std::string> storage{"confine"};
  storage.insert(storage.end(), words.begin(), words.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  return cli::parse(static_cast<int>(storage.size()), argv.data());
}

std::variant<Options, cli::ExitNow> parse(std::initializer_list<std::string> words) { return parse_words(words); }

int exit_code(const std::variant<Options, cli::ExitNow>& r) {
  auto* e = std::get_if<cli::ExitNow>(&r);
  return e ? e->code : -1;
}

// An existing directory to name as the image (the parser only checks that it is a directory).
struct ImageDir {
  std::string path;
  ImageDir() {
    char tmpl[] = "/tmp/confine-unit-image-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~ImageDir() { ::rmdir(path.c_str()); }
};

}  // namespace

TEST_CASE("parse_volume: SRC:DST with ro, rw and propagation options") {
  auto v = cli::parse_volume("/src:/dst");
  REQUIRE(v);
  CHECK(v->source == "/src");
  CHECK(v->dest == "/dst");
  CHECK_FALSE(v->read_only);

  v = cli::parse_volume("/src:/dst:ro");
  REQUIRE(v);
  CHECK(v->read_only);
  v = cli::parse_volume("./rel:/dst:rw");
  REQUIRE(v);
  CHECK(v->source == "./rel");
  CHECK_FALSE(v->read_only);
  v = cli::parse_volume("../up:/dst:ro,rprivate");
  REQUIRE(v);
  CHECK(v->read_only);
  v = cli::parse_volume("/src:/dst:readonly");
  REQUIRE(v);
  CHECK(v->read_only);
  v = cli::parse_volume("/src:/dst:ro,rw");  // the last one wins
  REQUIRE(v);
  CHECK_FALSE(v->read_only);
  v = cli::parse_volume("/src:/dst:private");
  REQUIRE(v);
  v = cli::parse_volume("~/x:/dst");  // a home-relative path (as the shell may leave it), not a volume name
  REQUIRE(v);
}

TEST_CASE("parse_volume: refused specs name the problem") {
  auto z = cli::parse_volume("/src:/dst:z");
  REQUIRE_FALSE(z);
  CHECK(contains(error_of(z), "option `z` is not supported"));
  CHECK_FALSE(cli::parse_volume("/src:/dst:Z"));
  CHECK_FALSE(cli::parse_volume("/src:/dst:ro,Z"));
  CHECK_FALSE(cli::parse_volume("/src:/dst:shared"));

  auto named = cli::parse_volume("data:/data");
  REQUIRE_FALSE(named);
  CHECK(contains(error_of(named), "`data` is a named volume"));

  auto rel = cli::parse_volume("/src:dst");
  REQUIRE_FALSE(rel);
  CHECK(contains(error_of(rel), "destination must be absolute"));

  auto colons = cli::parse_volume("/a:/b:ro:extra");
  REQUIRE_FALSE(colons);
  CHECK(contains(error_of(colons), "expected SRC:DST[:OPTIONS]"));
  CHECK_FALSE(cli::parse_volume("/a"));
  CHECK_FALSE(cli::parse_volume(":/b"));
  CHECK_FALSE(cli::parse_volume("/a:"));
}

TEST_CASE("parse_mount: bind mounts and their readonly forms") {
  auto m = cli::parse_mount("type=bind,source=/src,target=/dst");
  REQUIRE(m);
  auto* v = std::get_if<Volume>(&*m);
  REQUIRE(v);
  CHECK(v->source == "/src");
  CHECK(v->dest == "/dst");
  CHECK_FALSE(v->read_only);

  for (const char* spec : {"type=bind,src=/src,dst=/dst,readonly", "type=bind,source=/src,destination=/dst,ro",
                           "type=bind,source=/src,target=/dst,readonly=true", "type=bind,source=/src,target=/dst,ro=1"}) {
    INFO(spec);
    auto r = cli::parse_mount(spec);
    REQUIRE(r);
    REQUIRE(std::holds_alternative<Volume>(*r));
    CHECK(std::get<Volume>(*r).read_only);
    CHECK(std::get<Volume>(*r).dest == "/dst");
  }
  auto rw = cli::parse_mount("type=bind,source=/src,target=/dst,readonly=false");
  REQUIRE(rw);
  CHECK_FALSE(std::get<Volume>(*rw).read_only);
}

TEST_CASE("parse_mount: tmpfs becomes DST[:size=..,mode=..]") {
  auto plain = cli::parse_mount("type=tmpfs,target=/scratch");
  REQUIRE(plain);
  REQUIRE(std::holds_alternative<std::string>(*plain));
  CHECK(std::get<std::string>(*plain) == "/scratch");

  auto sized = cli::parse_mount("type=tmpfs,destination=/scratch,tmpfs-size=64m,tmpfs-mode=1777");
  REQUIRE(sized);
  CHECK(std::get<std::string>(*sized) == "/scratch:size=64m,mode=1777");
  auto mode_only = cli::parse_mount("type=tmpfs,dst=/s,tmpfs-mode=700");
  REQUIRE(mode_only);
  CHECK(std::get<std::string>(*mode_only) == "/s:mode=700");
}

TEST_CASE("parse_mount: volumes, missing parts and stray options are refused") {
  auto volume = cli::parse_mount("type=volume,source=data,target=/data");
  REQUIRE_FALSE(volume);
  CHECK(contains(error_of(volume), "type `volume` is not supported"));
  CHECK(contains(error_of(cli::parse_mount("type=bind,source=data,target=/data")), "must be an absolute or ./relative path"));
  CHECK(contains(error_of(cli::parse_mount("type=bind,source=/src")), "needs an absolute target="));
  CHECK(contains(error_of(cli::parse_mount("type=bind,source=/src,target=rel")), "needs an absolute target="));
  CHECK(contains(error_of(cli::parse_mount("type=bind,target=/dst")), "needs source="));
  CHECK(contains(error_of(cli::parse_mount("type=tmpfs,source=/x,target=/dst")), "a tmpfs has no source"));
  CHECK(contains(error_of(cli::parse_mount("type=bind,source=/s,target=/d,tmpfs-size=1m")), "tmpfs-* options need type=tmpfs"));
  CHECK(contains(error_of(cli::parse_mount("type=bind,source=/s,target=/d,bind-propagation=shared")),
                 "`bind-propagation=shared` is not supported"));
  CHECK_FALSE(cli::parse_mount("source=/s,target=/d"));  // no type
}

TEST_CASE("pick_workspace: the deepest volume holding the workdir, else the first read-write one") {
  std::vector<Volume> vols = {
      {"/h/ro", "/data", true},
      {"/h/proj", "/work", false},
      {"/h/sub", "/work/sub", false},
  };
  CHECK(cli::pick_workspace(vols, "/work") == 1);
  CHECK(cli::pick_workspace(vols, "/work/other/dir") == 1);
  CHECK(cli::pick_workspace(vols, "/work/sub/deeper") == 2);
  CHECK(cli::pick_workspace(vols, "/work/sub/") == 2);
  CHECK(cli::pick_workspace(vols, "/data/x") == 0);  // a read-only volume holding the workdir still wins
  CHECK(cli::pick_workspace(vols, "/workspace") == -1);  // a prefix of the name is not a parent directory
  CHECK(cli::pick_workspace(vols, "/elsewhere") == -1);  // a workdir none holds: no workspace
  CHECK(cli::pick_workspace(vols, "") == 1);             // no workdir: the first read-write one

  std::vector<Volume> order = {{"/h/deep", "/a/b", false}, {"/h/shallow", "/a", false}};
  CHECK(cli::pick_workspace(order, "/a/b/c") == 0);
  CHECK(cli::pick_workspace(order, "/a/c") == 1);

  std::vector<Volume> all_ro = {{"/h/x", "/x", true}, {"/h/y", "/y", true}};
  CHECK(cli::pick_workspace(all_ro, "") == -1);
  CHECK(cli::pick_workspace({}, "") == -1);
  CHECK(cli::pick_workspace({}, "/w") == -1);
}

TEST_CASE("parse_env_file: NAME=VALUE, bare NAME, comments, blank lines and CRLF") {
  auto r = parse_env_file("# a comment\n"
                          "\n"
                          "FOO=bar\r\n"
                          "   \t\n"
                          "  # indented comment\n"
                          "QUOTED=\"kept as is\"\n"
                          "EMPTY=\n"
                          "PASSED\n"
                          "  INDENTED=1\n"
                          "EQ=a=b\n"
                          "LAST=no-newline",
                          "vars.env");
  REQUIRE(r);
  CHECK(r->set == std::vector<std::string>{"FOO=bar", "QUOTED=\"kept as is\"", "EMPTY=", "INDENTED=1", "EQ=a=b",
                                           "LAST=no-newline"});
  CHECK(r->pass == std::vector<std::string>{"PASSED"});

  auto empty = parse_env_file("", "empty.env");
  REQUIRE(empty);
  CHECK(empty->set.empty());
  CHECK(empty->pass.empty());
}

TEST_CASE("parse_env_file: a bad name is an error naming FILE:LINE") {
  auto r = parse_env_file("OK=1\n# c\nBAD NAME=1\n", "my.env");
  REQUIRE_FALSE(r);
  CHECK(contains(error_of(r), "my.env:3:"));
  CHECK(contains(error_of(r), "BAD NAME=1"));

  auto eq = parse_env_file("\r\n=value\n", "x.env");
  REQUIRE_FALSE(eq);
  CHECK(contains(error_of(eq), "x.env:2:"));
}

TEST_CASE("cli::parse: the seed docker run line") {
  ImageDir image;
  auto r = parse({"run", "--rm", "-v", "/tmp:/workspace", "-w", "/workspace", "--cap-drop=ALL",
                      "--security-opt=no-new-privileges", "--memory=4g", "--pids-limit=512", "--user", "1000:1000",
                      image.path, "bash"});
  auto* o = std::get_if<Options>(&r);
  REQUIRE(o);
  CHECK(o->docker_run);
  CHECK(o->rootfs == image.path);
  CHECK(o->workspace == "/tmp");
  CHECK(o->workspace_dest == "/workspace");
  CHECK_FALSE(o->workspace_readonly);
  CHECK_FALSE(o->no_workspace);
  CHECK(o->workdir == "/workspace");
  CHECK(o->memory == "4g");
  CHECK(o->pids == "512");
  CHECK(o->user == std::optional<std::string>("1000:1000"));
  CHECK(o->net == NetChoice{NetMode::none});
  CHECK(o->net_given);
  CHECK(o->stdin_closed);  // no -i
  CHECK_FALSE(o->best_effort);
  CHECK_FALSE(o->rootfs_readonly);
  CHECK(o->command == std::vector<std::string>{"bash"});
}

TEST_CASE("cli::parse: run flags become Options") {
  ImageDir image;
  SECTION("host image, defaults") {
    auto r = parse({"run", "host", "/bin/true"});
    auto* o = std::get_if<Options>(&r);
    REQUIRE(o);
    CHECK(o->rootfs.empty());
    CHECK(o->user == std::optional<std::string>("0:0"));
    CHECK(o->no_workspace);
    CHECK(o->stdin_closed);
    CHECK(o->hostname.empty());
  }
  SECTION("everything after the image is the command, flags included") {
    auto r = parse({"run", "-i", image.path, "sh", "-c", "echo", "--rm", "-d"});
    auto* o = std::get_if<Options>(&r);
    REQUIRE(o);
    CHECK_FALSE(o->stdin_closed);
    CHECK(o->command == std::vector<std::string>{"sh", "-c", "echo", "--rm", "-d"});
    auto dashdash = parse({"run", image.path, "--", "ls"});
    REQUIRE(std::holds_alternative<Options>(dashdash));
    CHECK(std::get<Options>(dashdash).command == std::vector<std::string>{"ls"});
  }
  SECTION("environment, network, hostname, read-only, best-effort") {
    auto r = parse({"run", "--best-effort", "-e", "FOO=1", "--env", "BAR", "--network", "host", "-h", "box",
                        "--read-only", "--init", "--cpus", "1.5", "--memory-swap", "-1", "-m", "512m", image.path, "env"});
    auto* o = std::get_if<Options>(&r);
    REQUIRE(o);
    CHECK(o->best_effort);
    CHECK(o->set_env == std::vector<std::string>{"FOO=1"});
    CHECK(o->pass_env == std::vector<std::string>{"BAR"});
    CHECK(o->net == NetChoice{NetMode::host});
    CHECK(o->hostname == "box");
    CHECK(o->rootfs_readonly);
    CHECK(o->cpus == "1.5");
    CHECK(o->memory_swap == "-1");
    CHECK(o->memory == "512m");
  }
  SECTION("--network proxy with --allow: confine's --net proxy --allow") {
    auto r = parse({"run", "--network", "proxy", "--allow", "api.example.com", "--allow=127.0.0.1:8080", image.path, "true"});
    auto* o = std::get_if<Options>(&r);
    REQUIRE(o);
    CHECK(o->net == NetChoice{NetMode::proxy});
    CHECK(o->net_given);
    CHECK(o->allow == std::vector<std::string>{"api.example.com", "127.0.0.1:8080"});
    auto none_allowed = parse({"run", "--net=proxy", image.path, "true"});  // as confine --net proxy: all denied
    REQUIRE(std::holds_alternative<Options>(none_allowed));
    CHECK(std::get<Options>(none_allowed).allow.empty());
  }
  SECTION("-p and --publish: confine's --publish, repeatable, with any network") {
    auto r = parse({"run", "-p", "3000:3000", "--publish=127.0.0.1:8080:80", "-p", "[::1]:9000:9000/tcp", image.path, "true"});
    auto* o = std::get_if<Options>(&r);
    REQUIRE(o);
    CHECK(o->publish == std::vector<std::string>{"3000:3000", "127.0.0.1:8080:80", "[::1]:9000:9000/tcp"});
    CHECK(o->net == NetChoice{NetMode::none});
  }
  SECTION("volumes: the one holding -w is the workspace, others binds, anonymous ones tmpfs") {
    auto r = parse({"run", "-v", "/srv/a:/a:ro", "-v", "/srv/b:/b", "-v", "/srv/c:/b/c", "-v", "/anon",
                        "--mount", "type=bind,source=/srv/d,target=/d,readonly", "--mount", "type=tmpfs,target=/t,tmpfs-size=1m",
                        "--tmpfs", "/scratch:size=2m", "-w", "/b/c/x", image.path, "true"});
    auto* o = std::get_if<Options>(&r);
    REQUIRE(o);
    CHECK(o->workspace == "/srv/c");
    CHECK(o->workspace_dest == "/b/c");
    CHECK(o->workdir == "/b/c/x");
    CHECK(o->ro_binds == std::vector<std::string>{"/srv/a:/a", "/srv/d:/d"});
    CHECK(o->rw_binds == std::vector<std::string>{"/srv/b:/b"});
    CHECK(o->tmpfs == std::vector<std::string>{"/anon", "/t:size=1m", "/scratch:size=2m"});
  }
  SECTION("a read-only volume holding -w is a read-only workspace; no workdir picks the first read-write one") {
    auto ro = parse({"run", "-v", "/srv/a:/a:ro", "-w", "/a", image.path, "true"});
    REQUIRE(std::holds_alternative<Options>(ro));
    CHECK(std::get<Options>(ro).workspace == "/srv/a");
    CHECK(std::get<Options>(ro).workspace_readonly);
    auto first_rw = parse({"run", "-v", "/srv/a:/a:ro", "-v", "/srv/b:/b", "--rm", image.path, "true"});
    REQUIRE(std::holds_alternative<Options>(first_rw));
    CHECK(std::get<Options>(first_rw).workspace == "/srv/b");
    CHECK(std::get<Options>(first_rw).ro_binds == std::vector<std::string>{"/srv/a:/a"});
    auto outside = parse({"run", "-v", "/srv/b:/b", "-w", "/tmp", image.path, "true"});
    REQUIRE(std::holds_alternative<Options>(outside));
    CHECK(std::get<Options>(outside).no_workspace);
    CHECK(std::get<Options>(outside).rw_binds == std::vector<std::string>{"/srv/b:/b"});
  }
  SECTION("security options") {
    auto r = parse({"run", "--security-opt", "no-new-privileges:true", "--security-opt", "seccomp=/p.toml",
                        "--cap-drop", "NET_RAW", "--rm", image.path, "true"});
    REQUIRE(std::holds_alternative<Options>(r));
    CHECK(std::get<Options>(r).seccomp_file == "/p.toml");
  }
  SECTION("--help exits 0") { CHECK(exit_code(parse({"run", "--help"})) == 0); }
}

// docker takes one value per occurrence of a repeatable flag: `-v A:B IMAGE CMD` names IMAGE, whatever flag
// comes last before it.
TEST_CASE("cli::parse: a repeatable flag just before the image takes one value") {
  ImageDir image;
  const std::string img = image.path;
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"-v", "/srv/a:/a"},
           {"--volume=/srv/a:/a"},
           {"--mount", "type=tmpfs,target=/t"},
           {"-e", "FOO=1"},
           {"--env", "FOO=1"},
           {"--cap-drop", "ALL"},
           {"--cap-drop=ALL"},
           {"--security-opt", "no-new-privileges"},
           {"--security-opt=no-new-privileges"},
           {"--tmpfs", "/scratch"},
       }) {
    std::vector<std::string> line{"run"};
    line.insert(line.end(), flags.begin(), flags.end());
    line.insert(line.end(), {img, "sh", "-c", "true"});
    std::string joined;
    for (const auto& w : line) joined += w + " ";
    INFO(joined);
    auto r = parse_words(line);
    CHECK(std::holds_alternative<Options>(r));
    if (!std::holds_alternative<Options>(r)) continue;
    CHECK(std::get<Options>(r).rootfs == img);
    CHECK(std::get<Options>(r).command == std::vector<std::string>{"sh", "-c", "true"});
  }
}

TEST_CASE("cli::parse: refused run lines exit 125") {
  ImageDir image;
  const std::string img = image.path;
  for (const auto& line : std::vector<std::vector<std::string>>{
           {"run", "-d", img, "true"},
           {"run", "--detach", img, "true"},
           {"run", "-P", img, "true"},
           {"run", "--publish-all", img, "true"},
           {"run", "--privileged", img, "true"},
           {"run", "--cap-add", "SYS_ADMIN", img, "true"},
           {"run", "--cap-add=SYS_ADMIN", img, "true"},
           {"run", "--name", "x", img, "true"},
           {"run", "--frobnicate", img, "true"},
           {"run", "-v", "data:/data", img, "true"},
           {"run", "-v", "/srv:/w:z", img, "true"},
           {"run", "--network", "bridge", img, "true"},
           {"run", "--net=mynet", img, "true"},
           {"run", "--allow", "example.com", img, "true"},
           {"run", "--network", "none", "--allow", "example.com", img, "true"},
           {"run", "--network", "host", "--allow", "example.com", img, "true"},
           {"run", "--security-opt", "seccomp=unconfined", img, "true"},
           {"run", "--security-opt", "no-new-privileges=false", img, "true"},
           {"run", "--security-opt", "apparmor=unconfined", img, "true"},
           {"run", "--user", "alice", img, "true"},
           {"run", "--user", "1000:staff", img, "true"},
           {"run", "--workdir", "rel", img, "true"},
           {"run", "--hostname", "bad name", img, "true"},
           {"run", "--cap-drop", "", img, "true"},
           {"run", "-e", "=x", img, "true"},
           {"run", "--env-file", "/nonexistent/confine.env", img, "true"},
           {"run", "myapp-dev-not-a-directory-here", "bash"},
           {"run", "./no-such-dir", "bash"},
           {"run", img},  // no command
           {"run"},       // no image
       }) {
    std::string joined;
    for (const auto& w : line) joined += w + " ";
    INFO(joined);
    CHECK(exit_code(parse_words(line)) == 125);
  }
  if (::isatty(STDIN_FILENO) == 0) CHECK(exit_code(parse({"run", "-it", img, "true"})) == 125);
}

TEST_CASE("cli::parse: learn takes the sandbox options and the command") {
  auto parsed = parse_words({"learn", "--profile", "npm", "-w", "/tmp", "--", "npm", "install", "--", "x"});
  REQUIRE(std::holds_alternative<Options>(parsed));
  const auto& o = std::get<Options>(parsed);
  CHECK(o.subcommand == Subcommand::learn);
  CHECK(o.profile == "npm");
  CHECK(o.command == std::vector<std::string>{"npm", "install", "--", "x"});
  auto bare = parse_words({"learn", "npx", "x"});
  REQUIRE(std::holds_alternative<Options>(bare));
  CHECK(std::get<Options>(bare).command == std::vector<std::string>{"npx", "x"});
}

TEST_CASE("cli::parse: a subcommand refuses a word it does not take, with exit 125") {
  for (const auto& line : std::vector<std::vector<std::string>>{
           {"probe", "--jsn"},
           {"probe", "extra"},
           {"probe", "--", "extra"},
           {"probe", "explain"},
           {"doctor", "extra"},
           {"doctor", "--net", "none", "--", "true"},
           {"doctor", "probe"},
           {"checkpoints", "restore", "X", "Y"},
           {"checkpoints", "list", "extra"},
           {"checkpoints", "bogus"},
           {"checkpoints", "--force"},
           {"explain", "--jsn", "--", "true"},
           {"learn", "--json", "--", "true"},
           {"--jsn", "--", "true"},
       }) {
    std::string joined;
    for (const auto& w : line) joined += w + " ";
    INFO(joined);
    CHECK(exit_code(parse_words(line)) == 125);
  }
  // What each takes still parses.
  for (const auto& line : std::vector<std::vector<std::string>>{
           {"probe", "--json"}, {"doctor", "--net", "none"}, {"checkpoints", "-w", "/tmp"},
           {"checkpoints", "restore", "latest", "--force"}, {"checkpoints", "list", "-w", "/tmp"},
           {"explain", "--json", "--", "probe"}, {"explain", "probe"}, {"--", "probe"}, {"learn", "--", "npm", "i"}}) {
    std::string joined;
    for (const auto& w : line) joined += w + " ";
    INFO(joined);
    auto parsed = parse_words(line);
    REQUIRE(std::holds_alternative<Options>(parsed));
  }
  auto explained = std::get<Options>(parse_words({"explain", "probe", "--json"}));
  CHECK(explained.subcommand == Subcommand::explain);
  CHECK(explained.command == std::vector<std::string>{"probe", "--json"});
}
