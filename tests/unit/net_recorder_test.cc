// The network's one writer (net/net_recorder.h): its --net-log lines, what it gives the denial log, its exit
// summary, its caps, and many threads recording at once.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/net_recorder.h"
#include "temp_dir.h"

using namespace confine;
using namespace confine::net;

namespace {

struct Sink final : RefusalSink {
  std::mutex mu;
  std::vector<Refusal> got;
  void record(const Refusal& r) override {
    std::lock_guard lock(mu);
    got.push_back(r);
  }
};

// A --net-log file, as confine opens it.
struct LogFile {
  testing::TempDir dir;
  std::string path = dir.root + "/net.jsonl";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  LogFile() { REQUIRE(fd >= 0); }
  ~LogFile() { ::close(fd); }
  std::vector<std::string> lines() const {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
};

ConnectionRecord denied(const std::string& host, std::uint16_t port) {
  ConnectionRecord r;
  r.method = "CONNECT";
  r.host = host;
  r.port = port;
  r.reason = "not in the allowlist";
  return r;
}

// Allowed, but it got no connection.
ConnectionRecord failed(const std::string& method, const std::string& host, std::uint16_t port, const std::string& why) {
  auto r = denied(host, port);
  r.method = method;
  r.allowed = r.failed = true;
  r.reason = why;
  return r;
}

std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  return keys;
}

}  // namespace

TEST_CASE("net_log_line: the fields in their order, one line") {
  auto r = denied("evil.example", 443);
  r.withheld = {"A", "B"};
  auto line = net_log_line(r);
  REQUIRE(line.back() == '\n');
  auto j = nlohmann::ordered_json::parse(line);
  CHECK(keys_of(j) == std::vector<std::string>{"time", "method", "host", "port", "allowed", "reason", "bytes_up",
                                               "bytes_down", "duration_ms", "placeholder_not_substituted"});
  CHECK(j["placeholder_not_substituted"] == "A,B");
  CHECK(j["allowed"] == false);
}

TEST_CASE("net_log_line: a 15 KB request target is cut, the line stays whole JSON of at most 4 KiB") {
  ConnectionRecord r;
  r.method = "?";
  r.reason = "bad request target `" + std::string(15000, 't') + "`";
  auto line = net_log_line(r);
  CHECK(line.size() <= kMaxLogLine);
  auto j = nlohmann::ordered_json::parse(line);
  CHECK(j["method"] == "?");
  auto reason = j["reason"].get<std::string>();
  CHECK(reason.rfind("bad request target `ttt", 0) == 0);
  CHECK(reason.find("…[cut ") != std::string::npos);

  auto host = denied(std::string(15000, 'h'), 443);
  auto k = nlohmann::ordered_json::parse(net_log_line(host));
  CHECK(k["reason"] == "not in the allowlist");
  CHECK(k["port"] == 443);
}

TEST_CASE("NetRecorder: --net-log, the denial log and the summary from one record each") {
  LogFile log;
  Sink sink;
  NetRecorder recorder(log.fd, &sink);
  recorder.record(denied("evil.example", 443));
  recorder.record(denied("evil.example", 443));
  recorder.record(failed("GET", "api.example", 80, "unresolvable"));
  auto ok = denied("good.example", 443);
  ok.allowed = true;
  ok.reason = "allowed by name";
  ok.withheld = {"TOKEN"};
  recorder.record(ok);
  // A published port's connection: the host's, not the sandbox's. Logged, neither refused nor counted.
  auto inbound = failed("PUBLISH", "127.0.0.1", 8000, "refused");
  inbound.inbound = true;
  recorder.record(inbound);

  auto lines = log.lines();
  REQUIRE(lines.size() == 5);
  CHECK(nlohmann::json::parse(lines[4])["method"] == "PUBLISH");
  REQUIRE(sink.got.size() == 3);
  CHECK(sink.got[0].what == "evil.example:443");
  CHECK(sink.got[0].action == RefusalAction::refused);
  CHECK(sink.got[2].what == "api.example:80");
  CHECK(sink.got[2].action == RefusalAction::failed);
  CHECK(recorder.exit_summary() ==
        std::vector<std::string>{
            "network: 2 requests denied: evil.example:443 ×2",
            "network: 1 request could not connect: api.example:80 allowed but unresolvable ×1",
            "network: 1 request carried a secret's placeholder to a host not listed for it (sent as is, not the "
            "value): good.example:443 (TOKEN) ×1"});
  CHECK(recorder.finish().empty());
  CHECK(log.lines().size() == 5);  // nothing dropped: no line about it
}

TEST_CASE("NetRecorder: a DNS name and a malformed request are counted by their own names; a long host by its start") {
  NetRecorder recorder(-1, nullptr);
  auto dns = denied("nowhere.example", 0);
  dns.method = "DNS";
  recorder.record(dns);
  recorder.record(denied("", 0));
  auto long_host = std::string(5000, 'h');
  recorder.record(denied(long_host, 443));
  auto summary = recorder.exit_summary();
  REQUIRE(summary.size() == 1);
  CHECK(summary[0] == "network: 3 requests denied: (malformed requests) ×1, " + cut_text(long_host, kMaxCountedName) +
                          ":443 ×1, nowhere.example (DNS) ×1");
}

TEST_CASE("NetRecorder: --net-log stops at its cap with one line, and the end says what was dropped") {
  LogFile log;
  NetRecorder recorder(log.fd, nullptr, LogCaps{3, 1 << 20});
  for (int i = 0; i < 10; ++i) recorder.record(denied("evil.example", 443));
  auto warning = recorder.finish();
  recorder.record(denied("late.example", 443));  // after the end: counted, never written
  auto lines = log.lines();
  REQUIRE(lines.size() == 5);
  auto cap = nlohmann::json::parse(lines[3]);
  CHECK(cap["event"] == "log_cap_reached");
  CHECK(cap["cap"] == "lines");
  auto dropped = nlohmann::json::parse(lines[4]);
  CHECK(dropped["event"] == "log_dropped");
  CHECK(dropped["lines"] == 7);
  CHECK(warning.rfind("--net-log: 7 lines (", 0) == 0);
  CHECK(recorder.exit_summary()[0] == "network: 11 requests denied: evil.example:443 ×10, late.example:443 ×1");
}

TEST_CASE("NetRecorder: threads recording at once write whole lines, within the caps") {
  LogFile log;
  Sink sink;
  NetRecorder recorder(log.fd, &sink, LogCaps{1000, 1 << 30});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&recorder, t] {
      for (int i = 0; i < 500; ++i) recorder.record(denied("t" + std::to_string(t) + ".example", 443));
    });
  for (auto& t : threads) t.join();
  recorder.finish();
  auto lines = log.lines();
  REQUIRE(lines.size() == 1002);
  for (const auto& l : lines) CHECK_NOTHROW(nlohmann::json::parse(l));
  CHECK(nlohmann::json::parse(lines.back())["lines"] == 1000);
  CHECK(sink.got.size() == 2000);
  CHECK(recorder.exit_summary()[0].rfind("network: 2000 requests denied: ", 0) == 0);
}
