// foxeval: evaluation harness for Forgetting Transformer checkpoints and their baselines.
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "cli/command.h"
#include "cli/launch.h"
#include "data/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"foxeval: evaluate FoX-paper checkpoints (loss, niah, longbench, ...)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "foxeval 0.1");
  for (auto& setup : foxeval::command_setups()) setup(app);
  // After the subcommands exist, so that only the top-level help shows it.
  app.footer(
      "One run over several GPUs of this machine: foxeval --nproc-per-node N <command> ... (first on the line;\n"
      "torchrun, srun and mpirun work too, across nodes as well: see the README).");
  try {
    if (const auto code = foxeval::launch_local_processes(argc, argv)) return *code;
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const foxeval::Error& e) {
    std::fprintf(stderr, "foxeval: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foxeval: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
