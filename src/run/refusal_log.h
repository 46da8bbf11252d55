// Where the refusals of one run go, as they happen, from every thread that sees one (the supervisor's seccomp
// answers, the proxy, the steps after the run): a line each to --log and to the sandbox's own denial log
// (/run/confine/denials.jsonl), and the counts for the exit summary and --report. The lines are bounded
// (core/log_budget.h): each at most kMaxLogLine bytes, each file at most kRefusalLogCaps per run.
#pragma once

#include <mutex>
#include <string>

#include "core/refusals.h"
#include "sys/unique_fd.h"

namespace confine::run {

class RefusalLog final : public RefusalSink {
 public:
  // `log_file`: --log's descriptor (-1: none), borrowed for the run; `caps`: how much each file takes this run.
  explicit RefusalLog(int log_file, LogCaps caps = kRefusalLogCaps) : log_file_(log_file), budget_(caps) {}

  // The writable end of the sandbox's denial log, once pid 1 hands it over.
  void set_sandbox_file(sys::UniqueFd fd);

  void record(const Refusal& r) override;

  // The end of the run: the line of what the cap dropped, if it dropped anything; nothing is written after.
  // Returns the warning for stderr (empty: nothing was dropped).
  std::string finish();

  // The exit summary's line (empty: nothing refused outside the network) and --report's counts.
  [[nodiscard]] std::string summary() const;
  [[nodiscard]] std::string report_line() const;
  [[nodiscard]] int total() const;

 private:
  mutable std::mutex mu_;
  int log_file_;
  sys::UniqueFd sandbox_file_;
  RefusalCounts counts_;
  LogBudget budget_;  // the same lines go to both files: one budget
};

}  // namespace confine::run
