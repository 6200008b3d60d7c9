// Every FOXEVAL_* environment switch, declared once: its meaning, its default, and whether it
// changes the numerics path (another kernel, another reduction order: other bits). A result made
// with a numerics switch off its default records it in its identity (`check` then refuses to hold
// it against a baseline made without it); the announcement names every switch off its default;
// `foxeval info --switches` lists them all. tests/test_switches.cpp holds the source tree to this
// list: a FOXEVAL_ name read anywhere must be declared here, and every one declared must be read.
//
// Read once: the first read of any switch (switch_value, switch_on, SwitchSlot, nondefault_switches)
// reads every declared one from the environment and keeps them, so a switch cannot change between
// two launches of one run, and the result's identity, the announcement and every kernel see the same
// values. The kernels and models read switches only here (never getenv). Only a SwitchOverride
// changes one later (tests, and benchmarks that time two paths in one process).
#pragma once
#include <cstddef>
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

// This process's value of the declared switch `name` (nullptr: unset or ""). An undeclared name throws
// std::logic_error (a name misspelt in the code, not a user's error).
const char* switch_value(const char* name);
// An OnOff switch: false when set to "0". Throws std::logic_error for an undeclared name or a Value switch.
bool switch_on(const char* name);

// A declared switch found once, for code that reads it at every launch (keep it in a function-local
// static): value() and on() are then one array read, and still see a SwitchOverride.
class SwitchSlot {
 public:
  explicit SwitchSlot(const char* name);  // throws std::logic_error as switch_value does
  const char* value() const;              // nullptr: unset or ""
  bool on() const;                        // as switch_on (a Value switch throws)

 private:
  size_t index_;
};

// Sets a switch for this process until destroyed, then puts the previous value back: the one way a
// switch changes after the first read. For tests and for benchmarks that time two paths in one
// process, never from a run's options. Not thread-safe: make and drop it while no other thread reads
// switches (no kernel launches in flight on another host thread).
class SwitchOverride {
 public:
  SwitchOverride(const char* name, const char* value);  // value nullptr or "": the switch unset
  ~SwitchOverride();
  SwitchOverride(const SwitchOverride&) = delete;
  SwitchOverride& operator=(const SwitchOverride&) = delete;

 private:
  size_t index_;
  bool had_;
  std::string old_;
};

// The switches off their default in `lookup` (name -> its value, nullptr when unset): an OnOff
// switch set to "0", a Value switch set to anything but "".
std::map<std::string, std::string> nondefault_switches(const char* (*lookup)(const char*));
// The same for this process's switches (the environment as first read, with any SwitchOverride).
std::map<std::string, std::string> nondefault_switches();
// Of those, the ones that change numbers: what a result's identity records ({} when none).
std::map<std::string, std::string> numerics_switches();
// "FOXEVAL_FA_IMPL=mma FOXEVAL_PDL=0" for the announcement; "" when every switch is at its default.
std::string nondefault_switches_text();

}  // namespace foxeval
