#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>

#include "core/plan.h"

using namespace confine;

namespace {

Policy sample_policy() {
  Policy p;
  p.fs.workspace = "/tmp/project";
  p.fs.workspace_inside = p.fs.workspace;
  p.fs.home = "/home/alice";
  p.fs.binds = {{"/srv/data", "/data", false, false}};
  p.fs.masks = {"/tmp/project/extra.json"};
  p.proc.argv = {"true"};
  p.proc.workdir = p.fs.workspace;
  return p;
}

PlanInputs sample_inputs() {
  PlanInputs in;
  in.system = {{"/usr", "", "/usr"}, {"/bin", "usr/bin", "/bin"}, {"/etc", "", "/etc"}};
  in.secrets.masks = {{".env", 11, S_IFREG}, {"secrets", 12, S_IFDIR}};
  in.git.dir = in.git.hooks = in.git.config = true;
  return in;
}

template <typename Step, typename Kind>
std::size_t index_of(const std::vector<Step>& steps, Kind kind) {
  auto it = std::find_if(steps.begin(), steps.end(), [&](const Step& s) { return s.kind == kind; });
  REQUIRE(it != steps.end());
  return static_cast<std::size_t>(it - steps.begin());
}

template <typename Step, typename Kind>
std::size_t last_index_of(const std::vector<Step>& steps, Kind kind) {
  std::size_t found = steps.size();
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == kind) found = i;
  REQUIRE(found != steps.size());
  return found;
}

std::size_t mount_index(const Plan& plan, const std::string& dest) {
  for (std::size_t i = 0; i < plan.mounts.size(); ++i)
    if (plan.mounts[i].dest == dest) return i;
  FAIL("no mount at " << dest);
  return 0;
}

}  // namespace

TEST_CASE("init steps run in the fixed order") {
  auto plan = make_plan(sample_policy(), sample_inputs());
  const auto& s = plan.init_steps;
  CHECK(s.front().kind == InitStepKind::set_ids);
  CHECK(s[1].kind == InitStepKind::check_ids);  // a switch that silently did nothing stops the run
  CHECK(index_of(s, InitStepKind::make_mounts_private) < index_of(s, InitStepKind::clone_source));
  CHECK(last_index_of(s, InitStepKind::clone_source) < index_of(s, InitStepKind::create_root));
  CHECK(index_of(s, InitStepKind::create_root) < index_of(s, InitStepKind::attach));
  CHECK(last_index_of(s, InitStepKind::attach) < index_of(s, InitStepKind::pivot_root));
  CHECK(index_of(s, InitStepKind::pivot_root) < index_of(s, InitStepKind::seal_root));
  CHECK(index_of(s, InitStepKind::loopback_up) < index_of(s, InitStepKind::drop_capabilities));
  CHECK(index_of(s, InitStepKind::set_hostname) < index_of(s, InitStepKind::drop_capabilities));
  CHECK(index_of(s, InitStepKind::close_inherited_fds) < index_of(s, InitStepKind::drop_capabilities));
  CHECK(index_of(s, InitStepKind::drop_capabilities) < index_of(s, InitStepKind::no_new_privs));
  CHECK(s.back().kind == InitStepKind::not_dumpable);
  CHECK(plan.command_steps.back().kind == CommandStepKind::exec);
}

TEST_CASE("every mount is attached exactly once, and every bind cloned before the root exists") {
  auto plan = make_plan(sample_policy(), sample_inputs());
  std::vector<int> attached(plan.mounts.size(), 0);
  for (const auto& st : plan.init_steps)
    if (st.kind == InitStepKind::attach) ++attached[st.mount];
  CHECK(std::all_of(attached.begin(), attached.end(), [](int n) { return n == 1; }));
  for (std::size_t i = 0; i < plan.mounts.size(); ++i)
    if (plan.mounts[i].kind == MountKind::bind) {
      bool cloned = std::any_of(plan.init_steps.begin(), plan.init_steps.end(),
                                [&](const InitStep& st) { return st.kind == InitStepKind::clone_source && st.mount == i; });
      CHECK(cloned);
    }
}

