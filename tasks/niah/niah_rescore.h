// `foxeval niah score`: a result from predictions made elsewhere (pred.py's folder of
// Huggingface_len_L_depth_D.txt) or a `foxeval niah run` result scored again, with the offline
// scorer and, when a judge is set, the judge's ratings (eval.py's prompt).
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "tasks/niah/niah_judge.h"
#include "tasks/niah/niah_task.h"  // NiahSpec

namespace foxeval::niah {

struct RescoreSettings {
  NiahSpec spec;            // --mode, --needle, --question, --answer (and the grid, unused here)
  std::string pred_dir;     // --pred-dir, or
  std::string result_path;  // --result (exactly one of the two)
  std::string out_path;     // --out: the scored result
  JudgeSettings judge;      // url and model empty: no judge
};

// Checks the settings (errors name the flags), scores, writes the result to out_path atomically
// and returns it.
nlohmann::json rescore(const RescoreSettings& s);

}  // namespace foxeval::niah
