// A JSON object's fields read into a struct's members by key, for the definition files that
// benchmarks keep as data (tasks/ruler/ruler_tasks.json):
//
//   read_fields(section, "template", d.template_text, "num_samples", d.num_samples);
//
// and one section of such a file read with the file and section named in every error.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <utility>

#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {

inline void read_fields(const nlohmann::json&) {}

// Each KEY, member pair: member = object.at(KEY), converted as nlohmann converts (a missing key
// or a wrong type throws nlohmann::json::exception).
template <class T, class... Rest>
void read_fields(const nlohmann::json& object, const char* key, T& member, Rest&&... rest) {
  object.at(key).get_to(member);
  read_fields(object, std::forward<Rest>(rest)...);
}

// A Def read by read(the file's `section`, def); nlohmann's errors become foxeval::Error
// "PATH: field 'SECTION': ...".
template <class Def, class Read>
Def read_json_section(const std::string& path, const char* section, Read read) {
  const nlohmann::json j = read_json(path);
  try {
    Def d;
    read(j.at(section), d);
    return d;
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": field '" + section + "': " + e.what());
  }
}

}  // namespace foxeval