TEST_CASE("parents are mounted before what lies below them") {
  auto plan = make_plan(sample_policy(), sample_inputs());
  CHECK(mount_index(plan, "/tmp") < mount_index(plan, "/tmp/project"));
  CHECK(mount_index(plan, "/dev") < mount_index(plan, "/dev/pts"));
  CHECK(mount_index(plan, "/home") < mount_index(plan, "/home/alice"));
  // Masks and git protection come after the workspace they live in.
  CHECK(mount_index(plan, "/tmp/project") < mount_index(plan, ".env"));
  CHECK(mount_index(plan, "/tmp/project") < mount_index(plan, ".git/hooks"));
}

TEST_CASE("the filesystem view: system read-only, home a private tmpfs, secrets masked") {
  auto plan = make_plan(sample_policy(), sample_inputs());
  const auto& usr = plan.mounts[mount_index(plan, "/usr")];
  CHECK(usr.kind == MountKind::bind);
  CHECK(usr.read_only);
  CHECK(plan.mounts[mount_index(plan, "/bin")].kind == MountKind::symlink);
  CHECK(plan.mounts[mount_index(plan, "/home/alice")].kind == MountKind::tmpfs);
  const auto& ws = plan.mounts[mount_index(plan, "/tmp/project")];
  CHECK(ws.kind == MountKind::bind);
  CHECK_FALSE(ws.read_only);
  const auto& env = plan.mounts[mount_index(plan, ".env")];
  CHECK(env.kind == MountKind::mask);
  CHECK(env.beneath == "/tmp/project");
  CHECK(plan.mounts[mount_index(plan, "secrets")].kind == MountKind::mask);
  const auto& user_mask = plan.mounts[mount_index(plan, "/tmp/project/extra.json")];
  CHECK(user_mask.kind == MountKind::mask);
  CHECK(user_mask.beneath.empty());
  CHECK_FALSE(user_mask.skip_if_missing);  // a mask whose file was moved away fails the start, never skipped
  CHECK(plan.mounts[mount_index(plan, ".git/config")].kind == MountKind::rebind);
  CHECK(plan.mounts[mount_index(plan, ".git/config")].read_only);
  CHECK(plan.mounts[mount_index(plan, ".git/hooks")].read_only);
  CHECK_FALSE(plan.mounts[mount_index(plan, ".git")].read_only);
  CHECK(mount_index(plan, ".git") < mount_index(plan, ".git/hooks"));
  CHECK(plan.mounts[mount_index(plan, "/data")].read_only);
}

TEST_CASE("the secrets found in a scanned bind are masked beneath it, after it is mounted") {
  auto in = sample_inputs();
  SecretScan found;
  found.masks = {{"conf/.env", 21, S_IFREG}, {"locked", 22, S_IFDIR}, {"secrets", 23, S_IFDIR}};
  in.bind_secrets.push_back({"/data", found});
  auto plan = make_plan(sample_policy(), in);
  for (const char* rel : {"conf/.env", "secrets", "locked"}) {
    auto it = std::find_if(plan.mounts.begin(), plan.mounts.end(),
                           [&](const MountOp& m) { return m.beneath == "/data" && m.dest == rel; });
    REQUIRE(it != plan.mounts.end());
    CHECK(it->kind == MountKind::mask);
    CHECK(static_cast<std::size_t>(it - plan.mounts.begin()) > mount_index(plan, "/data"));
  }
  CHECK(std::none_of(plan.mounts.begin(), plan.mounts.end(),
                     [](const MountOp& m) { return m.kind == MountKind::mask && m.dest.empty(); }));
}

TEST_CASE("a scanned bind's secrets under a deeper private or scanned tree are not masked: that tree shows instead") {
  auto p = sample_policy();
  p.fs.binds.push_back({"/home", "/home", false, false});  // --ro of the parent of $HOME and of nothing else
  auto in = sample_inputs();
  SecretScan found;
  found.masks = {{"alice/.ssh/id_rsa", 41, S_IFREG}, {"bob/.ssh/id_rsa", 42, S_IFREG}};
  in.bind_secrets.push_back({"/home", found});
  auto plan = make_plan(p, in);
  auto masked = [&](const char* rel) {
    return std::any_of(plan.mounts.begin(), plan.mounts.end(),
                       [&](const MountOp& m) { return m.kind == MountKind::mask && m.beneath == "/home" && m.dest == rel; });
  };
  CHECK_FALSE(masked("alice/.ssh/id_rsa"));  // below the sandbox's own $HOME (a tmpfs): the host file never shows
  CHECK(masked("bob/.ssh/id_rsa"));          // another user's home shows through the bind: masked
}

