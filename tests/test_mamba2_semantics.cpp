// Mamba-2 with the mamba_ssm kernels' dt semantics (the paper's): against the official
// logits_fp32_kernels on a single-chunk and a three-chunk fixture; the official torch path's
// clamp (Mamba2Dt::kTorchClamp) against its logits_fp32; time_step_limit honoured as dt_limit
// in all the spellings of infinity that config.json files carry; held-out configs against the
// official code run on mamba_ssm's kernels; and the Python-JSON reader.
#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/errors.h"
#include "data/python/python_json.h"
#include "data/safetensors.h"
#include "models/checkpoint/checkpoint.h"
#include "models/mamba2/mamba2_model.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

using namespace foxeval;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) {
  return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/official/" + name;
}

std::unique_ptr<CausalLM> load_mamba2(const std::string& dir, Mamba2Dt dt) {
  Checkpoint ckpt(dir);
  RunOptions options;
  options.dtype = "float32";
  auto model = make_mamba2(ckpt, options, dt);
  ckpt.finish();
  return model;
}

at::Tensor logits(CausalLM& model, const at::Tensor& ids) {
  return at::linear(model.forward(ids, nullptr), model.lm_head()).to(at::kDouble);
}

// Per-token loss of ids[:, 1:] given logits[:, :-1], in fp64.
using foxeval::test::next_token_loss;

struct Diff {
  double loss_mean, loss_max, rel_mean, rel_max;
};

Diff compare(const at::Tensor& ours, const at::Tensor& ref_f, const at::Tensor& ids) {
  at::Tensor ref = ref_f.to(at::kDouble);
  at::Tensor dl = (next_token_loss(ours, ids) - next_token_loss(ref, ids)).abs();
  at::Tensor rel = (ours - ref).norm(2, {-1}) / ref.norm(2, {-1});
  return {dl.mean().item<double>(), dl.max().item<double>(), rel.mean().item<double>(), rel.max().item<double>()};
}

std::string describe(const Diff& d) {
  return fmt::format("loss diff mean {:.2e} max {:.2e}; logit rel err mean {:.2e} max {:.2e}", d.loss_mean, d.loss_max,
                     d.rel_mean, d.rel_max);
}

// A checkpoint directory: `base`'s weights (copied: a symlink out of a model folder is refused,
// data/model_files.h) with config.json text `config_text`.
struct ConfigVariant {
  test::TempDir dir{"mamba2_cfg"};
  ConfigVariant(const std::string& base, const std::string& config_text) {
    std::ofstream(dir.path / "config.json") << config_text;
    fs::copy_file(fs::path(base) / "model.safetensors", dir.path / "model.safetensors");
  }
  std::string path() const { return dir.path.string(); }
};

// The fixture's config.json text with its time_step_limit value replaced by `value` (raw JSON
// text, so that bare Infinity can be written), or removed when `value` is empty.
std::string config_with_limit(const std::string& base, const std::string& value) {
  nlohmann::json cfg = read_python_json(base + "/config.json");
  cfg.erase("time_step_limit");
  std::string text = cfg.dump(2);
  if (value.empty()) return text;
  const size_t close = text.rfind('}');
  return text.substr(0, close) + ",\n  \"time_step_limit\": " + value + "\n}\n";
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Relative max error of a prefill of ids[:, :p], `steps` single-token steps, then the rest,
// against one prefill of ids (hidden states).
double decode_vs_prefill(CausalLM& model, const at::Tensor& ids, int64_t p, int64_t steps) {
  const int64_t T = ids.size(1);
  at::Tensor full = model.forward(ids, nullptr);
  auto state = model.new_state(ids.size(0), at::Tensor());
  std::vector<at::Tensor> parts{model.forward(ids.narrow(1, 0, p), state.get())};
  for (int64_t t = p; t < p + steps; ++t) parts.push_back(model.forward(ids.narrow(1, t, 1), state.get()));
  parts.push_back(model.forward(ids.narrow(1, p + steps, T - p - steps), state.get()));
  return max_abs_diff(at::cat(parts, 1), full) / full.abs().max().item<double>();
}

}  // namespace

