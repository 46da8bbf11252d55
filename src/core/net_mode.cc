#include "core/net_mode.h"

#include <algorithm>
#include <iterator>

namespace confine {
namespace {

struct NetWord {
  std::string_view word;
  NetChoice choice;
};

constexpr NetWord kNetWords[] = {
    {"none", {NetMode::none, false}},
    {"proxy", {NetMode::proxy, false}},
    {"veth", {NetMode::proxy, true}},
    {"host", {NetMode::host, false}},
};

}  // namespace

std::string net_words_text() {
  std::string out;
  for (std::size_t i = 0; i < std::size(kNetWords); ++i) {
    const char* separator = i == 0 ? "" : i + 1 == std::size(kNetWords) ? " or " : ", ";
    out += separator + ("`" + std::string(kNetWords[i].word) + "`");
  }
  return out;
}

sys::Result<NetChoice> parse_net(std::string_view word) {
  auto it = std::find_if(std::begin(kNetWords), std::end(kNetWords), [&](const NetWord& w) { return w.word == word; });
  if (it == std::end(kNetWords)) return sys::plain_error("--net `" + std::string(word) + "`: expected " + net_words_text());
  return it->choice;
}

std::string_view net_word(NetChoice choice) {
  auto it = std::find_if(std::begin(kNetWords), std::end(kNetWords), [&](const NetWord& w) { return w.choice == choice; });
  return it == std::end(kNetWords) ? std::string_view{} : it->word;
}

std::vector<std::string> net_words() {
  std::vector<std::string> words;
  for (const auto& w : kNetWords) words.emplace_back(w.word);
  return words;
}

}  // namespace confine
