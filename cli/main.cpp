// foxeval: evaluation harness for Forgetting Transformer checkpoints and their baselines.
//
// Exit codes (README "Exit codes"): 0 ok; 1 `check` found a regression; 2 bad input or usage
// (every refusal: a flag, file or field out of its range, a library error from bad input), with
// one message on stderr and no stack trace; 3 interrupted (state or journal saved; --resume).
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
#include "cli/path_roles.h"
#include "cli/validators.h"
#include "data/errors.h"
#include "data/utf8.h"
#include "models/cpu_threads.h"

namespace {

constexpr int kBadInput = 2;

// One paragraph: control characters and bytes that are not UTF-8 escaped as \xNN (a message may
// quote a file, a path or a server's reply), blank lines dropped, trailing space cut, at most about
// 4000 bytes: a longer one keeps its start and its end (the reason usually follows a long path).
std::string one_paragraph(const std::string& what) {
  std::string out;
  for (size_t i = 0; i < what.size();) {
    const auto c = static_cast<unsigned char>(what[i]);
    if (c >= 0x80) {
      char32_t cp = 0;
      size_t bad_len = 0;
      const size_t n = foxeval::utf8::decode_one(what, i, &cp, &bad_len);
      if (n == 0) {
        out += fmt::format("\\x{:02x}", c);
        ++i;
      } else {
        out.append(what, i, n);
        i += n;
      }
      continue;
    }
    if (c == '\n') {
      if (!out.empty() && out.back() != '\n') out += '\n';
    } else if (c == '\t') {
      out += ' ';
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += what[i];
    }
    ++i;
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (out.size() > 4000) {
    // Cut on character boundaries (never inside a UTF-8 sequence).
    size_t head = 2000, tail = out.size() - 1900;
    while (head > 0 && (static_cast<unsigned char>(out[head]) & 0xC0) == 0x80) --head;
    while (tail < out.size() && (static_cast<unsigned char>(out[tail]) & 0xC0) == 0x80) ++tail;
    out = out.substr(0, head) + " ... " + out.substr(tail);
  }
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
  CLI::App app{"foxeval: evaluate FoX-paper checkpoints (loss, niah, longbench, ...)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "foxeval 0.1");
  for (auto& setup : foxeval::command_setups()) setup(app);
  require_finite_floats(&app);
  state_defaults(&app);
  // Before any subcommand's work: no output over an input, every value valid UTF-8 (cli/path_roles.h).
  app.parse_complete_callback([&app] { foxeval::check_command_paths(app); });
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
    // First, before anything calls into MKL: CPU results that no thread count can change
    // (models/cpu_threads.h; README: identical bits).
    foxeval::pin_cpu_numerics();
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
