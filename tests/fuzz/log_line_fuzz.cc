// libFuzzer target for the bounded log lines (core/log_budget.h): whatever text the sandbox puts in a record's
// fields, the denial log's line (refusal_line) and a line escaped the way --net-log's is (json_string) are at most
// kMaxLogLine bytes and one JSON object in valid UTF-8 (built with -Dfuzz=true and clang; see meson.build here).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/log_budget.h"
#include "core/refusals.h"
#include "core/report.h"

namespace {

void check(const std::string& line) {
  if (line.size() > confine::kMaxLogLine || line.empty() || line.back() != '\n') __builtin_trap();
  // nlohmann's parser refuses invalid UTF-8 in a string.
  auto j = nlohmann::json::parse(line.begin(), line.end() - 1, nullptr, false);
  if (j.is_discarded() || !j.is_object()) __builtin_trap();
}

}  // namespace

// The first byte says how often each field repeats (so a short input makes long fields); the rest is up to four
// fields, split at NUL bytes.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t repeat = 1 + data[0] * 8u;
  std::vector<std::string> fields(4);
  std::size_t f = 0;
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == 0 && f + 1 < fields.size()) ++f;
    else fields[f] += static_cast<char>(data[i]);
  }
  for (auto& field : fields) {
    std::string once = field;
    for (std::size_t k = 1; k < repeat && field.size() < 40000; ++k) field += once;
  }
  confine::Refusal r;
  r.layer = confine::RefusalLayer::network;
  r.what = fields[0];
  r.allow_with = fields[1];
  r.detail = {{"host", fields[2]}, {"port", 443}, {"args", {{"reason", fields[3]}}}};
  check(confine::refusal_line(r, 1));

  auto a = fields[0], b = fields[1], c = fields[2], d = fields[3];
  check(confine::fit_line({&a, &b, &c, &d}, [&] {
    return "{\"method\":" + confine::json_string(a) + ",\"host\":" + confine::json_string(b) +
           ",\"port\":443,\"reason\":" + confine::json_string(c) + ",\"x\":" + confine::json_string(d) + "}\n";
  }));
  return 0;
}