TEST_CASE("a scan's masks name what the scan saw and are never skipped when missing") {
  auto in = sample_inputs();
  in.secrets.masks.push_back({"cfg", 31, S_IFDIR});
  in.secrets.masks.push_back({".env.local", 32, S_IFLNK});
  auto plan = make_plan(sample_policy(), in);
  const auto& cfg = plan.mounts[mount_index(plan, "cfg")];
  CHECK(cfg.kind == MountKind::mask);
  CHECK(cfg.beneath == "/tmp/project");
  CHECK(cfg.expect_ino == 31);
  CHECK(cfg.expect_type == S_IFDIR);
  const auto& link = plan.mounts[mount_index(plan, ".env.local")];
  CHECK(link.expect_type == S_IFLNK);
  // A secret gone at mount time moved: the start fails rather than run with it readable at its new name.
  CHECK(std::none_of(plan.mounts.begin(), plan.mounts.end(),
                     [](const MountOp& m) { return m.kind == MountKind::mask && !m.beneath.empty() && m.skip_if_missing; }));
}

TEST_CASE("--allow-git-config and --net host change the plan") {
  auto policy = sample_policy();
  policy.fs.protect_git = false;
  policy.net = NetMode::host;
  auto plan = make_plan(policy, sample_inputs());
  CHECK(std::none_of(plan.mounts.begin(), plan.mounts.end(), [](const MountOp& m) { return m.kind == MountKind::rebind; }));
  CHECK_FALSE(plan.new_netns);
  CHECK(std::none_of(plan.init_steps.begin(), plan.init_steps.end(),
                     [](const InitStep& s) { return s.kind == InitStepKind::loopback_up; }));
}

TEST_CASE("run by root, user binds are prepared by the parent") {
  auto policy = sample_policy();
  policy.ids.run_by_root = true;
  auto plan = make_plan(policy, sample_inputs());
  CHECK(plan.mounts[mount_index(plan, "/tmp/project")].from_parent);
  CHECK(plan.mounts[mount_index(plan, "/data")].from_parent);
  CHECK_FALSE(plan.mounts[mount_index(plan, "/usr")].from_parent);
}

TEST_CASE("every step has a description for error messages") {
  auto plan = make_plan(sample_policy(), sample_inputs());
  for (const auto& s : plan.init_steps) CHECK_FALSE(describe(plan, s).empty());
  CHECK(describe(plan, plan.command_steps.back()) == "execute `true`");
}

TEST_CASE("a mount point that cannot exist below a read-only system directory is refused up front") {
  auto policy = sample_policy();
  std::vector<SystemEntry> system = {{"/usr", "", "/usr"}, {"/opt", "", "/opt"}};
  policy.fs.binds = {{"/srv/data", "/opt/confine-no-such-dir", false, false}};
  auto s = check_mount_points(policy, system);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message().find("read-only `/opt`") != std::string::npos);
  policy.fs.binds = {{"/srv/data", "/data", false, false}, {"/srv/data", "/usr/bin", false, false}};
  CHECK(check_mount_points(policy, system).ok());
}

TEST_CASE("a profile's copy is a new file written into the sandbox's own home, after the home exists") {
  auto p = sample_policy();
  p.fs.copies = {"/home/alice/.tool/config.toml"};
  auto in = sample_inputs();
  in.copies = {{"/home/alice/.tool/config.toml", "model = \"x\"\n"}};
  auto plan = make_plan(p, in);
  const auto& copy = plan.mounts[mount_index(plan, "/home/alice/.tool/config.toml")];
  CHECK(copy.kind == MountKind::copy);
  CHECK(copy.content == "model = \"x\"\n");
  CHECK(mount_index(plan, "/home/alice") < mount_index(plan, "/home/alice/.tool/config.toml"));
}

TEST_CASE("fallback mode: root's switch to --user's ids is checked before anything else") {
  auto policy = sample_policy();
  policy.ids.run_by_root = true;
  policy.protection.request.switch_user = true;
  auto in = sample_inputs();
  in.mode = Mode::fallback;
  auto plan = make_plan(policy, in);
  CHECK(index_of(plan.init_steps, InitStepKind::check_ids) == index_of(plan.init_steps, InitStepKind::set_ids) + 1);
  CHECK(index_of(plan.init_steps, InitStepKind::check_ids) < index_of(plan.init_steps, InitStepKind::drop_capabilities));
}

