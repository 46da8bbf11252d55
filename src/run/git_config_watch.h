// Records each write to a git config that confine keeps read-only (.git/config, a linked worktree's repository
// config): git writes `config.lock` beside it and renames it over the config, which fails on the read-only mount
// (EBUSY), and git then removes the lock and prints only "could not write config file". confine watches the
// directory with inotify from the host: a `config.lock` removed without being renamed is such a refused write,
// recorded with the flag that allows it. (A write into .git/hooks fails with EROFS before any file exists there,
// so no watch can see it.)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/refusals.h"
#include "run/fd_watch.h"

namespace confine::run {

class GitConfigWatch {
 public:
  // `dirs`: the host directories holding a protected config (no symlink is followed to them); `shown_as`: what
  // the records call each one's config (".git/config"). A directory that cannot be watched is skipped.
  GitConfigWatch(FdWatches& watches, const std::vector<std::string>& dirs, std::vector<std::string> shown_as,
                 RefusalSink& log);
  GitConfigWatch(const GitConfigWatch&) = delete;
  GitConfigWatch& operator=(const GitConfigWatch&) = delete;
  // Records what is still queued (the last writes before the sandbox ended), then stops.
  ~GitConfigWatch();

 private:
  struct State;
  FdWatches& watches_;
  std::unique_ptr<State> state_;
};

}  // namespace confine::run
