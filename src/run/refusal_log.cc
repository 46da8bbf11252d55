#include "run/refusal_log.h"

#include <unistd.h>

#include <chrono>

namespace confine::run {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One write() per line on an O_APPEND file: two writers sharing a log interleave whole lines, never halves.
void write_line(int fd, const std::string& line) {
  if (fd >= 0 && !line.empty()) [[maybe_unused]] auto n = ::write(fd, line.data(), line.size());
}

}  // namespace

void RefusalLog::set_sandbox_file(sys::UniqueFd fd) {
  std::lock_guard lock(mu_);
  sandbox_file_ = std::move(fd);
}

void RefusalLog::record(const Refusal& r) {
  auto line = refusal_line(r, now_ms());
  std::lock_guard lock(mu_);
  // A command that loops on a refused call must not fill the disk (--log) or its own memory (the sandbox's file is
  // on a tmpfs): the lines stop at the budget's caps. The counts go on; the summary and --report have them all.
  counts_.add(r);
  auto out = budget_.take(line, now_ms());
  write_line(log_file_, out);
  write_line(sandbox_file_.get(), out);
}

std::string RefusalLog::finish() {
  std::lock_guard lock(mu_);
  auto out = budget_.finish(now_ms());
  write_line(log_file_, out);
  write_line(sandbox_file_.get(), out);
  return dropped_warning("--log", budget_);
}

std::string RefusalLog::summary() const {
  std::lock_guard lock(mu_);
  return counts_.summary();
}

std::string RefusalLog::report_line() const {
  std::lock_guard lock(mu_);
  return counts_.report_line();
}

int RefusalLog::total() const {
  std::lock_guard lock(mu_);
  return counts_.total();
}

}  // namespace confine::run
