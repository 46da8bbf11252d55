#include "core/net_door.h"

#include <algorithm>
#include <iterator>

namespace confine {
namespace {

struct DoorWord {
  NetDoor door;
  std::string_view word;
};

constexpr DoorWord kDoorWords[] = {
    {NetDoor::tcp, "TCP"}, {NetDoor::udp, "UDP"}, {NetDoor::forward, "FORWARD"}, {NetDoor::dns, "DNS"}, {NetDoor::publish, "PUBLISH"},
};

}  // namespace

std::string_view net_door_word(NetDoor door) {
  auto it = std::find_if(std::begin(kDoorWords), std::end(kDoorWords), [&](const DoorWord& w) { return w.door == door; });
  return it == std::end(kDoorWords) ? std::string_view{"?"} : it->word;
}

NetDoor net_door_of(std::string_view method) {
  auto it = std::find_if(std::begin(kDoorWords), std::end(kDoorWords), [&](const DoorWord& w) { return w.word == method; });
  return it == std::end(kDoorWords) ? NetDoor::request : it->door;
}

}  // namespace confine
