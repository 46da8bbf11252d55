// Bounded log lines and files (core/log_budget.h), and the denial log's line within them (core/refusals.h).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/log_budget.h"
#include "core/refusals.h"

using namespace confine;

namespace {

// A line of one JSON object with the strings `a` and `b`, as the writers make theirs (invalid UTF-8 replaced).
std::string two_fields(const std::string& a, const std::string& b) {
  nlohmann::ordered_json j = {{"time", 1}, {"a", a}, {"b", b}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

// The line parsed (nlohmann throws on invalid UTF-8), after checking it is one whole line.
nlohmann::ordered_json parsed(const std::string& line) {
  REQUIRE(!line.empty());
  REQUIRE(line.back() == '\n');
  REQUIRE(std::count(line.begin(), line.end(), '\n') == 1);
  return nlohmann::ordered_json::parse(line);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("cut_marker, cut_text: the end of a long text replaced by how much was cut") {
  CHECK(cut_marker(15012) == "…[cut 15012 bytes]");
  CHECK(cut_text("short", 10) == "short");
  CHECK(cut_text("0123456789abc", 10) == "0123456789…[cut 3 bytes]");
  // Never inside a character: "é" is two bytes, and a cut at an odd length keeps the whole characters before it.
  std::string accents;
  for (int i = 0; i < 10; ++i) accents += "é";
  CHECK(cut_text(accents, 5) == "éé…[cut 16 bytes]");
}

TEST_CASE("fit_line: a line that fits is made once, as it is") {
  std::string a = "x", b = "y";
  int made = 0;
  auto line = fit_line({&a, &b}, [&] { ++made; return two_fields(a, b); });
  CHECK(line == two_fields("x", "y"));
  CHECK(made == 1);
}

TEST_CASE("fit_line: a long field is cut to fit, the short ones are kept whole") {
  std::string a(15000, 'a'), b = "keep me";
  auto line = fit_line({&a, &b}, [&] { return two_fields(a, b); });
  CHECK(line.size() <= kMaxLogLine);
  CHECK(line.size() >= kMaxLogLine - 32);  // cut by about what was too long, not more
  auto j = parsed(line);
  CHECK(j["b"] == "keep me");
  auto cut = j["a"].get<std::string>();
  auto kept = cut.find('\xe2');  // where the marker starts
  REQUIRE(kept != std::string::npos);
  CHECK(cut.substr(0, kept) == std::string(kept, 'a'));
  CHECK(cut.substr(kept) == cut_marker(15000 - kept));
}

TEST_CASE("fit_line: the long fields are cut to one length, the shorter ones kept whole") {
  // Cutting the 3000 to the 2500's length would not be enough: both are cut, to the same length.
  std::string a(3000, 'a'), b(2500, 'b'), c(100, 'c');
  std::vector<std::string*> fields = {&a, &b, &c};
  auto render = [&] {
    nlohmann::ordered_json j = {{"a", a}, {"b", b}, {"c", c}};
    return j.dump() + "\n";
  };
  auto line = fit_line(fields, render);
  CHECK(line.size() <= kMaxLogLine);
  auto j = parsed(line);
  auto kept_a = j["a"].get<std::string>().find('\xe2'), kept_b = j["b"].get<std::string>().find('\xe2');
  REQUIRE(kept_a != std::string::npos);
  CHECK(kept_a == kept_b);
  CHECK(kept_a > 1500);
  CHECK(j["c"] == std::string(100, 'c'));

  // One much longer than the rest: only it is cut.
  std::string d(15000, 'd'), e(2000, 'e');
  auto only = parsed(fit_line({&d, &e}, [&] { return two_fields(d, e); }));
  CHECK(ends_with(only["a"].get<std::string>(), "bytes]"));
  CHECK(only["b"] == std::string(2000, 'e'));
}

TEST_CASE("fit_line: escapes and bytes that are not UTF-8 take more room in the line than in the field") {
  // A control character is six bytes in the line ("\u0001"), a byte that is not UTF-8 three (U+FFFD), a quote two.
  for (char c : {'\x01', '\xff', '"'}) {
    std::string a(15000, c), b = "b";
    auto line = fit_line({&a, &b}, [&] { return two_fields(a, b); });
    CHECK(line.size() <= kMaxLogLine);
    auto j = parsed(line);
    CHECK(ends_with(j["a"].get<std::string>(), "bytes]"));
    CHECK(j["b"] == "b");
  }
  // Characters of three bytes: never one cut in the middle.
  std::string a, b = "b";
  for (int i = 0; i < 5000; ++i) a += "€";
  auto j = parsed(fit_line({&a, &b}, [&] { return two_fields(a, b); }));
  auto cut = j["a"].get<std::string>();
  auto marker = cut.rfind("…[cut");
  REQUIRE(marker != std::string::npos);
  CHECK(marker % 3 == 0);
  CHECK(cut.substr(0, marker).find_first_not_of("\xe2\x82\xac") == std::string::npos);
}

TEST_CASE("fit_line: text that escapes unevenly (six bytes a character, then one) still fits, the rest whole") {
  std::string a = std::string(3000, '\x01') + std::string(12000, 'a'), b = "b";
  auto line = fit_line({&a, &b}, [&] { return two_fields(a, b); });
  CHECK(line.size() <= kMaxLogLine);
  auto j = parsed(line);
  CHECK(ends_with(j["a"].get<std::string>(), "bytes]"));
  CHECK(j["b"] == "b");
}

TEST_CASE("fit_line: more than the room for every field's marker: the line stays too long, for the caller to drop") {
  std::vector<std::string> values(400, std::string(100, 'v'));
  std::vector<std::string*> fields;
  for (auto& v : values) fields.push_back(&v);
  auto render = [&] {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& v : values) j.push_back(v);
    return j.dump() + "\n";
  };
  CHECK(fit_line(fields, render).size() > kMaxLogLine);
}

TEST_CASE("refusal_line: long names from the sandbox are cut, the line is whole JSON of at most 4 KiB") {
  Refusal r;
  r.layer = RefusalLayer::network;
  r.what = std::string(15000, 'h') + ":443";
  r.allow_with = "--allow " + r.what;
  r.detail = {{"method", "CONNECT"}, {"host", std::string(15000, 'h')}, {"port", 443}, {"refusal", "not_allowed"},
              {"reason", "not in the allowlist"}};
  auto line = refusal_line(r, 1);
  CHECK(line.size() <= kMaxLogLine);
  auto j = parsed(line);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"time", "layer", "action", "what", "method", "host", "port", "refusal",
                                         "reason", "allow_with"});
  CHECK(j["method"] == "CONNECT");
  CHECK(j["reason"] == "not in the allowlist");
  CHECK(j["port"] == 443);
  for (const char* key : {"what", "host", "allow_with"}) CHECK(ends_with(j[key].get<std::string>(), "bytes]"));
}

TEST_CASE("RefusalCounts: a long name is counted by its beginning") {
  RefusalCounts counts;
  Refusal r;
  r.what = std::string(5000, 'n');
  counts.add(r);
  auto report = nlohmann::json::parse(counts.report_line());
  auto by_name = report["seccomp"]["by_name"];
  REQUIRE(by_name.size() == 1);
  CHECK(by_name.begin().key() == cut_text(r.what, kMaxCountedName));
}

TEST_CASE("LogBudget: lines up to the line cap, then one line saying so, then none; the end counts the rest") {
  LogBudget budget({3, 1 << 20});
  std::string line = "{\"n\":1}\n";
  for (int i = 0; i < 3; ++i) CHECK(budget.take(line, 5) == line);
  auto capped = budget.take(line, 6);
  CHECK(capped == "{\"time\":6,\"event\":\"log_cap_reached\",\"cap\":\"lines\",\"max_lines\":3,\"max_bytes\":1048576}\n");
  CHECK(budget.take(line, 7).empty());
  CHECK(budget.dropped_lines() == 2);
  CHECK(budget.dropped_bytes() == 2 * line.size());
  CHECK(budget.finish(8) == "{\"time\":8,\"event\":\"log_dropped\",\"lines\":2,\"bytes\":16}\n");
  // Once: nothing is taken or said after the end.
  CHECK(budget.finish(9).empty());
  CHECK(budget.take(line, 10).empty());
}

TEST_CASE("LogBudget: the byte cap") {
  LogBudget budget({100, 20});
  std::string line = "0123456789\n";  // 11 bytes
  CHECK(budget.take(line, 1) == line);
  CHECK(parsed(budget.take(line, 2))["cap"] == "bytes");
  CHECK(budget.take("\n", 3).empty());  // a line that would fit still waits for the next run: the file ends here
  CHECK(parsed(budget.finish(4))["bytes"] == 12);
}

TEST_CASE("LogBudget: nothing dropped, nothing said at the end; a line too long is dropped, never written") {
  LogBudget budget(kRefusalLogCaps);
  CHECK(budget.take("{}\n", 1) == "{}\n");
  CHECK(budget.finish(2).empty());
  CHECK(dropped_warning("--log", budget).empty());

  LogBudget other(kNetLogCaps);
  CHECK(other.take(std::string(kMaxLogLine, 'x') + "\n", 1).empty());
  CHECK(other.dropped_lines() == 1);
  CHECK(other.take("{}\n", 2) == "{}\n");  // not a cap: the lines after it are written
}

TEST_CASE("dropped_warning: how much, and the caps") {
  LogBudget budget({1, 1 << 20});
  budget.take("{}\n", 1);
  budget.take("{}\n", 1);
  budget.take("{}\n", 1);
  CHECK(dropped_warning("--net-log", budget) ==
        "--net-log: 2 lines (6 B) not written, past the cap of 1 lines or 1.0 MiB per run");
}

TEST_CASE("parse_log_caps: lines=N,bytes=N, either one, nothing else") {
  LogCaps standard{100, 200};
  auto both = parse_log_caps("lines=5,bytes=4096", standard);
  REQUIRE(both);
  CHECK(both->lines == 5);
  CHECK(both->bytes == 4096);
  auto lines = parse_log_caps("lines=7", standard);
  REQUIRE(lines);
  CHECK(lines->lines == 7);
  CHECK(lines->bytes == 200);
  for (const char* bad : {"lines=", "lines=x", "lines=0", "bytes=-1", "size=3", "lines=1,", "lines"})
    CHECK_FALSE(parse_log_caps(bad, standard));
}
