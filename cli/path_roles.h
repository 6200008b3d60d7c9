// What a command's paths are for, checked once for every command before any work (main.cpp calls
// check_command_paths from the root's parse-complete callback, which runs before a subcommand's
// own callback):
//   - every value is valid UTF-8 (a path that is not cannot be named in a result or a message);
//   - no output is, is inside, or writes beside an input (data/path_overlap.h).
// Outputs are the options named --out / -o, --output_path, --log-samples and --matrices, plus
// any marked with mark_output (`niah run --pred-dir`, which `niah score` reads; `bench tokenizer
// --json`). Files a command writes elsewhere are still checked by the one writer
// (data/path_overlap.h's refuse_writing_over_input). Every other option value that names something
// on disk is an input, including the paths inside key=value lists (--model_args pretrained=DIR),
// so a new flag is covered unmarked.
#pragma once
#include <CLI/CLI.hpp>

namespace foxeval {

CLI::Option* mark_output(CLI::Option* option);
void check_command_paths(const CLI::App& root);

}  // namespace foxeval
