#include "data/switches.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace foxeval {

const std::vector<Switch>& switches() {
  using K = SwitchKind;
  // numerics: true where another value runs other arithmetic (another kernel, another split of a
  // reduction), even where a test shows equal bits on the inputs it covers; false where only the
  // schedule, the launch, the timing or where a file is found changes.
  static const std::vector<Switch> all = {
      {"FOXEVAL_BABILONG_DIR", K::Value, false, "folder holding babilong_tasks.json instead of the bundled one"},
      {"FOXEVAL_DECODE_SPLIT_KEYS", K::Value, true, "fewest keys a decode attention split takes: 64|256 (default 128)"},
      {"FOXEVAL_DIST_TIMEOUT", K::Value, false, "seconds to reach a distributed run's store, and for any one wait (default 300)"},
      {"FOXEVAL_FA_CTAS", K::Value, false, "caps the persistent prefill attention grid at N CTAs (tests)"},
      {"FOXEVAL_FA_GROUP", K::Value, false, "prefill attention tiles grouped for L2 reuse: the group size (tuning)"},
      {"FOXEVAL_FA_GTC", K::OnOff, true, "0: the forget gate as an ALU column term instead of on the tensor cores"},
      {"FOXEVAL_FA_IMPL", K::Value, true, "prefill attention kernel: mma|ws (default: ws on sm_90, else mma)"},
      {"FOXEVAL_FA_OPT", K::OnOff, true, "0: no optimistic softmax rescaling in the ws prefill kernel"},
      {"FOXEVAL_FA_PERSIST", K::OnOff, false, "0: one CTA a tile instead of the persistent tile queue"},
      {"FOXEVAL_FA_SKIP", K::OnOff, true, "0: the ws prefill kernel computes dead key blocks instead of skipping them"},
      {"FOXEVAL_FA_TIE", K::OnOff, true, "0: no tied softmax maxima in the ws prefill kernel"},
      {"FOXEVAL_FUSED_GLUE", K::OnOff, true, "0: the FoX block's separate glue kernels instead of the fused ones"},
      {"FOXEVAL_FUSED_PROJ", K::OnOff, true, "0: one matmul per input projection in the FoX prefill instead of one for all"},
      {"FOXEVAL_GEMV", K::OnOff, true, "0: at::linear instead of the small-batch GEMV kernel"},
      {"FOXEVAL_GEMV_UNROLL", K::Value, true, "4: the GEMV's earlier unroll (A/B)"},
      {"FOXEVAL_GLA_GROUPS", K::Value, true, "fixes the GLA scan's number of groups (1: one sequential pass)"},
      {"FOXEVAL_GLU_CTAS", K::Value, false, "caps the gate_up GEMM's grid at N CTAs (tests)"},
      {"FOXEVAL_GLU_GEMM", K::OnOff, true, "0: linear + fused SwiGLU instead of the gate_up GEMM with SwiGLU epilogue"},
      {"FOXEVAL_GPT2_DIR", K::Value, false, "folder holding GPT-2's encoder.json and vocab.bpe instead of the bundled ones"},
      {"FOXEVAL_GREEDY_PICK", K::OnOff, true, "0: ATen ops instead of the greedy-pick kernel"},
      {"FOXEVAL_HEARTBEAT_TIMEOUT", K::Value, false, "seconds without a heartbeat before a rank counts as dead (default 60)"},
      {"FOXEVAL_JIEBA_DIR", K::Value, false, "folder holding jieba's dictionary files"},
      {"FOXEVAL_LM_HEAD_CTAS", K::Value, false, "caps the fused LM-head loss grid at N CTAs (tests)"},
      {"FOXEVAL_LM_HEAD_LOSS", K::OnOff, true, "0: LM head then log-softmax instead of the fused LM-head loss kernel"},
      {"FOXEVAL_LONGBENCH_CONFIG", K::Value, false, "folder holding LongBench's dataset2prompt.json and dataset2maxlen.json"},
      {"FOXEVAL_NIAH_DIR", K::Value, false, "folder holding the NIAH definition files"},
      {"FOXEVAL_PDL", K::OnOff, false, "0: the decode step's kernels launched without programmatic dependent launch"},
      {"FOXEVAL_PREFILL_PREP", K::OnOff, true, "0: separate q/k/v glue and forget-gate scan kernels in the prefill"},
      {"FOXEVAL_PROGRESS_SECONDS", K::Value, false, "seconds between generation progress lines (0: after every run)"},
      {"FOXEVAL_RECURRENT_IMPL", K::Value, true, "aten: the recurrent families' ATen scans instead of the kernels"},
      {"FOXEVAL_RECURRENT_SEGMENT", K::Value, true, "recurrent prefill segment in tokens (default 16384)"},
      {"FOXEVAL_RULER_DATA", K::Value, false, "folder holding RULER QA's dev-v2.0.json and hotpot_dev_distractor_v1.json"},
      {"FOXEVAL_RULER_DIR", K::Value, false, "folder holding ruler_tasks.json"},
      {"FOXEVAL_SUITE_PRESETS", K::Value, false, "folder holding the suite presets (smoke.yaml, ...) instead of the bundled ones"},
      {"FOXEVAL_TASKS_DIR", K::Value, false, "folder holding lm_eval/tasks.json and the datasets' loading scripts"},
      {"FOXEVAL_TEST_DIE_AFTER", K::Value, false, "tests: a distributed rank dies after N items"},
      {"FOXEVAL_TEST_DIE_RANK", K::Value, false, "tests: the rank FOXEVAL_TEST_DIE_AFTER kills (default 1)"},
      {"FOXEVAL_TIMING", K::Value, false, "1: time the named model stages (synchronizing) and print them at exit"},
  };
  return all;
}