TEST_CASE("mamba2 semantics: official fixtures, fp32, kernels' dt vs logits_fp32_kernels") {
  for (const char* name : {"mamba2", "mamba2_multichunk"}) {
    const std::string dir = fixture(name);
    SafetensorsFile ref(dir + "/reference.safetensors");
    at::Tensor ids = ref.read("input_ids");
    at::Tensor ours = logits(*load_mamba2(dir, Mamba2Dt::kKernels), ids);
    const Diff d = compare(ours, ref.read("logits_fp32_kernels"), ids);
    MESSAGE(fmt::format("{} (T={}) kernels' dt vs logits_fp32_kernels: {}", name, ids.size(1), describe(d)));
    // The issue's bar is 2e-5 mean, 2e-4 max per-token loss; measured on CPU: about 1.4e-7
    // mean, 7e-7 max (loss) and 3e-7 mean, 6e-7 max (logits), fp32 rounding in a different
    // order. Gated at ~7x the measurement, well inside the issue's bar.
    CHECK(d.loss_mean < 1e-6);
    CHECK(d.loss_max < 5e-6);
    CHECK(d.rel_mean < 1e-6);
    CHECK(d.rel_max < 5e-6);
    // The clamp is visible at this precision: the same logits are much further from the
    // clamped reference, so the bar above tells the two semantics apart.
    const Diff c = compare(ours, ref.read("logits_fp32"), ids);
    MESSAGE(fmt::format("{} kernels' dt vs logits_fp32 (clamped): {}", name, describe(c)));
    // (measured: 1.6e-4 mean, 3.5e-3 max at T=128; 4.1e-4, 5.7e-3 at T=700: the issue's bar
    // of 2e-4 max rejects the clamp)
    CHECK(c.loss_mean > 1e-4);
    CHECK(c.loss_max > 2e-4);
  }
}

TEST_CASE("mamba2 semantics: official fixtures, fp32, torch path's clamp vs logits_fp32") {
  for (const char* name : {"mamba2", "mamba2_multichunk"}) {
    const std::string dir = fixture(name);
    SafetensorsFile ref(dir + "/reference.safetensors");
    at::Tensor ids = ref.read("input_ids");
    const Diff d = compare(logits(*load_mamba2(dir, Mamba2Dt::kTorchClamp), ids), ref.read("logits_fp32"), ids);
    MESSAGE(fmt::format("{} torch clamp vs logits_fp32: {}", name, describe(d)));
    CHECK(d.loss_mean < 1e-6);  // measured as above: 1.3-1.5e-7 mean, 6-7e-7 max
    CHECK(d.loss_max < 5e-6);
    CHECK(d.rel_mean < 1e-6);
    CHECK(d.rel_max < 5e-6);
  }
}

TEST_CASE("mamba2 semantics: time_step_limit is mamba_ssm's dt_limit, in every spelling of infinity") {
  const std::string base = fixture("mamba2_multichunk");
  at::Tensor ids = SafetensorsFile(base + "/reference.safetensors").read("input_ids").narrow(1, 0, 300);
  auto run = [&](const std::string& limit, Mamba2Dt dt = Mamba2Dt::kKernels) {
    ConfigVariant v(base, config_with_limit(base, limit));
    return logits(*load_mamba2(v.path(), dt), ids);
  };
  const at::Tensor absent = run("");
  // (0, inf) is no limit, however written: Python's json.dump writes bare Infinity, which
  // strict JSON parsers reject; transformers writes {"__float__": "Infinity"}.
  for (const char* spelling : {"[0.0, Infinity]", "[0.0, {\"__float__\": \"Infinity\"}]", "[0, 1e308]"}) {
    INFO(spelling);
    CHECK(max_abs_diff(run(spelling), absent) == 0.0);
  }
  // The lower bound: dt_limit (time_step_min, inf) is exactly the torch path's clamp.
  const at::Tensor torch_clamp = run("", Mamba2Dt::kTorchClamp);
  CHECK(max_abs_diff(run("[0.001, Infinity]"), torch_clamp) == 0.0);
  CHECK(max_abs_diff(absent, torch_clamp) > 1e-5);  // the clamp matters on this model
  // The upper bound: a cap below the typical dt (about time_step_min..time_step_max) moves the
  // logits; a cap above every dt does not.
  CHECK(max_abs_diff(run("[0.0, 0.002]"), absent) > 1e-3);
  CHECK(max_abs_diff(run("[-1.0, 1000.0]"), absent) == 0.0);
}

TEST_CASE("mamba2 semantics: decode with a dt_limit equals prefill, past several chunks") {
  const std::string base = fixture("mamba2_multichunk");
  ConfigVariant v(base, config_with_limit(base, "[0.002, 0.05]"));
  auto model = load_mamba2(v.path(), Mamba2Dt::kKernels);
  at::Tensor ids = SafetensorsFile(base + "/reference.safetensors").read("input_ids");
  const int64_t T = ids.size(1);
  const double err = decode_vs_prefill(*model, ids, 300, 5);
  MESSAGE(fmt::format("prefill(300) + 5 steps + {} vs prefill({}), dt_limit [0.002, 0.05]: {:.2e}", T - 305, T, err));
  CHECK(err < 1e-5);
}

