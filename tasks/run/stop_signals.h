// SIGINT/SIGTERM as a request to stop cleanly. While a StopSignals lives, the two signals only set a
// flag that long loops poll (journal or save the state, then stop with exit 3); when it goes, the
// caller's handlers come back. Used by the task runner (tasks/run/runner.h), for every task.
#pragma once

namespace foxeval {

class StopSignals {
 public:
  StopSignals();   // installs the flag-setting handlers and clears the flag
  ~StopSignals();  // restores the handlers that were there before
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  int received() const;  // the signal that arrived since construction, 0 if none
  // From now on both signals are ignored (the result is being written: a late signal must not turn
  // a finished run into a killed one); the destructor still restores the caller's handlers.
  static void ignore();

 private:
  void (*old_int_)(int);
  void (*old_term_)(int);
};

}  // namespace foxeval
