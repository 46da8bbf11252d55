#include "mech/probe.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/landlock_rules.h"
#include "mech/cgroup.h"
#include "mech/container.h"
#include "mech/landlock.h"
#include "sys/syscalls.h"

namespace confine::mech {
namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// `filtered`: a filter is on this process already (PR_GET_SECCOMP says 2).
bool seccomp_filter_supported(std::string& problem, bool& filtered) {
  int mode = ::prctl(PR_GET_SECCOMP);
  filtered = mode == 2;
  if (mode < 0) {
    problem = "this kernel has no seccomp (CONFIG_SECCOMP)";
    return false;
  }
  std::uint32_t action = SECCOMP_RET_ERRNO;
  if (sys::seccomp_action_available(action) != 0) {
    problem = std::string("seccomp filters are unavailable (CONFIG_SECCOMP_FILTER): ") + std::strerror(errno);
    return false;
  }
  return true;
}

// In the throwaway child: map ourselves, then mount a tmpfs, the first thing an AppArmor-restricted or
// seccomp-restricted user namespace refuses.
[[noreturn]] void userns_trial_child(uid_t uid, gid_t gid) {
  auto write_file = [](const char* path, const std::string& text) {
    int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (fd >= 0) ::close(fd);
    return ok;
  };
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) _exit(10);
  if (!write_file("/proc/self/setgroups", "deny") ||
      !write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
      !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1"))
    _exit(11);
  if (sys::make_mounts_private() != 0) _exit(12);
  if (sys::mount("tmpfs", "/tmp", "tmpfs", 0, nullptr) != 0) _exit(13);
  _exit(0);
}

}  // namespace

KernelFeatures probe_cheap() {
  KernelFeatures f;
  const char* reason = nullptr;
  f.landlock_abi = probe_landlock_abi(&reason);
  if (reason != nullptr) f.landlock_problem = reason;
  f.seccomp = seccomp_filter_supported(f.seccomp_problem, f.seccomp_filtered);
  return f;
}

std::string diagnose_userns(int clone_errno) {
  if (read_first_line("/proc/sys/user/max_user_namespaces") == "0")
    return "user namespaces are disabled: user.max_user_namespaces=0 (fix: sysctl -w user.max_user_namespaces=15000)";
  if (read_first_line("/proc/sys/kernel/unprivileged_userns_clone") == "0")
    return "unprivileged user namespaces are disabled: kernel.unprivileged_userns_clone=0 (fix: sysctl -w "
           "kernel.unprivileged_userns_clone=1)";
  if (read_first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1")
    return "AppArmor restricts unprivileged user namespaces: kernel.apparmor_restrict_unprivileged_userns=1 (fix: "
           "install confine's AppArmor profile, which grants `userns` to /usr/bin/confine, or sysctl -w "
           "kernel.apparmor_restrict_unprivileged_userns=0)";
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("Seccomp:") && line.find('2') != std::string::npos)
      return "a seccomp filter on this process (a container runtime's, probably) refuses new namespaces (fix: run "
             "the container with a profile that allows unshare/clone of namespaces, or use --no-namespaces "
             "--best-effort)";
  return std::string("creating user namespaces failed: ") + std::strerror(clone_errno);
}

bool try_user_namespace(std::string& problem) {
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  pid_t pid = ::fork();
  if (pid < 0) {
    problem = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) userns_trial_child(uid, gid);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  problem = diagnose_userns(code == 10 ? EPERM : EACCES);
  return false;
}

namespace {

std::string comma_list(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// Not "is cgroup v2 mounted" but "which limits would work": a hybrid host mounts it with no controller in it.
ProbeRow cgroup_row(const CallerEnvironment& caller) {
  auto c = usable_cgroup_controllers(caller);
  ProbeRow row{"cgroup-v2", "", "", ProbeRow::Controllers{c.usable, c.missing}};
  row.status = c.missing.empty() ? "yes" : c.usable.empty() ? "no" : "partial";
  row.detail = c.mount.empty() ? "not mounted" : "mounted at " + c.mount;
  row.detail += "; controllers usable: " + (c.usable.empty() ? std::string("none") : comma_list(c.usable));
  if (!c.missing.empty())
    row.detail += "; missing: " + comma_list(c.missing) + " (" + c.problem +
                  "), so a limit that needs one (--memory, --pids, --cpus) exits 125 unless --best-effort";
  return row;
}

// What this ABI lacks of the ones confine uses; the sandbox uses everything else it has.
std::string landlock_detail(int abi) {
  std::string missing;
  for (const auto& gap : landlock_gaps(abi))
    missing += std::string(missing.empty() ? "" : "; ") + (gap.fallback_only ? "in fallback mode, " : "") + gap.text;
  return missing.empty() ? "every right confine uses" : "confine uses all it has; missing: " + missing;
}

// What a container (if any) allows of the full sandbox, tried as the run would try it.
void add_container_rows(std::vector<ProbeRow>& rows, const CallerEnvironment& caller) {
  auto c = container_facts(true, ::geteuid() == 0, caller);
  bool refuses = !c.fresh_proc || !c.hostname || !c.idmap;
  std::string engine = container_engine_name(c.engine);
  if (c.rootless) engine += " (rootless)";
  rows.push_back({"container", refuses ? engine : "no limits",
                  refuses ? "refuses the steps marked no below" : "nothing here refuses a step of the sandbox"});
  rows.push_back({"fresh-proc", c.fresh_proc ? "yes" : "no",
                  c.fresh_proc ? "a /proc of the sandbox's own mounts"
                               : "refused (parts of /proc are masked): the sandbox sees the container's /proc"});
  rows.push_back({"hostname", c.hostname ? "yes" : "no",
                  c.hostname ? "the sandbox's hostname can be set" : "refused: the sandbox keeps the container's"});
  if (::geteuid() == 0)
    rows.push_back({"idmapped-mounts", c.idmap ? "yes" : "no",
                    c.idmap ? "root: the workspace is shown to the sandbox through an idmapped bind"
                            : "root without CAP_SYS_ADMIN in the host's user namespace: the sandbox runs as the "
                              "workspace's owner"});
}

// A row of one of the kernel layers the sandbox's walls are made of.
ProbeRow wall_row(std::string name, std::string status, std::string detail) {
  ProbeRow row{std::move(name), std::move(status), std::move(detail)};
  row.wall = true;
  return row;
}

}  // namespace

std::vector<ProbeRow> probe_all(const CallerEnvironment& caller) {
  std::vector<ProbeRow> rows;
  struct utsname u {};
  ::uname(&u);
  rows.push_back({"kernel", std::string(u.release), std::string(u.machine)});
  std::string problem;
  bool userns = try_user_namespace(problem);
  rows.push_back(wall_row("user-namespaces", userns ? "yes" : "no", userns ? "user + mount namespace with a tmpfs mount works" : problem));
  if (userns) add_container_rows(rows, caller);
  auto f = probe_cheap();
  rows.push_back(wall_row("landlock", f.landlock_abi > 0 ? "abi " + std::to_string(f.landlock_abi) : "no",
                          f.landlock_abi > 0 ? landlock_detail(f.landlock_abi) : f.landlock_problem));
  rows.push_back(wall_row("seccomp", f.seccomp ? "yes" : "no", f.seccomp ? "filters with errno/kill actions" : f.seccomp_problem));
  rows.push_back(cgroup_row(caller));
  bool netadmin = ::geteuid() == 0;
  rows.push_back({"veth", netadmin ? "yes" : "no",
                  netadmin ? "root: may create veth pairs (--net veth)" : "needs root or CAP_NET_ADMIN"});
  return rows;
}

}  // namespace confine::mech
