// Entries of one kind that register themselves by name at static initialization, from the file
// that defines them (model families: models/registry.h; run statistics: tasks/run/run_stats.h):
// kept in name order, and a name registered twice is a logic_error (a programming error, found as
// the binary starts). Hold one in a function's static, so it exists before the first registration.
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace foxeval {

template <class T>
class NamedRegistry {
 public:
  using Key = std::string (*)(const T&);
  // `what` names an entry in the error ("model family"); `key` gives an entry's name.
  NamedRegistry(const char* what, Key key) : what_(what), key_(key) {}

  void add(T entry) {
    const std::string name = key_(entry);
    auto at = std::lower_bound(entries_.begin(), entries_.end(), name,
                               [this](const T& e, const std::string& n) { return key_(e) < n; });
    if (at != entries_.end() && key_(*at) == name) throw std::logic_error(std::string(what_) + " '" + name + "' registered twice");
    entries_.insert(at, std::move(entry));
  }

  const std::vector<T>& entries() const { return entries_; }

 private:
  const char* what_;
  Key key_;
  std::vector<T> entries_;
};

}  // namespace foxeval