const Switch* find_switch(const std::string& name) {
  for (const Switch& s : switches())
    if (name == s.name) return &s;
  return nullptr;
}

namespace {

// Every declared switch's value, parallel to switches(): the environment when first asked, then only
// what a SwitchOverride sets. Unset and "" are the same (the default).
struct SwitchTable {
  std::vector<std::string> value;
  std::vector<bool> set;
};

SwitchTable& table() {
  static SwitchTable t = [] {
    SwitchTable t;
    for (const Switch& s : switches()) {
      const char* v = std::getenv(s.name);
      t.set.push_back(v && *v);
      t.value.emplace_back(v && *v ? v : "");
    }
    return t;
  }();
  return t;
}

size_t index_of(const char* name) {
  const std::vector<Switch>& all = switches();
  for (size_t i = 0; i < all.size(); ++i)
    if (std::strcmp(all[i].name, name) == 0) return i;
  throw std::logic_error(std::string("undeclared switch ") + name + " (declare it in data/switches.cpp)");
}

const char* value_at(size_t i) {
  const SwitchTable& t = table();
  return t.set[i] ? t.value[i].c_str() : nullptr;
}

bool on_at(size_t i) {
  const Switch& s = switches()[i];
  if (s.kind != SwitchKind::OnOff) throw std::logic_error(std::string(s.name) + " is a value switch, not an on/off one");
  const char* v = value_at(i);
  return !(v && std::strcmp(v, "0") == 0);
}

}  // namespace

const char* switch_value(const char* name) { return value_at(index_of(name)); }
bool switch_on(const char* name) { return on_at(index_of(name)); }

SwitchSlot::SwitchSlot(const char* name) : index_(index_of(name)) {}
const char* SwitchSlot::value() const { return value_at(index_); }
bool SwitchSlot::on() const { return on_at(index_); }

SwitchOverride::SwitchOverride(const char* name, const char* value) : index_(index_of(name)) {
  SwitchTable& t = table();
  had_ = t.set[index_];
  old_ = t.value[index_];
  t.set[index_] = value && *value;
  t.value[index_] = value && *value ? value : "";
}

SwitchOverride::~SwitchOverride() {
  SwitchTable& t = table();
  t.set[index_] = had_;
  t.value[index_] = old_;
}

std::map<std::string, std::string> nondefault_switches(const char* (*lookup)(const char*)) {
  std::map<std::string, std::string> out;
  for (const Switch& s : switches()) {
    const char* v = lookup(s.name);
    if (!v || !*v) continue;
    if (s.kind == SwitchKind::OnOff && std::strcmp(v, "0") != 0) continue;  // on: the default
    out[s.name] = v;
  }
  return out;
}

std::map<std::string, std::string> nondefault_switches() { return nondefault_switches(switch_value); }

std::map<std::string, std::string> numerics_switches() {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : nondefault_switches())
    if (find_switch(name)->numerics) out[name] = value;
  return out;
}

std::string nondefault_switches_text() {
  std::string text;
  for (const auto& [name, value] : nondefault_switches()) text += (text.empty() ? "" : " ") + name + "=" + value;
  return text;
}

}  // namespace foxeval
