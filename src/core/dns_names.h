// The DNS stub's address book: the address confine hands out for each allowed name the sandbox asked for, and the
// way back from an address to its name, which tells a transparent connection which name it meant. Pure, one per run.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace confine {

struct Ipv4 {
  std::array<std::uint8_t, 4> octets{};
  auto operator<=>(const Ipv4&) const = default;
  [[nodiscard]] std::string text() const;  // dotted quad
};

// 127.77.0.0/16: loopback, so every address in it reaches the sandbox's own `lo` with no route or interface to
// add, and unused inside (confine's own listeners and loopback forwards are on 127.0.0.1).
inline constexpr Ipv4 kSyntheticNetwork{{127, 77, 0, 0}};

class AddressBook {
 public:
  // Distinct names a run may resolve. A wildcard entry admits endless names, so the book is bounded: past it, a
  // new name gets no address (the stub answers SERVFAIL) while every name already in the book keeps its own.
  static constexpr std::size_t kDefaultCapacity = 4096;
  // The /16 holds 65534 usable addresses (not .0.0 and .255.255): a larger capacity is clamped to that.
  static constexpr std::size_t kRangeSize = 65534;

  explicit AddressBook(std::size_t capacity = kDefaultCapacity);

  // The name's address, given on its first request and the same for the rest of the run; nullopt when the book
  // is full. `name` is a normalised host name (lower case, no trailing dot).
  [[nodiscard]] std::optional<Ipv4> address_for(std::string_view name);
  // The name an address was given to; nullopt for any address the book did not hand out.
  [[nodiscard]] std::optional<std::string_view> name_at(Ipv4 address) const;
  [[nodiscard]] std::size_t size() const { return names_.size(); }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::vector<std::string> names_;  // names_[i] has address kSyntheticNetwork + i + 1
  std::unordered_map<std::string, std::size_t> index_of_;
};

}  // namespace confine
