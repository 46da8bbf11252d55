#include "cli/docker_run.h"
#include "cli/documented_flags.h"

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "core/env_scrub.h"
#include "core/ids.h"
#include "core/net_mode.h"
#include "core/oci_bundle.h"
#include "core/exit_status.h"
#include "core/resolve.h"
#include "sys/log.h"
#include "sys/user_files.h"

namespace confine::cli {
namespace {

using sys::Result;

// docker run flags confine refuses, with the reason given to the user. Every other unknown flag is refused too,
// with a generic message: nothing is ever silently ignored.
struct Refused {
  std::string_view flag;
  std::string_view why;
};
constexpr std::array kRefused = {
    Refused{"-d", "confine runs in the foreground; use your shell's `&` to background it"},
    Refused{"--detach", "confine runs in the foreground; use your shell's `&` to background it"},
    Refused{"-P", "no port is published unless named: use -p HOSTPORT:PORT for each"},
    Refused{"--publish-all", "no port is published unless named: use -p HOSTPORT:PORT for each"},
    Refused{"--privileged", "confine never grants privileges; that is the point of it"},
    Refused{"--cap-add", "confine never grants capabilities (all are dropped)"},
    Refused{"--entrypoint", "an unpacked image has no entrypoint: put the command after the image"},
    Refused{"--name", "there is no container to name: nothing outlives the run"},
    Refused{"--restart", "nothing restarts: confine runs the command once, in the foreground"},
    Refused{"--pull", "confine runs no registry images: unpack one into a directory"},
    Refused{"--platform", "confine runs the host's architecture only"},
    Refused{"--pid", "the sandbox always has its own pid namespace"},
    Refused{"--ipc", "the sandbox always has its own IPC namespace"},
    Refused{"--uts", "the sandbox always has its own UTS namespace"},
    Refused{"--userns", "the sandbox always has its own user namespace"},
    Refused{"--volumes-from", "there are no other containers"},
    Refused{"--link", "there are no other containers"},
};

constexpr const char* kUsage =
    "Usage: confine run [DOCKER-RUN FLAGS] IMAGE CMD [ARGS...]\n\n"
    "Run CMD like `docker run` would, with confine's kernel sandbox. IMAGE is `host` (the host's system\n"
    "directories, read-only), a directory holding an unpacked root filesystem (`docker export`), or an\n"
    "OCI bundle (`umoci unpack`: its config.json gives the default command, env, workdir and user).\n"
    "The volume that holds --workdir is confine's workspace: secret files in it are\n"
    "masked and .git/hooks and .git/config are read-only. Default network: none; `--network proxy\n"
    "--allow HOST` reaches only the allowed hosts, through confine's proxy.\n";

struct DockerFlags {
  std::vector<std::string> volumes, mounts, env, env_files, cap_drop, security_opts, tmpfs;
  std::string network = "none", workdir, user, hostname;
  bool read_only = false, interactive = false, tty = false, rm = false, init = false;
};

bool is_named_volume(const std::string& source) {
  return !source.empty() && source.front() != '/' && source.front() != '.' && source.front() != '~';
}

// Whether the image position names a directory (`./myapp`, `/srv/rootfs`, or an existing `myapp`).
bool names_directory(const std::string& image) {
  struct stat st {};
  return ::stat(image.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Any config.json makes a bundle: what it is (a link, a FIFO) is for read_bundle_config to refuse, by name.
bool is_bundle(const std::string& dir) {
  struct stat config {}, rootfs {};
  return ::lstat((dir + "/config.json").c_str(), &config) == 0 &&
         ::stat((dir + "/rootfs").c_str(), &rootfs) == 0 && S_ISDIR(rootfs.st_mode);
}

Result<std::string> image_to_rootfs(const std::string& image) {
  if (image == "host") return std::string();
  if (names_directory(image)) return is_bundle(image) ? image + "/rootfs" : image;
  if (image.find('/') == 0 || image.starts_with("./") || image.starts_with("../"))
    return sys::plain_error("image directory `" + image + "` does not exist");
  return sys::plain_error("image `" + image + "`: confine runs no registry images. Unpack it into a directory first, e.g. "
                          "`mkdir rootfs && docker export $(docker create " + image + ") | tar -x -C rootfs` or "
                          "`umoci unpack --rootless --image " + image + " bundle` (an OCI bundle, which keeps the image's "
                          "command and environment), and give that directory instead; or `host` for the host's own "
                          "system directories");
}

// Each flag's names, placeholder and help come from the flag table (flag_docs.h).
void add_flags(CLI::App& app, DockerFlags& d, Options& o) {
  constexpr auto set = FlagSet::run;
  add_documented_option(app, option_doc(set, "-v,--volume"), d.volumes);
  add_documented_option(app, option_doc(set, "--mount"), d.mounts);
  add_documented_option(app, option_doc(set, "-w,--workdir"), d.workdir);
  add_documented_option(app, option_doc(set, "-e,--env"), d.env);
  add_documented_option(app, option_doc(set, "--env-file"), d.env_files);
  add_documented_option(app, option_doc(set, "--network,--net"), d.network);
  add_documented_option(app, option_doc(set, "--allow"), o.allow);
  add_documented_option(app, option_doc(set, "-p,--publish"), o.publish);
  add_documented_option(app, option_doc(set, "-m,--memory"), o.memory);
  add_documented_option(app, option_doc(set, "--memory-swap"), o.memory_swap);
  add_documented_option(app, option_doc(set, "--pids-limit"), o.pids);
  add_documented_option(app, option_doc(set, "--cpus"), o.cpus);
  add_documented_option(app, option_doc(set, "--shm-size"), o.shm_size);
  add_documented_option(app, option_doc(set, "--tmpfs-size"), o.tmpfs_size);
  add_documented_option(app, option_doc(set, "--cap-drop"), d.cap_drop);
  add_documented_option(app, option_doc(set, "--security-opt"), d.security_opts);
  add_documented_option(app, option_doc(set, "-u,--user"), d.user);
  add_documented_switch(app, switch_doc(set, "--read-only"), d.read_only);
  add_documented_option(app, option_doc(set, "--tmpfs"), d.tmpfs);
  add_documented_option(app, option_doc(set, "--device"), o.devices);
  add_documented_option(app, option_doc(set, "--gpus"), o.gpus);
  add_documented_option(app, option_doc(set, "-h,--hostname"), d.hostname);
  add_documented_switch(app, switch_doc(set, "--rm"), d.rm);
  add_documented_switch(app, switch_doc(set, "-i,--interactive"), d.interactive);
  add_documented_switch(app, switch_doc(set, "-t,--tty"), d.tty);
  add_documented_switch(app, switch_doc(set, "--init"), d.init);
  add_documented_switch(app, switch_doc(set, "--best-effort"), o.best_effort);
}

Result<bool> apply_security_opt(const std::string& opt, Options& o) {
  auto sep = opt.find_first_of("=:");
  auto key = opt.substr(0, sep);
  auto value = sep == std::string::npos ? std::string() : opt.substr(sep + 1);
  if (key == "no-new-privileges") {
    if (value.empty() || value == "true") return true;  // always set: no_new_privs is part of every sandbox
    return sys::plain_error("--security-opt " + opt + ": confine always sets no-new-privileges");
  }
  if (key == "seccomp" && value == "unconfined")
    return sys::plain_error("--security-opt seccomp=unconfined: confine always installs a seccomp filter; give a "
                            "policy file (Docker JSON or confine-seccomp TOML) to change it");
  if (key == "seccomp" && !value.empty()) {
    o.seccomp_file = value;
    return true;
  }
  return sys::plain_error("--security-opt " + opt + ": not supported (only no-new-privileges and seccomp=FILE)");
}

Result<bool> apply_env(const DockerFlags& d, Options& o) {
  for (const auto& e : d.env) {
    if (e.empty() || e.front() == '=') return sys::plain_error("--env `" + e + "`: expected NAME=VALUE or NAME");
    if (e.find('=') == std::string::npos) o.pass_env.push_back(e);
    else o.set_env.push_back(e);
  }
  for (const auto& file : d.env_files) {
    auto text = sys::read_user_file("--env-file", file, sys::kMiB);
    if (!text) return text.error();
    auto parsed = parse_env_file(*text, file);
    if (!parsed) return parsed.error();
    o.set_env.insert(o.set_env.end(), parsed->set.begin(), parsed->set.end());
    o.pass_env.insert(o.pass_env.end(), parsed->pass.begin(), parsed->pass.end());
  }
  return true;
}

// Volumes and mounts: one becomes the workspace, the rest --ro/--rw binds; anonymous volumes are tmpfs.
Result<bool> apply_volumes(const DockerFlags& d, Options& o) {
  std::vector<Volume> volumes;
  for (const auto& v : d.volumes) {
    if (v.find(':') == std::string::npos && v.starts_with("/")) {  // `-v /data`: an anonymous volume
      o.tmpfs.push_back(v);
      continue;
    }
    auto parsed = parse_volume(v);
    if (!parsed) return parsed.error();
    volumes.push_back(*parsed);
  }
  for (const auto& m : d.mounts) {
    auto parsed = parse_mount(m);
    if (!parsed) return parsed.error();
    if (auto* tmpfs = std::get_if<std::string>(&*parsed)) o.tmpfs.push_back(*tmpfs);
    else volumes.push_back(std::get<Volume>(*parsed));
  }
  for (const auto& t : d.tmpfs) o.tmpfs.push_back(t);
  int ws = pick_workspace(volumes, d.workdir);
  o.no_workspace = ws < 0;
  for (int i = 0; i < static_cast<int>(volumes.size()); ++i) {
    const auto& v = volumes[static_cast<std::size_t>(i)];
    if (i == ws) {
      o.workspace = v.source;
      o.workspace_dest = v.dest;
      o.workspace_readonly = v.read_only;
    } else {
      (v.read_only ? o.ro_binds : o.rw_binds).push_back(v.source + ":" + v.dest);
    }
  }
  return true;
}

Result<bool> apply_flags(const DockerFlags& d, Options& o) {
  // --net's words but veth: none, host, and the allowlist proxy on the sandbox's loopback.
  auto net = parse_net(d.network);
  if (!net || net->over_veth)
    return sys::plain_error("--network " + d.network + ": confine has no docker networks; use none (the default), "
                            "host, or proxy with --allow HOST[:PORT] for an allowlist");
  // Checked here, not left to the main command's check, so that the message names this command's flags.
  if (!o.allow.empty() && net->mode != NetMode::proxy)
    return sys::plain_error("--allow " + o.allow.front() + ": needs --network proxy (the network is " + d.network + ")");
  o.net = *net;
  o.net_given = true;
  for (const auto& cap : d.cap_drop)
    if (cap.empty() || cap.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_") != std::string::npos)
      return sys::plain_error("--cap-drop `" + cap + "`: expected ALL or a capability name");
  for (const auto& opt : d.security_opts)
    if (auto r = apply_security_opt(opt, o); !r) return r.error();
  if (!d.user.empty())
    if (auto ids = parse_user_spec(d.user, "--user"); !ids)
      return std::any_of(d.user.begin(), d.user.end(), [](unsigned char c) { return std::isalpha(c) != 0; })
                 ? sys::plain_error("--user " + d.user + ": use numeric UID[:GID] (confine does not look names up in the image)")
                 : ids.error();
  o.user = d.user.empty() ? "0:0" : d.user;  // docker's default user is root; here, root of the user namespace
  if (!d.workdir.empty() && d.workdir.front() != '/')
    return sys::plain_error("--workdir `" + d.workdir + "`: must be an absolute path");
  o.workdir = d.workdir;
  if (d.hostname.size() > 64 ||
      d.hostname.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != std::string::npos)
    return sys::plain_error("--hostname `" + d.hostname + "`: letters, digits, `.` and `-`, at most 64");
  o.hostname = d.hostname;
  o.rootfs_readonly = d.read_only;
  if (d.tty && d.interactive && ::isatty(STDIN_FILENO) == 0)
    return sys::plain_error("-t: the input device is not a TTY (drop -t, or run from a terminal)");
  o.stdin_closed = !d.interactive;
  o.docker_run = true;
  if (auto r = apply_env(d, o); !r) return r.error();
  return apply_volumes(d, o);
}

Result<BundleProcess> read_bundle_config(const std::string& bundle) {
  auto file = bundle + "/config.json";
  auto text = sys::read_user_file("bundle config", file, sys::kMiB);
  if (!text) return text.error();
  return parse_bundle_config(*text, file);
}

// An OCI bundle's image defaults, where the command line gave none (as docker takes them from an image): its
// environment comes first so that -e wins.
void apply_bundle_defaults(const BundleProcess& b, DockerFlags& d, Options& o) {
  if (o.command.empty()) o.command = b.args;
  if (d.workdir.empty()) d.workdir = b.cwd;
  if (d.user.empty() && b.user) d.user = std::to_string(b.user->first) + ":" + std::to_string(b.user->second);
  d.env.insert(d.env.begin(), b.env.begin(), b.env.end());
}

// The first word CLI11 left unparsed: an unknown flag (refused with its reason) or the image.
Result<bool> take_image_and_command(std::vector<std::string> rest, DockerFlags& d, Options& o) {
  if (rest.empty()) return sys::plain_error("no image given (usage: confine run [FLAGS] IMAGE CMD [ARGS...])");
  const std::string first = rest.front();  // a copy: rest is consumed below
  if (first.starts_with("-")) {
    auto flag = first.substr(0, first.find('='));
    for (const auto& r : kRefused)
      if (flag == r.flag) return sys::plain_error(flag + ": not supported by confine run: " + std::string(r.why));
    return sys::plain_error(flag + ": not a docker run flag confine supports (see `confine run --help` and README's table)");
  }
  auto rootfs = image_to_rootfs(first);
  if (!rootfs) return rootfs.error();
  o.rootfs = *rootfs;
  rest.erase(rest.begin());
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
  o.command = std::move(rest);
  if (o.rootfs != first && !o.rootfs.empty()) {  // an OCI bundle: its config.json holds the image's defaults
    auto bundle = read_bundle_config(first);
    if (!bundle) return bundle.error();
    apply_bundle_defaults(*bundle, d, o);
  }
  if (o.command.empty())
    return sys::plain_error("no command given after the image `" + first + "` (a root filesystem directory has no "
                            "default command; an OCI bundle's config.json gives none either)");
  return true;
}

}  // namespace

Result<Volume> parse_volume(const std::string& spec) {
  std::vector<std::string> parts;
  for (auto field : split_fields(spec, ':')) parts.emplace_back(field);
  if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty())
    return sys::plain_error("-v `" + spec + "`: expected SRC:DST[:OPTIONS]");
  if (is_named_volume(parts[0]))
    return sys::plain_error("-v `" + spec + "`: `" + parts[0] + "` is a named volume; confine binds host paths only (give "
                            "an absolute or ./relative path)");
  if (parts[1].front() != '/') return sys::plain_error("-v `" + spec + "`: the destination must be absolute");
  Volume v{parts[0], parts[1], false};
  if (parts.size() == 3) {
    std::string_view opts = parts[2];
    while (!opts.empty()) {
      auto comma = opts.find(',');
      auto opt = opts.substr(0, comma);
      opts = comma == std::string_view::npos ? std::string_view{} : opts.substr(comma + 1);
      if (opt == "ro" || opt == "readonly") v.read_only = true;
      else if (opt == "rw") v.read_only = false;
      else if (opt == "rprivate" || opt == "private") continue;  // what every mount in the sandbox is
      else
        return sys::plain_error("-v `" + spec + "`: option `" + std::string(opt) +
                                "` is not supported (ro, rw; no SELinux relabelling, propagation or volume options)");
    }
  }
  return v;
}

Result<std::variant<Volume, std::string>> parse_mount(const std::string& spec) {
  std::string type, source, target, size, mode;
  bool read_only = false;
  std::string_view rest = spec;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string item(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    auto eq = item.find('=');
    auto key = item.substr(0, eq);
    auto value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
    if (key == "type") type = value;
    else if (key == "source" || key == "src") source = value;
    else if (key == "target" || key == "destination" || key == "dst") target = value;
    else if ((key == "readonly" || key == "ro") && (eq == std::string::npos || value == "true" || value == "1")) read_only = true;
    else if ((key == "readonly" || key == "ro") && (value == "false" || value == "0")) read_only = false;
    else if (key == "tmpfs-size") size = value;
    else if (key == "tmpfs-mode") mode = value;
    else return sys::plain_error("--mount `" + spec + "`: `" + item + "` is not supported");
  }
  if (target.empty() || target.front() != '/') return sys::plain_error("--mount `" + spec + "`: needs an absolute target=");
  if (type == "tmpfs") {
    if (!source.empty()) return sys::plain_error("--mount `" + spec + "`: a tmpfs has no source");
    std::string options;
    if (!size.empty()) options += "size=" + size;
    if (!mode.empty()) options += std::string(options.empty() ? "" : ",") + "mode=" + mode;
    return std::variant<Volume, std::string>(target + (options.empty() ? "" : ":" + options));
  }
  if (type != "bind")
    return sys::plain_error("--mount `" + spec + "`: type `" + type + "` is not supported (bind or tmpfs; no volumes)");
  if (source.empty()) return sys::plain_error("--mount `" + spec + "`: needs source=");
  if (!size.empty() || !mode.empty()) return sys::plain_error("--mount `" + spec + "`: tmpfs-* options need type=tmpfs");
  if (is_named_volume(source))
    return sys::plain_error("--mount `" + spec + "`: source `" + source + "` must be an absolute or ./relative path");
  return std::variant<Volume, std::string>(Volume{source, target, read_only});
}

int pick_workspace(const std::vector<Volume>& volumes, const std::string& workdir) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(volumes.size()); ++i) {
    const auto& v = volumes[static_cast<std::size_t>(i)];
    std::string dest = normalize_absolute(v.dest);
    if (!workdir.empty() && is_within(normalize_absolute(workdir), dest) &&
        (best < 0 || dest.size() > normalize_absolute(volumes[static_cast<std::size_t>(best)].dest).size()))
      best = i;
  }
  if (best >= 0 || !workdir.empty()) return best;
  for (int i = 0; i < static_cast<int>(volumes.size()); ++i)
    if (!volumes[static_cast<std::size_t>(i)].read_only) return i;
  return -1;
}

std::variant<Options, ExitNow> parse_docker_run(int argc, char** argv) {
  Options o;
  DockerFlags d;
  CLI::App app{kUsage, "confine run"};
  app.formatter(one_usage_block());
  constexpr const auto& help = switch_doc(FlagSet::run, "--help");
  app.set_help_flag(std::string(help.names), std::string(help.help));  // -h is --hostname, as in docker
  app.prefix_command();  // the image and everything after it is left for take_image_and_command
  add_flags(app, d, o);
  bool verbose = false, quiet = false;
  add_documented_switch(app, switch_doc(FlagSet::run, "--verbose"), verbose);
  add_documented_switch(app, switch_doc(FlagSet::run, "-q,--quiet"), quiet);
  one_value_per_occurrence(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return ExitNow{app.exit(e)};
  } catch (const CLI::ParseError& e) {
    log::error("{} (see `confine run --help`)", e.what());  // log::error says "confine:" once
    return ExitNow{kExitSetupFailed};
  }
  auto ok = take_image_and_command(app.remaining(), d, o);
  if (ok) ok = apply_flags(d, o);
  if (!ok) {
    log::error("{}", ok.error().message());
    return ExitNow{kExitSetupFailed};
  }
  o.verbosity = quiet ? 0 : (verbose ? 2 : 1);
  return o;
}

}  // namespace confine::cli
