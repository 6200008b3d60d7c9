#include "tasks/niah/niah_rescore.h"

#include <fmt/format.h>

#include <vector>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/url_secrets.h"
#include "tasks/niah/niah_score.h"
#include "tasks/run/result_file.h"

namespace foxeval::niah {

nlohmann::json rescore(const RescoreSettings& s) {
  if (s.pred_dir.empty() == s.result_path.empty()) throw Error("give one of --pred-dir and --result");
  if (s.judge.url.empty() != s.judge.model.empty()) throw Error("--judge-url and --judge-model go together");
  if (s.judge.url.empty() && s.judge.api_key_required) throw Error("--judge-key-env: there is no judge (--judge-url) to send a key to");
  NiahSpec spec = s.spec;
  std::vector<nlohmann::json> records;
  nlohmann::json identity;
  if (!s.pred_dir.empty()) {
    const ResolvedSpec r = resolve_spec(spec);
    records = read_prediction_folder(s.pred_dir, r.def.file_prefix);
    identity = score_identity(r, s.pred_dir);
  } else {
    const nlohmann::json prev = read_json(s.result_path);
    if (!prev.is_object() || !prev.contains("cells") || !prev.contains("header") || !prev["header"].is_object())
      throw Error(fmt::format("--result {}: not a `foxeval niah` result (no cells/header)", s.result_path));
    identity = prev["header"].value("settings", nlohmann::json::object());
    if (!identity.is_object() || !identity.contains("answer") || !identity["answer"].is_string() ||
        (identity.contains("mode") && !identity["mode"].is_string()))
      throw Error(fmt::format("--result {}: its settings carry no answer (or a mode that is not a string)", s.result_path));
    if (!prev["cells"].is_array()) throw Error(fmt::format("--result {}: \"cells\" must be a list", s.result_path));
    for (const nlohmann::json& c : prev["cells"]) {
      if (!c.is_object() || !c.contains("length") || !c["length"].is_number_integer() || !c.contains("depth") ||
          !c["depth"].is_number_integer() || !c.contains("prediction") || !c["prediction"].is_string())
        throw Error(fmt::format("--result {}: a cell needs an integer length and depth and a string prediction", s.result_path));
      nlohmann::json rec = c;
      for (const char* k : {"score", "answer_recall", "contains_answer", "judge_score", "judge_reply"}) rec.erase(k);
      records.push_back(rec);
    }
  }
  if (!s.judge.url.empty()) {
    Mode m = load_mode(identity.value("mode", spec.mode));
    const std::string question = spec.question.empty() ? m.judge_question : spec.question;
    const std::string reference = spec.needle.empty() ? m.judge_reference : spec.needle;
    judge_records(records, s.judge, question, reference);
    identity["judge_model"] = s.judge.model;
    identity["judge_url"] = url_without_secrets(s.judge.url);  // never a password or key in a result
  }
  nlohmann::json result;
  try {
    result = build_result(identity, records);
  } catch (const nlohmann::json::exception& e) {  // a hand-made --result or prediction records of the wrong types
    throw Error(fmt::format("{}: a cell has a field of the wrong type ({})", s.result_path.empty() ? s.pred_dir : s.result_path,
                            e.what()));
  }
  result["header"] = result_header("niah", identity, 0.0);
  write_json_atomic(s.out_path, result);
  return result;
}

}  // namespace foxeval::niah
