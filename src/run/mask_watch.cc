#include "run/mask_watch.h"

#include <sys/inotify.h>

#include <optional>


namespace confine::run {

std::vector<std::string> mask_paths(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& m : plan.mounts)
    if (m.kind == MountKind::mask) out.push_back(m.beneath.empty() ? m.dest : m.beneath + "/" + m.dest);
  return out;
}

struct MaskWatch::State {
  sys::UniqueFd fd;
  std::vector<std::string> paths;
  RefusalLog& log;

  State(sys::UniqueFd f, std::vector<std::string> p, RefusalLog& l) : fd(std::move(f)), paths(std::move(p)), log(l) {}

  void read_events() {
    read_inotify_events(fd.get(), [this](const struct inotify_event& ev, std::string_view) { record(ev); });
  }

  void record(const struct inotify_event& ev) {
    if (ev.mask & IN_Q_OVERFLOW) {
      log.record({RefusalLayer::files, RefusalAction::neutralised, "(more masked names than confine could follow)", "",
                  {{"event", "overflow"}}});
      return;
    }
    if (!(ev.mask & IN_OPEN) || ev.wd < 1 || static_cast<std::size_t>(ev.wd) > paths.size()) return;
    const auto& path = paths[static_cast<std::size_t>(ev.wd) - 1];
    log.record({RefusalLayer::files, RefusalAction::neutralised, path, "",
                {{"path", path}, {"event", "opened"}, {"seen_as", (ev.mask & IN_ISDIR) ? "an empty directory" : "an empty file"}}});
  }
};

MaskWatch::MaskWatch(FdWatches& watches, sys::UniqueFd watch, std::vector<std::string> paths, RefusalLog& log)
    : watches_(watches), state_(std::make_unique<State>(std::move(watch), std::move(paths), log)) {
  watches_.add(state_->fd.get(), [s = state_.get()] { s->read_events(); });
}

MaskWatch::~MaskWatch() {
  watches_.remove(state_->fd.get());
  state_->read_events();
}

}  // namespace confine::run
