#include "run/git.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sys/unique_fd.h"

extern char** environ;

namespace confine::run {
namespace {

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

sys::Result<std::string> run_captured(const std::vector<std::string>& args, const std::string& dir) {
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
  int rc = ::posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
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
