#include "core/dns_names.h"

#include <algorithm>

namespace confine {
namespace {

// Offsets count from 1, so the first name gets 127.77.0.1 and the network address is never handed out.
Ipv4 address_at(std::size_t index) {
  auto offset = index + 1;
  return Ipv4{{kSyntheticNetwork.octets[0], kSyntheticNetwork.octets[1], static_cast<std::uint8_t>(offset >> 8),
               static_cast<std::uint8_t>(offset & 0xff)}};
}

}  // namespace

std::string Ipv4::text() const {
  return std::to_string(octets[0]) + "." + std::to_string(octets[1]) + "." + std::to_string(octets[2]) + "." +
         std::to_string(octets[3]);
}

AddressBook::AddressBook(std::size_t capacity) : capacity_(std::min(capacity, kRangeSize)) {}

std::optional<Ipv4> AddressBook::address_for(std::string_view name) {
  if (auto it = index_of_.find(std::string(name)); it != index_of_.end()) return address_at(it->second);
  if (names_.size() >= capacity_) return std::nullopt;
  index_of_.emplace(name, names_.size());
  names_.emplace_back(name);
  return address_at(names_.size() - 1);
}

std::optional<std::string_view> AddressBook::name_at(Ipv4 address) const {
  if (address.octets[0] != kSyntheticNetwork.octets[0] || address.octets[1] != kSyntheticNetwork.octets[1])
    return std::nullopt;
  std::size_t offset = (std::size_t{address.octets[2]} << 8) | address.octets[3];
  if (offset == 0 || offset > names_.size()) return std::nullopt;
  return names_[offset - 1];
}

}  // namespace confine