TEST_CASE("the default process bound: RLIMIT_NPROC in full mode without --pids, never in fallback mode") {
  auto nproc = [](const Plan& plan) {
    std::optional<std::uint64_t> found;
    for (const auto& [resource, value] : plan.rlimits)
      if (resource == RLIMIT_NPROC) found = value;
    return found;
  };
  auto policy = sample_policy();
  auto full = make_plan(policy, sample_inputs());
  CHECK(nproc(full) == kDefaultPids);
  CHECK(index_of(full.command_steps, CommandStepKind::set_rlimits) < index_of(full.command_steps, CommandStepKind::exec));
  auto in = sample_inputs();
  in.mode = Mode::fallback;
  CHECK_FALSE(nproc(make_plan(policy, in)));  // it would count the host uid's every process
  policy.limits.pids = 64;  // --pids: a cgroup's pids.max, or with --best-effort the stand-in
  CHECK_FALSE(nproc(make_plan(policy, sample_inputs())));
  in = sample_inputs();
  in.rlimit_stand_ins = true;
  CHECK(nproc(make_plan(policy, in)) == 64u);
}

TEST_CASE("fallback mode: the command's $HOME and $TMPDIR are the run's own directory's") {
  auto policy = sample_policy();
  policy.proc.env = {"HOME=/root", "PATH=/usr/bin", "TMPDIR=/tmp"};
  auto in = sample_inputs();
  in.mode = Mode::fallback;
  in.run_dir = "/tmp/confine-abc123";
  auto env = make_plan(policy, in).env;
  CHECK(env == std::vector<std::string>{"HOME=/tmp/confine-abc123/home", "PATH=/usr/bin", "TMPDIR=/tmp/confine-abc123/tmp"});
  policy.proc.env = {"PATH=/usr/bin"};  // set even where the caller had none
  env = make_plan(policy, in).env;
  CHECK(env == std::vector<std::string>{"PATH=/usr/bin", "HOME=/tmp/confine-abc123/home", "TMPDIR=/tmp/confine-abc123/tmp"});
  // Full mode: its own tmpfs home, and the file it reads its refusals in.
  CHECK(make_plan(policy, sample_inputs()).env == std::vector<std::string>{"PATH=/usr/bin", "CONFINE_DENIALS=/run/confine/denials.jsonl"});
}

TEST_CASE("the caller's terminal: at its own /dev/pts name in the sandbox's devpts, and at /dev/console") {
  auto named = [](const std::string& terminal) {
    auto in = sample_inputs();
    in.terminal = terminal;
    std::vector<std::pair<std::string, int>> out;
    for (const auto& m : make_plan(sample_policy(), in).mounts)
      if (m.kind == MountKind::bind && m.source == terminal) out.emplace_back(m.dest, m.devpts_index);
    return out;
  };
  using Names = std::vector<std::pair<std::string, int>>;
  CHECK(named("/dev/pts/7") == Names{{"/dev/pts/7", 7}, {"/dev/console", -1}});
  CHECK(named("/dev/pts/255") == Names{{"/dev/pts/255", 255}, {"/dev/console", -1}});
  CHECK(named("/dev/pts/256") == Names{{"/dev/console", -1}});  // past what pid 1 opens to reach it
  CHECK(named("/dev/tty1") == Names{{"/dev/console", -1}});
  CHECK(named("/dev/pts/1x") == Names{{"/dev/console", -1}});
  auto in = sample_inputs();
  in.terminal = "/dev/pts/7";
  auto plan = make_plan(sample_policy(), in);
  CHECK(mount_index(plan, "/dev/pts") < mount_index(plan, "/dev/pts/7"));  // the devpts that holds the name first
}

