#include "core/resolve.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>

#include "core/env_scrub.h"

namespace confine {
namespace {

using sys::Error;
using sys::Result;

Result<std::string> canonical_existing(const std::string& what, const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return sys::errno_error(what + " `" + path + "`");
  return std::string(buf);
}

Result<std::string> resolve_workspace(const Options& o, const CallerContext& c) {
  auto ws = canonical_existing("workspace", absolute_from(c.cwd, o.workspace.empty() ? c.cwd : o.workspace));
  if (!ws) return ws.error();
  struct stat st {};
  if (::stat(ws->c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return sys::plain_error("workspace `" + *ws + "` is not a directory");
  if (*ws == "/") return sys::plain_error("workspace `/` would expose the whole host; pick a project directory");
  // A workspace that is, or contains, $HOME would bind ~/.ssh, ~/.aws … back in read-write.
  if (!c.home.empty() && is_within(normalize_absolute(c.home), *ws))
    return sys::plain_error("workspace `" + *ws + "` contains your home directory (" + c.home +
                            "), which would expose ~/.ssh and other secrets; pick a project directory");
  return ws;
}

Result<NetMode> parse_net(const std::string& net) {
  if (net == "none") return NetMode::none;
  if (net == "host") return NetMode::host;
  return sys::plain_error("--net `" + net + "`: expected `none` or `host`");
}

bool parse_id(std::string_view s, unsigned& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && !s.empty();
}

Result<Identity> resolve_identity(const Options& o, const CallerContext& c, const std::string& workspace) {
  Identity ids;
  ids.run_by_root = c.uid == 0;
  if (ids.run_by_root) {
    // Root: the command's host identity is nobody; inside it sees the workspace owner, whose files the
    // idmapped workspace mount shows as its own.
    struct stat st {};
    if (::stat(workspace.c_str(), &st) != 0) return sys::errno_error("workspace `" + workspace + "`");
    ids.inside_uid = st.st_uid;
    ids.inside_gid = st.st_gid;
    ids.host_uid = kUnprivilegedHostUid;
    ids.host_gid = kUnprivilegedHostGid;
  } else {
    ids.inside_uid = ids.host_uid = c.uid;
    ids.inside_gid = ids.host_gid = c.gid;
  }
  if (o.user) {
    std::string_view spec = *o.user;
    auto colon = spec.find(':');
    unsigned uid = 0, gid = 0;
    bool ok = parse_id(spec.substr(0, colon), uid) &&
              (colon == std::string_view::npos ? (gid = uid, true) : parse_id(spec.substr(colon + 1), gid));
    if (!ok) return sys::plain_error("--user `" + *o.user + "`: expected numeric UID[:GID]");
    ids.inside_uid = uid;
    ids.inside_gid = gid;
  }
  return ids;
}

Result<UserBind> parse_bind(const std::string& spec, bool writable, const CallerContext& c) {
  const char* flag = writable ? "--rw" : "--ro";
  auto colon = spec.find(':');
  std::string src = spec.substr(0, colon);
  std::string dest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (src.empty()) return sys::plain_error(std::string(flag) + " `" + spec + "`: empty source");
  auto source = canonical_existing(flag, absolute_from(c.cwd, src));
  if (!source) return source.error();
  if (dest.empty()) dest = *source;
  if (dest.front() != '/') return sys::plain_error(std::string(flag) + " `" + spec + "`: destination must be absolute");
  dest = normalize_absolute(dest);
  if (dest == "/") return sys::plain_error(std::string(flag) + " `" + spec + "`: cannot replace the sandbox's root");
  struct stat st {};
  bool is_file = ::stat(source->c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
  return UserBind{*source, dest, writable, is_file};
}

Result<std::string> resolve_mask(const std::string& spec, const std::string& workspace) {
  std::string path = absolute_from(workspace, spec);
  if (spec.front() != '/' && !is_within(path, workspace))
    return sys::plain_error("--mask `" + spec + "`: a relative path must stay inside the workspace");
  return path;
}

Result<std::vector<int>> resolve_preserved_fds(std::vector<int> fds) {
  std::sort(fds.begin(), fds.end());
  fds.erase(std::unique(fds.begin(), fds.end()), fds.end());
  for (int fd : fds) {
    if (fd <= 2) return sys::plain_error("--preserve-fd " + std::to_string(fd) + ": stdin/stdout/stderr are always kept");
    if (::fcntl(fd, F_GETFD) < 0) return sys::errno_error("--preserve-fd " + std::to_string(fd));
  }
  return fds;
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

bool is_within(const std::string& inner, const std::string& outer) {
  if (outer == "/") return true;
  return inner == outer || (inner.starts_with(outer) && inner[outer.size()] == '/');
}

Result<Policy> resolve(const Options& o, const CallerContext& c) {
  Policy p;
  if (o.command.empty()) return sys::plain_error("no command given (usage: confine [OPTIONS] -- CMD [ARGS...])");
  auto ws = resolve_workspace(o, c);
  if (!ws) return ws.error();
  p.fs.workspace = *ws;
  // A home of "/" (some service accounts) gets no tmpfs: it would cover the whole new root.
  p.fs.home = normalize_absolute(c.home);
  if (p.fs.home == "/") p.fs.home.clear();
  p.fs.protect_git = !o.allow_git_config;

  auto net = parse_net(o.net);
  if (!net) return net.error();
  p.net = *net;

  auto ids = resolve_identity(o, c, p.fs.workspace);
  if (!ids) return ids.error();
  p.ids = *ids;

  for (const auto& [specs, writable] : {std::pair{&o.ro_binds, false}, std::pair{&o.rw_binds, true}}) {
    for (const auto& spec : *specs) {
      auto b = parse_bind(spec, writable, c);
      if (!b) return b.error();
      p.fs.binds.push_back(*b);
    }
  }
  for (const auto& t : o.tmpfs) {
    if (t.empty() || t.front() != '/') return sys::plain_error("--tmpfs `" + t + "`: must be an absolute path");
    p.fs.tmpfs.push_back(normalize_absolute(t));
  }
  for (const auto& m : o.masks) {
    if (m.empty()) return sys::plain_error("--mask: empty path");
    auto path = resolve_mask(m, p.fs.workspace);
    if (!path) return path.error();
    p.fs.masks.push_back(*path);
  }
  for (const auto& e : o.set_env)
    if (e.find('=') == std::string::npos || e.front() == '=')
      return sys::plain_error("--env `" + e + "`: expected NAME=VALUE");

  auto fds = resolve_preserved_fds(o.preserve_fds);
  if (!fds) return fds.error();
  p.proc.preserve_fds = *fds;

  auto env = scrub_environment(c.environ, o.pass_env, o.set_env);
  p.proc.env = std::move(env.kept);
  p.proc.dropped_env = std::move(env.dropped_names);
  p.proc.argv = o.command;
  p.proc.workdir = p.fs.workspace;
  return p;
}

}  // namespace confine
