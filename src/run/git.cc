#include "run/git.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>
#include <iterator>
#include <string_view>
#include <fmt/ranges.h>

#include "sys/unique_fd.h"

extern char** environ;

namespace confine::run {
namespace {

// A repository's own protocol.<name>.allow beats protocol.allow, so every transport is named: with all of them
// refused, neither a fetch nor a partial clone's lazy fetch of a missing object (ext:: runs any command) goes out.
constexpr const char* kNoProgramSettings[] = {
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "core.editor=false",
    "sequence.editor=false", "core.sshCommand=false", "core.askPass=false", "credential.helper=",
    "protocol.allow=never", "protocol.ext.allow=never", "protocol.file.allow=never", "protocol.git.allow=never",
    "protocol.ssh.allow=never", "protocol.http.allow=never", "protocol.https.allow=never", "gc.auto=0",
    "maintenance.auto=false", "commit.gpgSign=false", "tag.gpgSign=false", "submodule.recurse=false",
};

// The caller's variables that run_captured passes on: where to find git and the user's own git config, and the
// locale. GIT_* (GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH, GIT_SSH_COMMAND …) is exactly what must not come through.
constexpr std::string_view kPassedVariables[] = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ",
                                                 "XDG_CONFIG_HOME"};

bool passed(std::string_view entry) {
  if (entry.starts_with("LC_")) return true;
  auto name = entry.substr(0, entry.find('='));
  return std::find(std::begin(kPassedVariables), std::end(kPassedVariables), name) != std::end(kPassedVariables);
}

// The command as the user would type it: without the -c settings and the --git-dir/--work-tree plumbing.
std::vector<std::string> shown(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-c") ++i;
    else if (!args[i].starts_with("--git-dir=") && !args[i].starts_with("--work-tree=")) out.push_back(args[i]);
  }
  return out;
}

}  // namespace

std::vector<std::string> host_git(std::vector<std::string> args) {
  std::vector<std::string> argv = {"git"};
  for (const char* setting : kNoProgramSettings) argv.insert(argv.end(), {"-c", setting});
  argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  return argv;
}

sys::Result<std::string> run_captured(const std::vector<std::string>& args, const std::string& dir,
                                      const std::vector<std::string>& extra_env) {
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e)
    if (passed(*e)) envp.push_back(*e);
  envp.push_back(const_cast<char*>("GIT_TERMINAL_PROMPT=0"));
  for (const auto& e : extra_env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return sys::errno_error("pipe");
  sys::UniqueFd read_end(pipefd[0]), write_end(pipefd[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return sys::Error{"cannot run " + args[0] + " (is it installed?)", rc};
  write_end.reset();
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return sys::plain_error(fmt::format("`{}` failed", fmt::join(shown(args), " ")));
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace confine::run
