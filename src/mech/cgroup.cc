#include "mech/cgroup.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "mech/systemd_scope.h"
#include "sys/log.h"

namespace confine::mech {
namespace {

using sys::errno_error;
using sys::plain_error;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// 0 on success, else the errno: cgroup files report refusals at write().
int write_text(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size()) ? 0 : errno;
  ::close(fd);
  return err;
}

// "key value" lines (memory.events, cpu.stat): the value of `key`, 0 if absent.
std::uint64_t keyed_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string k, v; in >> k >> v;)
    if (k == key) {
      std::uint64_t n = 0;
      std::from_chars(v.data(), v.data() + v.size(), n);
      return n;
    }
  return 0;
}

std::uint64_t number_in(const std::string& path) {
  auto t = read_text(path);
  std::uint64_t n = 0;
  std::from_chars(t.data(), t.data() + t.size(), n);
  return n;
}

struct MountEntry {
  std::string point;
  std::string fstype;
  std::string super_options;
};

std::vector<MountEntry> cgroup_mounts() {
  std::ifstream in("/proc/self/mountinfo");
  std::vector<MountEntry> out;
  for (std::string line; std::getline(in, line);) {
    auto sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    auto before = words(line.substr(0, sep));
    auto after = words(line.substr(sep + 3));
    if (before.size() < 5 || after.size() < 3 || !after[0].starts_with("cgroup")) continue;
    out.push_back({before[4], after[0], after[2]});
  }
  return out;
}

bool has_all(const std::string& controllers_file, const std::vector<std::string>& wanted) {
  auto have = words(read_text(controllers_file));
  return std::all_of(wanted.begin(), wanted.end(), [&](const auto& c) { return std::find(have.begin(), have.end(), c) != have.end(); });
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Why the unified hierarchy lacks these controllers: usually a hybrid host that binds them to cgroup v1.
std::string missing_controllers_problem(const std::vector<std::string>& missing, const std::vector<MountEntry>& mounts) {
  std::vector<std::string> on_v1;
  for (const auto& c : missing)
    for (const auto& m : mounts) {
      if (m.fstype != "cgroup") continue;
      auto options = m.super_options;
      std::replace(options.begin(), options.end(), ',', ' ');
      auto o = words(options);
      if (std::find(o.begin(), o.end(), c) != o.end()) on_v1.push_back(c + " (at " + m.point + ")");
    }
  if (!on_v1.empty())
    return "cgroup v2 here has no " + joined(missing, ", ") + " controller: this host binds " + joined(on_v1, ", ") +
           " to cgroup v1 (a hybrid hierarchy), which confine does not use; boot with "
           "systemd.unified_cgroup_hierarchy=1 (cgroup v2 only) to get limits";
  return "cgroup v2 here does not offer the " + joined(missing, ", ") + " controller (not in cgroup.controllers at the root)";
}

bool writable(const std::string& path) { return ::access(path.c_str(), W_OK) == 0; }

std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

// Only this process in `dir`: moving it out leaves the cgroup free to hand controllers down.
bool alone_in(const std::string& dir) {
  auto pids = words(read_text(dir + "/cgroup.procs"));
  return pids.size() == 1 && pids[0] == std::to_string(::getpid());
}

int enable_controllers(const std::string& dir, const std::vector<std::string>& controllers) {
  if (has_all(dir + "/cgroup.subtree_control", controllers)) return 0;
  std::string line;
  for (const auto& c : controllers) line += (line.empty() ? "+" : " +") + c;
  return write_text(dir + "/cgroup.subtree_control", line);
}

bool populated(int events_fd) {
  char buf[256];
  auto n = ::pread(events_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  return keyed_value(buf, "populated") != 0;
}

// Kills whatever is left in a leaf and removes it. cgroup.kill (Linux 5.14) takes forks in flight too; before
// it, a few rounds over cgroup.procs. Usually the leaf is already empty: the sandbox has exited.
void kill_and_remove(const std::string& leaf) {
  sys::UniqueFd events(::open((leaf + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC));
  if (!events.valid()) return;
  if (populated(events.get()) && write_text(leaf + "/cgroup.kill", "1") != 0)
    for (int round = 0; round < 10; ++round) {
      auto pids = words(read_text(leaf + "/cgroup.procs"));
      if (pids.empty()) break;
      for (const auto& p : pids) ::kill(std::stoi(p), SIGKILL);
    }
  // Killed processes leave the cgroup asynchronously; cgroup.events signals POLLPRI when "populated" changes,
  // so the wait ends the moment the last one has gone (2 s at most).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (populated(events.get()) && std::chrono::steady_clock::now() < deadline) {
    struct pollfd p {events.get(), POLLPRI, 0};
    ::poll(&p, 1, 50);
  }
  ::rmdir(leaf.c_str());
}

// Leaves named after a confine that no longer runs (killed with SIGKILL, or crashed) are removed.
void remove_stale_leaves(const std::string& parent) {
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (auto* e = ::readdir(d)) {
    std::string_view name(e->d_name);
    if (!name.starts_with("confine-")) continue;
    int pid = 0;
    auto [end, ec] = std::from_chars(name.data() + 8, name.data() + name.size(), pid);
    if (ec != std::errc{} || end != name.data() + name.size() || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) stale.emplace_back(parent + "/" + std::string(name));
  }
  ::closedir(d);
  for (const auto& leaf : stale) kill_and_remove(leaf);
}

// Every controller some limit needs: those of limits with each one set.
std::vector<std::string> every_limit_controller() {
  ResourceLimits every;
  every.memory = 1;
  every.pids = 1;
  every.cpus = 1.0;
  return needed_controllers(every);
}

// sd_bus_open_user's own lookup: $DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus.
bool user_bus_reachable(const CallerEnvironment& caller) {
  if (!caller.session_bus.empty()) return true;
  return !caller.xdg_runtime_dir.empty() && ::access((caller.xdg_runtime_dir + "/bus").c_str(), W_OK) == 0;
}

}  // namespace

std::string own_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("0::")) return line.substr(3);
  return {};
}

