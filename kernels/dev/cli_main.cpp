// Minimal stand-in for cli/main.cpp: runs the registered subcommands.
#include <cstdio>
#include <exception>

#include "cli/command.h"

int main(int argc, char** argv) {
  CLI::App app{"fa_cli"};
  app.require_subcommand(1);
  for (auto& setup : foxeval::command_setups()) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
