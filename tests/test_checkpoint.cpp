// Checkpoint loading: every problem is a foxeval::Error naming the file, field or tensor.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "data/errors.h"
#include "models/registry.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

using namespace foxeval;
namespace fs = std::filesystem;

namespace {

const std::string kFox = test::source_path("tests/fixtures/official/fox_pro");

// A copy of the fox_pro fixture whose tensors and config can be changed.
struct Scratch {
  std::string dir = test::temp_dir("ckpt");
  std::map<std::string, at::Tensor> tensors;
  nlohmann::json config = nlohmann::json::parse(std::ifstream(kFox + "/config.json"));
  Scratch() {
    SafetensorsFile f(kFox + "/model.safetensors");
    for (const auto& [name, e] : f.entries()) tensors[name] = f.read(name);
  }
  ~Scratch() { test::remove_tree(dir); }
  std::string write() {
    test::write_safetensors(dir + "/model.safetensors", tensors);
    std::ofstream(dir + "/config.json") << config.dump(1);
    return dir;
  }
};

void expect_error(const std::string& dir, const std::string& text) {
  CHECK_THROWS_WITH_AS(load_model(dir, RunOptions{}), doctest::Contains(text.c_str()), Error);
}

}  // namespace

TEST_CASE("checkpoint: an unchanged copy loads, from F32, BF16 and F16 tensors") {
  Scratch s;
  CHECK(load_model(s.write(), RunOptions{})->info().num_parameters > 0);
  for (auto dtype : {at::kBFloat16, at::kHalf}) {
    for (auto& [name, t] : s.tensors) t = t.to(dtype);
    CHECK(load_model(s.write(), RunOptions{})->info().family == "FoX (Pro)");
  }
}

TEST_CASE("checkpoint: missing, misshapen and unused tensors are named") {
  {
    Scratch s;
    s.tensors.erase("model.layers.1.attn.q_proj.weight");
    expect_error(s.write(), "missing tensor model.layers.1.attn.q_proj.weight (expected shape [64, 64])");
  }
  {
    Scratch s;
    s.tensors["model.layers.0.mlp.down_proj.weight"] = at::zeros({64, 255});
    expect_error(s.write(), "tensor model.layers.0.mlp.down_proj.weight has shape [64, 255], expected [64, 256]");
  }
  {
    Scratch s;
    s.tensors["model.layers.0.attn.extra.weight"] = at::zeros({3});
    expect_error(s.write(), "not used by model_type forgetting_transformer-project_fox: model.layers.0.attn.extra.weight");
  }
  {
    Scratch s;
    s.tensors["model.norm.weight"] = at::zeros({64}, at::kLong);
    expect_error(s.write(), "has dtype I64, expected F32, BF16 or F16");
  }
}

TEST_CASE("checkpoint: broken files and configs are clear errors") {
  {
    Scratch s;
    const std::string dir = s.write();
    std::ofstream(dir + "/config.json") << "{\"model_type\": ";
    expect_error(dir, "config.json: malformed JSON");
  }
  {
    Scratch s;
    const std::string dir = s.write();
    fs::resize_file(dir + "/model.safetensors", fs::file_size(dir + "/model.safetensors") - 100);
    expect_error(dir, "truncated safetensors file");
    fs::resize_file(dir + "/model.safetensors", 5);
    expect_error(dir, "truncated safetensors file");
  }
  {
    Scratch s;
    s.config["model_type"] = "gpt2";
    // Every registered family is named, in model_type order.
    expect_error(s.write(), "unknown model_type \"gpt2\" (known: delta_net-project_fox, forgetting_transformer-project_fox, "
                            "hgrn2-project_fox, mamba2-project_fox, samba-project_fox, transformer-project_fox)");
  }
  {
    Scratch s;
    s.config["fgate_type"] = "sometimes";
    expect_error(s.write(), "field \"fgate_type\" = \"sometimes\" is not one of");
  }
  {
    Scratch s;
    s.config["num_heads"] = 5;
    expect_error(s.write(), "field \"num_heads\" = 5 must divide hidden_size = 64");
  }
  {
    Scratch s;
    s.config["window_size"] = 128;
    expect_error(s.write(), "field \"window_size\" = 128 is not supported");
  }
  {
    Scratch s;
    s.config.erase("hidden_size");
    expect_error(s.write(), "field \"hidden_size\" is required but missing");
  }
  {
    Scratch s;
    s.config["hidden_size"] = "wide";
    expect_error(s.write(), "field \"hidden_size\" must be an integer");
  }
}

TEST_CASE("model families: each registers itself from its folder; a model_type registered twice is refused") {
  std::vector<std::string> types;
  for (const FamilyEntry& f : model_families()) types.push_back(f.model_type);
  CHECK(types == std::vector<std::string>{"delta_net-project_fox", "forgetting_transformer-project_fox", "hgrn2-project_fox",
                                          "mamba2-project_fox", "samba-project_fox", "transformer-project_fox"});
  CHECK_THROWS_AS(FamilyRegistrar({"samba-project_fox", model_families()[0].make}), std::logic_error);
  CHECK(model_families().size() == 6);
}

TEST_CASE("checkpoint: sharded index, and an index naming the wrong shard") {
  Scratch s;
  const std::string dir = s.write();
  // Split the tensors over two shards with an index, as published checkpoints are.
  std::map<std::string, at::Tensor> a, b;
  nlohmann::json index = {{"metadata", nlohmann::json::object()}, {"weight_map", nlohmann::json::object()}};
  bool first = true;
  for (const auto& [name, t] : s.tensors) {
    (first ? a : b)[name] = t;
    index["weight_map"][name] = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
    first = !first;
  }
  fs::remove(dir + "/model.safetensors");
  test::write_safetensors(dir + "/model-00001-of-00002.safetensors", a);
  test::write_safetensors(dir + "/model-00002-of-00002.safetensors", b);
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  CHECK(load_model(dir, RunOptions{})->info().num_parameters == load_model(kFox, RunOptions{})->info().num_parameters);
  const std::string moved = b.begin()->first;  // stored in shard 2, listed in shard 1
  index["weight_map"][moved] = "model-00001-of-00002.safetensors";
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  expect_error(dir, "lists tensor " + moved + " in model-00001-of-00002.safetensors, which does not hold it");
}
