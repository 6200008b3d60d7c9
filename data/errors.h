// One exception type for user-facing errors: the message names the file, field or flag.
#pragma once
#include <stdexcept>
#include <string>

namespace foxeval {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace foxeval
