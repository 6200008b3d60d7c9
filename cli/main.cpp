// foxeval: evaluation harness for Forgetting Transformer checkpoints and their baselines.
//
// Exit codes (README "Exit codes"): 0 ok; 1 `check` found a regression; 2 bad input or usage
// (every refusal: a flag, file or field out of its range, a library error from bad input), with
// one message on stderr and no stack trace; 3 interrupted (state or journal saved; --resume).
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <string>

#include "cli/command.h"
#include "cli/launch.h"
#include "cli/validators.h"
#include "data/errors.h"

namespace {

constexpr int kBadInput = 2;

// One paragraph: control characters escaped (a message may quote a file or a server's reply),
// blank lines dropped, trailing space cut, at most 4000 bytes.
std::string one_paragraph(const std::string& what) {
  std::string out;
  for (const char ch : what) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      if (!out.empty() && out.back() != '\n') out += '\n';
    } else if (c == '\t') {
      out += ' ';
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (out.size() > 4000) out = out.substr(0, 4000) + " ...";
  return out.empty() ? std::string("unknown error") : out;
}

int refuse(const std::string& what) {
  std::fprintf(stderr, "foxeval: error: %s\n", one_paragraph(what).c_str());
  return kBadInput;
}

// Every FLOAT option of every command takes finite numbers only (NaN and infinity are never a
// meaningful setting); ranges are each flag's own.
void require_finite_floats(CLI::App* app) {
  for (CLI::Option* o : app->get_options())
    if (o->get_type_name().rfind("FLOAT", 0) == 0) o->check(foxeval::finite_number());
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) require_finite_floats(sub);
}

// Every option's help states its default: an option whose text does not say it gets the value it
// starts with ("[16384]"), or "(default: none)" / "(default: off)" when that is empty or a flag.
void state_defaults(CLI::App* app) {
  for (CLI::Option* o : app->get_options()) {
    const std::string desc = o->get_description();
    if (o->get_required() || desc.empty() || desc.find("default") != std::string::npos || o->get_name() == "--help" ||
        o->get_name() == "--version" || o->get_name().rfind("--help", 0) == 0)
      continue;
    if (o->get_expected_min() == 0) {
      o->description(desc + " (default: off)");
      continue;
    }
    o->capture_default_str();
    if (o->get_default_str().empty()) o->description(desc + " (default: none)");
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) state_defaults(sub);
}

}  // namespace

int main(int argc, char** argv) {
  // Pin the CPU thread pools as PyTorch's Python start does: at::set_num_threads also turns off
  // MKL's dynamic thread count (mkl_set_dynamic(false)), under which MKL may pick fewer threads
  // for a call when the machine is busy, and so another blocking and other bits (README: identical
  // runs give identical bits).
  at::set_num_threads(at::get_num_threads());
  CLI::App app{"foxeval: evaluate FoX-paper checkpoints (loss, niah, longbench, ...)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "foxeval 0.1");
  for (auto& setup : foxeval::command_setups()) setup(app);
  require_finite_floats(&app);
  state_defaults(&app);
  // Usage errors read like every other refusal: one line, the flag and what it allows.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "foxeval: error: " + one_paragraph(e.what()) + " (see --help)\n";
  });
  // After the subcommands exist, so that only the top-level help shows it.
  app.footer(
      "One run over several GPUs of this machine: foxeval --nproc-per-node N <command> ... (first on the line;\n"
      "torchrun, srun and mpirun work too, across nodes as well: see the README).\n"
      "Exit codes: 0 ok, 1 regression found by `check`, 2 bad input or usage, 3 interrupted (resume with --resume).");
  try {
    if (const auto code = foxeval::launch_local_processes(argc, argv)) return *code;
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error (unknown flag, value out of range) exits 2.
    return app.exit(e) == 0 ? 0 : kBadInput;
  } catch (const foxeval::Error& e) {
    return refuse(e.what());
  } catch (const c10::Error& e) {  // a tensor library error: its message without the C++ stack trace
    return refuse(e.what_without_backtrace());
  } catch (const std::filesystem::filesystem_error& e) {
    std::string where = e.path1().string();
    if (!e.path2().empty()) where += ", " + e.path2().string();
    return refuse(fmt::format("{}: {}", where.empty() ? std::string("file system") : where, e.code().message()));
  } catch (const std::bad_alloc&) {
    return refuse("out of memory (a size in the input or a flag is larger than this machine can hold)");
  } catch (const nlohmann::json::exception& e) {
    return refuse(fmt::format("unexpected JSON content: {}", e.what()));
  } catch (const std::exception& e) {
    return refuse(e.what());
  } catch (...) {
    return refuse("unknown error");
  }
  return 0;
}