sys::Result<CgroupPlace> find_cgroup_place(const std::vector<std::string>& controllers, const CallerEnvironment& caller) {
  auto mounts = cgroup_mounts();
  auto v2 = std::find_if(mounts.begin(), mounts.end(), [](const auto& m) { return m.fstype == "cgroup2"; });
  if (v2 == mounts.end()) return plain_error("no cgroup v2 hierarchy is mounted here");
  const std::string root = v2->point;
  std::vector<std::string> missing;
  for (const auto& c : controllers)
    if (!has_all(root + "/cgroup.controllers", {c})) missing.push_back(c);
  if (!missing.empty()) return plain_error(missing_controllers_problem(missing, mounts));
  if (::geteuid() == 0) return CgroupPlace{CgroupPlaceKind::root, root + "/confine.slice", ""};
  auto self = own_cgroup();
  if (self.empty()) return plain_error("this process is in no cgroup v2 cgroup (/proc/self/cgroup has no 0:: line)");
  auto dir = self == "/" ? root : root + self;
  if (self != "/" && writable(dir) && writable(dir + "/cgroup.procs") && writable(dir + "/cgroup.subtree_control") &&
      has_all(dir + "/cgroup.controllers", controllers) && alone_in(dir))
    return CgroupPlace{CgroupPlaceKind::delegated, dir, dir + "/supervisor"};
  auto parent = parent_of(dir);
  if (self != "/" && parent.size() > root.size() && writable(parent) && writable(parent + "/cgroup.procs") &&
      has_all(parent + "/cgroup.controllers", controllers) &&
      (has_all(parent + "/cgroup.subtree_control", controllers) || writable(parent + "/cgroup.subtree_control")))
    return CgroupPlace{CgroupPlaceKind::sibling, parent, ""};
  if (user_bus_reachable(caller)) return CgroupPlace{CgroupPlaceKind::systemd, "", ""};
  return plain_error("no cgroup v2 subtree is delegated to you here (confine runs in " + self +
                     ", which you may not manage) and no systemd user manager answers on $XDG_RUNTIME_DIR/bus; run "
                     "it under `systemd-run --user --scope -p Delegate=yes`, or as root");
}

