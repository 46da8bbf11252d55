#include "mech/identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "sys/unique_fd.h"

namespace confine::mech {
namespace {

sys::Status write_proc_file(pid_t pid, const char* name, const std::string& text) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  sys::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid() || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return sys::errno_error("write `" + path + "`");
  return sys::ok_status();
}

}  // namespace

sys::Status write_id_maps(pid_t child, const Identity& ids) {
  // setgroups must be denied before an unprivileged gid_map write; denying it as root too keeps one behaviour
  // (the parent already cleared its supplementary groups, so the sandbox has none).
  if (auto s = write_proc_file(child, "setgroups", "deny"); !s) return s;
  if (auto s = write_proc_file(child, "uid_map", std::to_string(ids.inside_uid) + " " + std::to_string(ids.host_uid) + " 1\n"); !s)
    return s;
  return write_proc_file(child, "gid_map", std::to_string(ids.inside_gid) + " " + std::to_string(ids.host_gid) + " 1\n");
}

int apply_ids(const Identity& ids) {
  // gid first: after the uid changes, a rootless child could no longer change its gid.
  if (::setresgid(ids.inside_gid, ids.inside_gid, ids.inside_gid) != 0) return -1;
  return ::setresuid(ids.inside_uid, ids.inside_uid, ids.inside_uid);
}

int check_ids(const Identity& ids) {
  uid_t ruid = 0, euid = 0, suid = 0;
  gid_t rgid = 0, egid = 0, sgid = 0;
  if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0) return -1;
  bool uids = ruid == ids.inside_uid && euid == ids.inside_uid && suid == ids.inside_uid;
  bool gids = rgid == ids.inside_gid && egid == ids.inside_gid && sgid == ids.inside_gid;
  // Root shed its supplementary groups before clone (launch); a user keeps its own, which grant nothing new.
  bool groups = !ids.run_by_root || ::getgroups(0, nullptr) == 0;
  if (uids && gids && groups) return 0;
  errno = EPERM;
  return -1;
}

}  // namespace confine::mech