TEST_CASE("--net proxy: names are confine's to answer, through its own resolv.conf and hosts, not the host's") {
  auto policy = sample_policy();
  policy.net = NetMode::proxy;
  auto plan = make_plan(policy, sample_inputs());
  const auto& resolv = plan.mounts[mount_index(plan, "/etc/resolv.conf")];
  CHECK(resolv.kind == MountKind::file);
  CHECK(resolv.read_only);
  CHECK(resolv.content.find(std::string("nameserver ") + kDnsStubAddress + "\n") != std::string::npos);
  const auto& hosts = plan.mounts[mount_index(plan, "/etc/hosts")];
  CHECK(hosts.kind == MountKind::file);
  CHECK(hosts.content.find("127.0.0.1\tlocalhost\n") != std::string::npos);
  CHECK(hosts.content.find("\tconfine\n") != std::string::npos);
  // After the /etc bind, which they cover; before the user's own mounts, which may cover them.
  CHECK(mount_index(plan, "/etc") < mount_index(plan, "/etc/resolv.conf"));
  CHECK(mount_index(plan, "/etc/hosts") < mount_index(plan, "/data"));
  CHECK(std::any_of(plan.listeners.begin(), plan.listeners.end(), [](const Listener& l) {
    return l.service == Listener::Service::dns && l.place == Listener::Place::sandbox_loopback && l.port == 53;
  }));
  CHECK(plan.sandbox_sockets);
  CHECK(index_of(plan.parent_steps, ParentStepKind::start_socket_maker) < index_of(plan.parent_steps, ParentStepKind::send_go));

  // A file the user binds there is theirs: confine's does not go under it (nothing stacks at that name).
  policy.fs.binds.push_back({"/srv/resolv.conf", "/etc/resolv.conf", false, true});
  auto own = make_plan(policy, sample_inputs());
  CHECK(own.mounts[mount_index(own, "/etc/resolv.conf")].kind == MountKind::bind);
  CHECK(std::count_if(own.mounts.begin(), own.mounts.end(), [](const MountOp& m) { return m.dest == "/etc/resolv.conf"; }) == 1);

  policy.net = NetMode::none;
  auto none = make_plan(policy, sample_inputs());
  CHECK(std::none_of(none.mounts.begin(), none.mounts.end(),
                     [](const MountOp& m) { return m.kind == MountKind::file && !m.written_by_confine; }));
  CHECK_FALSE(none.sandbox_sockets);
}

TEST_CASE("a container's stand-ins: its /proc bound with its masks, no hostname step, root as the trees' owner") {
  auto p = sample_policy();
  p.ids.run_by_root = true;
  p.ids.inside_uid = p.ids.inside_gid = 1000;
  p.ids.host_uid = p.ids.host_gid = 65534;
  auto in = sample_inputs();
  auto plain = make_plan(p, in);
  auto from_parent = [](const Plan& plan) {
    return std::any_of(plan.mounts.begin(), plan.mounts.end(), [](const MountOp& m) { return m.from_parent; });
  };
  CHECK(from_parent(plain));  // root: idmapped binds made by the parent
  in.stand_ins = {true, true, true};
  auto plan = make_plan(p, in);
  auto proc = std::find_if(plan.mounts.begin(), plan.mounts.end(), [](const MountOp& m) { return m.dest == "/proc"; });
  REQUIRE(proc != plan.mounts.end());
  CHECK(proc->kind == MountKind::bind);
  CHECK(proc->source == "/proc");
  CHECK(proc->recursive);  // the container's masks come with it
  CHECK(proc->read_only);  // the container's processes' files (oom_score_adj) are the sandbox user's too
  CHECK(std::none_of(plan.init_steps.begin(), plan.init_steps.end(),
                     [](const InitStep& s) { return s.kind == InitStepKind::set_hostname; }));
  CHECK_FALSE(from_parent(plan));  // pid 1 binds them itself, as for a user's sandbox
  CHECK(plan.ids.host_uid == 1000);     // the sandbox's user is the trees' owner on the host too
  CHECK(std::none_of(plan.parent_steps.begin(), plan.parent_steps.end(),
                     [](const ParentStep& s) { return s.kind == ParentStepKind::open_idmapped_trees; }));
}

TEST_CASE("a variable that holds a --secret's real value never reaches the command; HOME and the rest do") {
  auto p = sample_policy();
  p.proc.env = {"PATH=/usr/bin", "MY_REAL_KEY=sk-real", "HOME=/home/u", "AUTH=Bearer sk-real"};
  auto in = sample_inputs();
  in.env_holding_secrets = {"MY_REAL_KEY", "AUTH"};
  auto plan = make_plan(p, in);
  for (const auto* gone : {"MY_REAL_KEY=", "AUTH="})
    CHECK(std::none_of(plan.env.begin(), plan.env.end(), [&](const std::string& e) { return e.starts_with(gone); }));
  CHECK(std::find(plan.env.begin(), plan.env.end(), "PATH=/usr/bin") != plan.env.end());
  CHECK(std::find(plan.env.begin(), plan.env.end(), "HOME=/home/u") != plan.env.end());
}
