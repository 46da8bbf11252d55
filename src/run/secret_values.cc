#include "run/secret_values.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

#include "sys/unique_fd.h"

extern char** environ;

namespace confine::run {
namespace {

constexpr std::size_t kMaxValueBytes = 64 * 1024;  // an API key or token, not a file's worth of data

std::string source_text(const SecretSource& s) {
  switch (s.kind) {
    case SecretSource::Kind::environment: return "env:" + s.where;
    case SecretSource::Kind::file: return "file:" + s.where;
    case SecretSource::Kind::command: return "cmd:" + s.where;
  }
  return {};
}

// Reads `fd` to its end, at most kMaxValueBytes (one more byte tells the value is too long).
sys::Result<std::string> read_all(int fd, const std::string& what) {
  std::string out;
  char chunk[4096];
  for (;;) {
    auto n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return sys::errno_error(what);
    if (n == 0) return out;
    out.append(chunk, static_cast<std::size_t>(n));
    if (out.size() > kMaxValueBytes) return sys::plain_error(what + ": longer than 64 KiB");
  }
}

sys::Result<std::string> from_environment(const std::string& name, const std::vector<std::string>& env) {
  for (const auto& e : env)
    if (e.size() > name.size() && e.starts_with(name) && e[name.size()] == '=') return e.substr(name.size() + 1);
  return sys::plain_error("the variable is not set");
}

sys::Result<std::string> from_file(const std::string& path) {
  sys::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) return sys::errno_error("open `" + path + "`");
  return read_all(fd.get(), "read `" + path + "`");
}

// /bin/sh -c COMMAND as the caller, stdout captured; stdin and stderr are the caller's (a password prompt works).
sys::Result<std::string> from_command(const std::string& command) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return sys::errno_error("pipe");
  sys::UniqueFd read_end(out[0]), write_end(out[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return sys::Error{"run /bin/sh", rc};
  write_end = sys::UniqueFd();  // so the read below ends when the command's output does
  auto text = read_all(read_end.get(), "read the command's output");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!text) return text.error();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return sys::plain_error(WIFEXITED(status) ? fmt::format("the command exited with {}", WEXITSTATUS(status))
                                              : "the command was killed by a signal");
  return text;
}

sys::Result<std::string> read_value(const SecretSource& s, const std::vector<std::string>& env) {
  switch (s.kind) {
    case SecretSource::Kind::environment: return from_environment(s.where, env);
    case SecretSource::Kind::file: return from_file(s.where);
    case SecretSource::Kind::command: return from_command(s.where);
  }
  return sys::plain_error("unknown source");
}

// A file's or a command's final line break is not part of the value; any other control character would let the
// value end a header and start another, so it is refused.
sys::Result<std::string> header_safe(std::string value) {
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
  if (value.empty()) return sys::plain_error("the value is empty");
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f) return sys::plain_error("the value holds a control character (a line break?)");
  return value;
}

}  // namespace

sys::Result<SecretSet> load_secrets(const std::vector<SecretSpec>& specs, const std::vector<std::string>& env) {
  std::vector<LoadedSecret> loaded;
  for (const auto& spec : specs) {
    auto value = read_value(spec.source, env);
    if (value) value = header_safe(std::move(*value));
    if (!value)
      return sys::plain_error(fmt::format("--secret {}={}: {}", spec.name, source_text(spec.source), value.error().message()));
    loaded.push_back({spec, std::move(*value)});
  }
  return SecretSet(std::move(loaded));
}

}  // namespace confine::run
