// Where the refusals of one run go, as they happen, from every thread that sees one (the supervisor's seccomp
// answers, the proxy, the steps after the run): a line each to --log and to the sandbox's own denial log
// (/run/confine/denials.jsonl), and the counts for the exit summary and --report.
#pragma once

#include <mutex>
#include <string>

#include "core/refusals.h"
#include "sys/unique_fd.h"

namespace confine::run {

class RefusalLog {
 public:
  // `log_file`: --log's descriptor (-1: none), borrowed for the run.
  explicit RefusalLog(int log_file) : log_file_(log_file) {}

  // The writable end of the sandbox's denial log, once pid 1 hands it over.
  void set_sandbox_file(sys::UniqueFd fd);

  void record(const Refusal& r);

  // The exit summary's line (empty: nothing refused outside the network) and --report's counts.
  [[nodiscard]] std::string summary() const;
  [[nodiscard]] std::string report_line() const;
  [[nodiscard]] int total() const;

 private:
  mutable std::mutex mu_;
  int log_file_;
  sys::UniqueFd sandbox_file_;
  RefusalCounts counts_;
  std::size_t lines_ = 0;
};

}  // namespace confine::run
