// compile-workload.cc — the "real workload" of bench/syscall: a small but ordinary C++ translation unit that
// g++ compiles (-O1 -c) several times inside each sandbox. It is never run. Its cost is dominated, as in real
// builds, by parsing the standard headers (hundreds of header opens and lookups) and by code generation.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace inventory {

enum class Category { tool, part, material, other };

struct Item {
  std::string sku;
  std::string name;
  Category category = Category::other;
  int quantity = 0;
  std::int64_t price_cents = 0;
  std::vector<std::string> tags;
};

std::string to_string(Category c) {
  switch (c) {
    case Category::tool: return "tool";
    case Category::part: return "part";
    case Category::material: return "material";
    case Category::other: return "other";
  }
  return "?";
}

std::optional<Category> parse_category(const std::string& s) {
  static const std::map<std::string, Category> names = {
      {"tool", Category::tool}, {"part", Category::part}, {"material", Category::material}, {"other", Category::other}};
  auto it = names.find(s);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  return out;
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return c != ' ' && c != '\t' && c != '\r' && c != '\n'; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

class ParseError : public std::runtime_error {
 public:
  ParseError(std::size_t line, const std::string& what)
      : std::runtime_error("line " + std::to_string(line) + ": " + what), line_(line) {}
  std::size_t line() const { return line_; }

 private:
  std::size_t line_;
};

Item parse_item(const std::string& line, std::size_t lineno) {
  auto f = split(line, ',');
  if (f.size() < 5) throw ParseError(lineno, "expected at least 5 fields, got " + std::to_string(f.size()));
  Item it;
  it.sku = trim(f[0]);
  it.name = trim(f[1]);
  auto cat = parse_category(trim(f[2]));
  if (!cat) throw ParseError(lineno, "unknown category '" + trim(f[2]) + "'");
  it.category = *cat;
  try {
    it.quantity = std::stoi(trim(f[3]));
    it.price_cents = std::stoll(trim(f[4]));
  } catch (const std::exception& e) {
    throw ParseError(lineno, std::string("bad number: ") + e.what());
  }
  for (std::size_t i = 5; i < f.size(); ++i)
    if (auto t = trim(f[i]); !t.empty()) it.tags.push_back(t);
  return it;
}

class Inventory {
 public:
  void add(Item item) {
    auto [pos, inserted] = index_.emplace(item.sku, items_.size());
    if (!inserted) {
      Item& old = items_[pos->second];
      old.quantity += item.quantity;
      old.price_cents = item.price_cents;
      for (auto& t : item.tags)
        if (std::find(old.tags.begin(), old.tags.end(), t) == old.tags.end()) old.tags.push_back(std::move(t));
      return;
    }
    items_.push_back(std::move(item));
  }

  const Item* find(const std::string& sku) const {
    auto it = index_.find(sku);
    return it == index_.end() ? nullptr : &items_[it->second];
  }

  std::int64_t total_value() const {
    return std::accumulate(items_.begin(), items_.end(), std::int64_t{0},
                           [](std::int64_t acc, const Item& i) { return acc + i.price_cents * i.quantity; });
  }

  std::map<Category, std::vector<const Item*>> by_category() const {
    std::map<Category, std::vector<const Item*>> out;
    for (const auto& i : items_) out[i.category].push_back(&i);
    for (auto& [cat, v] : out)
      std::sort(v.begin(), v.end(), [](const Item* a, const Item* b) { return a->name < b->name; });
    return out;
  }

  std::map<std::string, int> tag_counts() const {
    std::map<std::string, int> out;
    for (const auto& i : items_)
      for (const auto& t : i.tags) ++out[t];
    return out;
  }

  std::vector<const Item*> low_stock(int threshold) const {
    std::vector<const Item*> out;
    for (const auto& i : items_)
      if (i.quantity < threshold) out.push_back(&i);
    std::stable_sort(out.begin(), out.end(), [](const Item* a, const Item* b) { return a->quantity < b->quantity; });
    return out;
  }

  std::size_t size() const { return items_.size(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, std::size_t> index_;
};

std::string money(std::int64_t cents) {
  std::ostringstream o;
  if (cents < 0) { o << '-'; cents = -cents; }
  o << cents / 100 << '.' << (cents % 100 < 10 ? "0" : "") << cents % 100;
  return o.str();
}

void report(const Inventory& inv, std::ostream& out) {
  out << "items: " << inv.size() << ", total value " << money(inv.total_value()) << "\n";
  for (const auto& [cat, items] : inv.by_category()) {
    out << "[" << to_string(cat) << "]\n";
    for (const Item* i : items)
      out << "  " << i->sku << "  " << i->name << "  x" << i->quantity << "  @ " << money(i->price_cents) << "\n";
  }
  auto tags = inv.tag_counts();
  std::vector<std::pair<std::string, int>> sorted(tags.begin(), tags.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  out << "tags:";
  for (const auto& [t, n] : sorted) out << " " << t << "(" << n << ")";
  out << "\n";
  for (const Item* i : inv.low_stock(5)) out << "low stock: " << i->sku << " (" << i->quantity << ")\n";
}

}  // namespace inventory

int main(int argc, char** argv) {
  using namespace inventory;
  Inventory inv;
  std::vector<std::string> errors;
  std::string line;
  std::size_t lineno = 0;
  while (std::getline(std::cin, line)) {
    ++lineno;
    if (trim(line).empty() || line[0] == '#') continue;
    try {
      inv.add(parse_item(line, lineno));
    } catch (const ParseError& e) {
      errors.push_back(e.what());
    }
  }
  report(inv, std::cout);
  for (const auto& e : errors) std::cerr << "error: " << e << "\n";
  if (argc > 1) {
    for (int a = 1; a < argc; ++a) {
      const Item* i = inv.find(argv[a]);
      std::cout << argv[a] << ": " << (i ? i->name + " x" + std::to_string(i->quantity) : std::string("not found"))
                << "\n";
    }
  }
  return errors.empty() ? 0 : 1;
}