CgroupControllers usable_cgroup_controllers(const CallerEnvironment& caller) {
  CgroupControllers out;
  auto mounts = cgroup_mounts();
  auto v2 = std::find_if(mounts.begin(), mounts.end(), [](const auto& m) { return m.fstype == "cgroup2"; });
  if (v2 != mounts.end()) out.mount = v2->point;
  for (const auto& c : every_limit_controller()) (find_cgroup_place({c}, caller) ? out.usable : out.missing).push_back(c);
  if (!out.missing.empty())
    if (auto together = find_cgroup_place(out.missing, caller); !together) out.problem = together.error().message();
  return out;
}

sys::Result<SandboxCgroup> SandboxCgroup::create(const CgroupPlace& requested, const ResourceLimits& limits,
                                                  const CallerEnvironment& caller) {
  auto controllers = needed_controllers(limits);
  CgroupPlace place = requested;
  if (place.kind == CgroupPlaceKind::systemd) {
    // The user's manager makes a delegated scope for this process; from then on it is the "delegated" case.
    if (auto s = move_into_transient_scope(); !s) return s.error();
    auto delegated = find_cgroup_place(controllers, caller);
    if (!delegated) return delegated.error();
    if (delegated->kind != CgroupPlaceKind::delegated)
      return plain_error(std::string("cgroup: systemd's scope for confine is not delegated to it (found: ") +
                         cgroup_place_name(delegated->kind) + ")");
    place = *delegated;
  }
  if (place.kind == CgroupPlaceKind::root) {
    // The cgroup2 root is exempt from the no-internal-processes rule: controllers can always be enabled there.
    if (::mkdir(place.parent.c_str(), 0755) != 0 && errno != EEXIST) return errno_error("cgroup: mkdir " + place.parent);
    if (int err = enable_controllers(parent_of(place.parent), controllers); err != 0)
      return sys::Error{"cgroup: enabling " + joined(controllers, " ") + " at the root", err};
  } else if (!place.supervisor.empty()) {
    // A cgroup with processes in it cannot hand controllers to children: confine steps into a leaf of its own.
    if (::mkdir(place.supervisor.c_str(), 0755) != 0 && errno != EEXIST) return errno_error("cgroup: mkdir " + place.supervisor);
    if (int err = write_text(place.supervisor + "/cgroup.procs", std::to_string(::getpid())); err != 0)
      return sys::Error{"cgroup: moving confine into " + place.supervisor, err};
  }
  if (int err = enable_controllers(place.parent, controllers); err != 0)
    return sys::Error{"cgroup: enabling " + joined(controllers, " ") + " in " + place.parent, err};
  remove_stale_leaves(place.parent);
  auto leaf = place.parent + "/confine-" + std::to_string(::getpid());
  if (::mkdir(leaf.c_str(), 0755) != 0) return errno_error("cgroup: mkdir " + leaf);
  for (const auto& s : cgroup_settings(limits)) {
    int err = write_text(leaf + "/" + s.file, s.value);
    if (err == ENOENT && s.file == "memory.swap.max") {
      log::warn("this kernel does not account swap (no memory.swap.max): the memory limit does not cover swap");
      continue;
    }
    if (err != 0) {
      ::rmdir(leaf.c_str());
      return sys::Error{"cgroup: writing `" + s.value + "` to " + leaf + "/" + s.file, err};
    }
  }
  sys::UniqueFd dir(::open(leaf.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    int err = errno;
    ::rmdir(leaf.c_str());
    return sys::Error{"cgroup: open " + leaf, err};
  }
  return SandboxCgroup(leaf, std::move(dir));
}

SandboxCgroup::SandboxCgroup(SandboxCgroup&& other) noexcept
    : path_(std::exchange(other.path_, {})), dir_(std::move(other.dir_)) {}

SandboxCgroup::~SandboxCgroup() {
  if (path_.empty()) return;
  dir_.reset();
  kill_and_remove(path_);
}

CgroupUsage SandboxCgroup::usage(bool full) const {
  CgroupUsage u;
  u.oom_kills = keyed_value(read_text(path_ + "/memory.events"), "oom_kill");
  u.pids_denied = keyed_value(read_text(path_ + "/pids.events"), "max");
  if (full || u.oom_kills > 0) u.memory_peak = number_in(path_ + "/memory.peak");
  if (!full) return u;
  u.pids_peak = number_in(path_ + "/pids.peak");
  u.cpu_usec = keyed_value(read_text(path_ + "/cpu.stat"), "usage_usec");
  return u;
}

}  // namespace confine::mech