TEST_CASE("mamba2 semantics: held-out configs, per-token loss of the official code on mamba_ssm's kernels") {
  // tests/tools/make_mamba2_kernel_fixtures.py: four random checkpoints of configs the shared
  // fixtures do not have (chunk sizes 32-256, 3 layers, expand 1, in/out biases, no conv bias,
  // tied embeddings, finite time_step_limit, time_step_min 0.01), their loss computed by the
  // official code on mamba_ssm's Triton kernels (Triton's interpreter, CPU, fp32).
  for (const char* name : {"small_chunks", "dt_limit", "tied_step_min", "expand1_limit"}) {
    const std::string dir = std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/mamba2_kernels/" + name;
    SafetensorsFile ref(dir + "/reference.safetensors");
    at::Tensor ids = ref.read("input_ids");
    const int64_t T = ids.size(1);
    const at::Tensor ref_loss = ref.read("token_loss_kernels").to(at::kDouble);
    auto loss_diff = [&](CausalLM& m) { return (next_token_loss(logits(m, ids), ids) - ref_loss).abs(); };
    auto model = load_mamba2(dir, Mamba2Dt::kKernels);
    at::Tensor dl = loss_diff(*model);
    const double mean = dl.mean().item<double>(), max = dl.max().item<double>();
    MESSAGE(fmt::format("{} (T={}): per-token loss vs the kernels' mean {:.2e} max {:.2e}", name, T, mean, max));
    // Measured on CPU: 2.5e-7 to 3.1e-7 mean, 0.9e-6 to 2.0e-6 max (fp32 sums in another order);
    // the issue's bar is 2e-5 / 2e-4.
    CHECK(mean < 1e-6);
    CHECK(max < 5e-6);
    if (std::string(name).find("limit") != std::string::npos) {
      // The bar sees the limit: the same weights without it are far off.
      ConfigVariant v(dir, config_with_limit(dir, ""));
      at::Tensor off = loss_diff(*load_mamba2(v.path(), Mamba2Dt::kKernels));
      MESSAGE(fmt::format("{} without its time_step_limit: mean {:.2e} max {:.2e}", name, off.mean().item<double>(),
                          off.max().item<double>()));
      CHECK(off.mean().item<double>() > 1e-4);
    }
    // Decoding from a prefill that ends inside a chunk, a few single steps, then the rest.
    const int64_t p = T / 2 + 3;
    const double err = decode_vs_prefill(*model, ids, p, 4);
    MESSAGE(fmt::format("{}: prefill({}) + 4 steps + {} vs prefill({}): {:.2e}", name, p, T - p - 4, T, err));
    CHECK(err < 1e-5);
  }
}

TEST_CASE("mamba2 semantics: malformed time_step_limit fails naming the field") {
  const std::string base = fixture("mamba2");
  for (const char* bad : {"[0.0]", "[0.0, \"inf\"]", "[0.5, 0.1]", "[NaN, 1.0]",
                          "[0.0, {\"__float__\": \"Infinite\"}]", "0.1"}) {
    ConfigVariant v(base, config_with_limit(base, bad));
    const std::string message = test::error_of<Error>([&] { load_mamba2(v.path(), Mamba2Dt::kKernels); });
    INFO(bad, ": ", message);
    CHECK(message.find("time_step_limit") != std::string::npos);
    CHECK(message.find("config.json") != std::string::npos);
  }
}

TEST_CASE("mamba2 semantics: Python JSON reader (bare Infinity, -Infinity, NaN, __float__)") {
  const nlohmann::json j = parse_python_json(
      R"({"a": [0.0, Infinity], "b": -Infinity, "c": NaN, "d": {"__float__": "-Infinity"},
          "s": "Infinity \" NaN", "e": {"__float__": "Infinity", "x": 1}, "n": [-1.5e3]})",
      "test.json");
  CHECK(j["a"][1].get<double>() == std::numeric_limits<double>::infinity());
  CHECK(j["b"].get<double>() == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(j["c"].get<double>()));
  CHECK(j["d"].get<double>() == -std::numeric_limits<double>::infinity());
  CHECK(j["s"].get<std::string>() == "Infinity \" NaN");  // inside strings: text, untouched
  CHECK(j["e"].is_object());                             // not the {"__float__": x} form
  CHECK(j["n"][0].get<double>() == -1500.0);
  CHECK(python_float(nlohmann::json::parse(R"({"__float__": "NaN"})")).has_value());
  CHECK(!python_float(nlohmann::json("Infinity")).has_value());
  const std::string message = test::error_of<Error>([] { parse_python_json("{\"a\": Infinit}", "cfg.json"); });
  CHECK(message.find("cfg.json") != std::string::npos);
  CHECK(message.find("malformed JSON") != std::string::npos);
}
