#include "run/git_config_watch.h"

#include <sys/inotify.h>

#include <string_view>

#include "sys/unique_fd.h"

namespace confine::run {
namespace {
constexpr std::string_view kLock = "config.lock";
}  // namespace

struct GitConfigWatch::State {
  sys::UniqueFd fd;
  std::vector<int> wds;  // wds[i]: the watch on dirs[i], -1 if none
  std::vector<std::string> shown_as;
  RefusalSink& log;

  State(sys::UniqueFd f, std::vector<std::string> s, RefusalSink& l) : fd(std::move(f)), shown_as(std::move(s)), log(l) {}

  void read_events() {
    read_inotify_events(fd.get(), [this](const struct inotify_event& ev, std::string_view name) { judge(ev, name); });
  }

  // IN_DELETE of the lock: git gave up on it (a lock renamed over the config is IN_MOVED_FROM, not a delete).
  void judge(const struct inotify_event& ev, std::string_view name) {
    if (!(ev.mask & IN_DELETE) || name != kLock) return;
    for (std::size_t i = 0; i < wds.size(); ++i)
      if (wds[i] == ev.wd)
        log.record({RefusalLayer::git_config, RefusalAction::refused, shown_as[i], "--allow-git-config",
                    {{"path", shown_as[i]}, {"error", "read-only (EBUSY)"}}});
  }
};

GitConfigWatch::GitConfigWatch(FdWatches& watches, const std::vector<std::string>& dirs,
                               std::vector<std::string> shown_as, RefusalSink& log)
    : watches_(watches),
      state_(std::make_unique<State>(sys::UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)), std::move(shown_as), log)) {
  for (const auto& dir : dirs)
    state_->wds.push_back(state_->fd.valid() ? ::inotify_add_watch(state_->fd.get(), dir.c_str(),
                                                                   IN_DELETE | IN_ONLYDIR | IN_DONT_FOLLOW)
                                             : -1);
  if (state_->fd.valid()) watches_.add(state_->fd.get(), [s = state_.get()] { s->read_events(); });
}

GitConfigWatch::~GitConfigWatch() {
  if (!state_->fd.valid()) return;
  watches_.remove(state_->fd.get());
  state_->read_events();
}

}  // namespace confine::run
