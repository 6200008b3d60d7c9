// Every FOXEVAL_* environment switch, declared once: its meaning, its default, and whether it
// changes the numerics path (another kernel, another reduction order: other bits). A result made
// with a numerics switch off its default records it in its identity (`check` then refuses to hold
// it against a baseline made without it); the announcement names every switch off its default;
// `foxeval info --switches` lists them all. tests/test_switches.cpp holds the source tree to this
// list: a FOXEVAL_ name read anywhere must be declared here, and every one declared must be read.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace foxeval {

enum class SwitchKind {
  OnOff,  // on unless set to "0" (kernels/env_switch.h: an A/B switch that turns a fast path off)
  Value,  // unset by default; a value chooses something (a count, an implementation, a folder)
};

struct Switch {
  const char* name;
  SwitchKind kind;
  bool numerics;     // another value may change the numbers, not only the speed or the output
  const char* meaning;
};

// Every switch, by name.
const std::vector<Switch>& switches();
const Switch* find_switch(const std::string& name);  // nullptr: not declared

// The switches off their default in `lookup` (name -> its value, nullptr when unset): an OnOff
// switch set to "0", a Value switch set to anything but "".
std::map<std::string, std::string> nondefault_switches(const char* (*lookup)(const char*));
// The same for this process's environment, read once (the first call) and kept.
const std::map<std::string, std::string>& nondefault_switches();
// Of those, the ones that change numbers: what a result's identity records ({} when none).
std::map<std::string, std::string> numerics_switches();
// "FOXEVAL_FA_IMPL=mma FOXEVAL_PDL=0" for the announcement; "" when every switch is at its default.
std::string nondefault_switches_text();

}  // namespace foxeval
