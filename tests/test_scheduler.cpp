// Decoding slots and the generation scheduler (models/generation/requests_generate.cpp):
// - a slot step equals the family's DecodeState step, whatever the other rows hold, and a slot
//   taken over by a new sequence forgets the old one (seven families);
// - generate_until's greedy tokens (continuous batching over few slots, requests of different
//   lengths, new-token counts and an EOS that fires) equal batch-1 recomputation without a cache;
// - a request's answer does not depend on which requests run beside it.
// The CUDA graph replay of the same step is checked on the GPU (tests/test_attention_cuda.cpp).
#include <doctest/doctest.h>

#include <filesystem>

#include "data/safetensors.h"
#include "models/generation/generate.h"
#include "models/registry.h"
#include "models/requests.h"
#include "models/generation/slot_decoder.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

const char* const kFamilies[] = {"fox_pro", "fox_llama", "transformer_pro", "transformer_llama",
                                 "mamba2", "hgrn2", "delta_net"};

std::string fixture(const std::string& name) { return test::source_path("tests/fixtures/official/" + name); }

std::vector<int64_t> row_ids(const at::Tensor& t, int64_t a, int64_t b) {
  at::Tensor c = t.slice(0, a, b).to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

std::unique_ptr<DecodeState> prefilled(CausalLM& m, const std::vector<int64_t>& prompt) {
  auto st = m.new_state(1, at::Tensor());
  (void)m.forward(at::tensor(prompt, at::kLong).view({1, -1}), st.get());
  return st;
}

// Largest |a - b| relative to the largest |b|.
double max_rel(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

// The first 128 reference ids of rows 0 and 1 of family `name`'s fixture.
std::pair<std::vector<int64_t>, std::vector<int64_t>> reference_rows(const std::string& name) {
  at::Tensor input = SafetensorsFile(fixture(name) + "/reference.safetensors").read("input_ids");
  return {row_ids(input[0], 0, 128), row_ids(input[1], 0, 128)};
}

}  // namespace

TEST_CASE("decode slots: a step equals the decoding state's step, and a reused slot forgets (seven families)") {
  for (const char* name : kFamilies) {
    INFO(name);
    const auto [r0, r1] = reference_rows(name);
    auto model = load_model(fixture(name), RunOptions{"cpu", "float32"});
    auto slots = model->new_slots(3, 72);
    REQUIRE(slots);
    CHECK(model->slot_bytes(72) > 0);
    // Slot 2: a 50-token prompt; slot 0: a 13-token one; slot 1 idle.
    std::vector<std::vector<int64_t>> seqs{std::vector<int64_t>(r1.begin(), r1.begin() + 13), {},
                                           std::vector<int64_t>(r0.begin(), r0.begin() + 50)};
    std::vector<std::unique_ptr<DecodeState>> states(3);
    for (int s : {0, 2}) {
      states[s] = prefilled(*model, seqs[s]);
      slots->load(s, *states[s]);
    }
    slots->clear(1);
    double worst = 0;
    for (int step = 0; step < 24; ++step) {
      if (step == 12) {  // slot 2 takes a new 30-token sequence
        seqs[2] = std::vector<int64_t>(r1.begin() + 40, r1.begin() + 70);
        states[2] = prefilled(*model, seqs[2]);
        slots->load(2, *states[2]);
      }
      std::vector<int64_t> feed{r0[60 + step], 7, r1[90 + step]};
      at::Tensor got = model->decode_slots(at::tensor(feed, at::kLong), *slots);  // [3, hidden]
      for (int s : {0, 2}) {
        at::Tensor want = model->forward(at::tensor(std::vector<int64_t>{feed[s]}, at::kLong).view({1, 1}), states[s].get());
        worst = std::max(worst, max_rel(got[s], want.view({-1})));
      }
    }
    MESSAGE(std::string(name) << ": slot step vs state step, max relative difference " << worst);
    // Same math in another order (masked full-capacity softmax vs sliced keys; in-place state
    // updates): fp32 rounding only, measured <= 1e-6 on these fixtures.
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("decode slots: a prefill into the slot's own cache equals a prefill loaded by copy (FoX and Transformer)") {
  for (const char* name : kFamilies) {
    INFO(name);
    const auto [r0, r1] = reference_rows(name);
    auto model = load_model(fixture(name), RunOptions{"cpu", "float32"});
    auto in_place = model->new_slots(2, 72), by_copy = model->new_slots(2, 72);
    const bool attention = std::string(name).rfind("mamba2", 0) != 0 && std::string(name) != "hgrn2" &&
                           std::string(name) != "delta_net";
    CHECK(static_cast<bool>(in_place->prefill_state(1)) == attention);  // recurrent: fixed-size states, copied
    if (!attention) continue;
    // Both slot 1s first hold a longer sequence (stale entries past the new one's length must go).
    const std::vector<int64_t> old_seq(r1.begin(), r1.begin() + 60), seq(r0.begin(), r0.begin() + 37);
    for (SlotState* s : {in_place.get(), by_copy.get()}) s->load(1, *prefilled(*model, old_seq));
    auto st = in_place->prefill_state(1);
    (void)model->forward(at::tensor(seq, at::kLong).view({1, -1}), st.get());
    in_place->load(1, *st);
    by_copy->load(1, *prefilled(*model, seq));
    for (int step = 0; step < 8; ++step) {
      at::Tensor ids = at::tensor(std::vector<int64_t>{r1[70 + step], r0[40 + step]}, at::kLong);
      at::Tensor a = model->decode_slots(ids, *in_place), b = model->decode_slots(ids, *by_copy);
      CHECK(at::equal(a[1], b[1]));
    }
  }
}

TEST_CASE("generate_until: continuous batching gives batch-1 recomputation's greedy tokens (seven families + trained)") {
  std::vector<std::string> dirs;
  for (const char* name : kFamilies) dirs.push_back(fixture(name));
  const std::string trained = test::shared_path("fixtures/trained/fox_pro_tiny_pg");
  if (std::filesystem::exists(trained + "/config.json")) dirs.push_back(trained);
  for (const std::string& dir : dirs) {
    INFO(dir);
    auto model = load_model(dir, RunOptions{"cpu", "float32"});
    const int64_t vocab = model->lm_head().size(0);
    std::vector<GenerationRequest> reqs;
    const int lens[] = {40, 9, 23, 31, 5, 17};
    const int news[] = {12, 20, 6, 16, 9, 1};
    for (int i = 0; i < 6; ++i) {
      std::vector<int64_t> p;
      for (int t = 0; t < lens[i]; ++t) p.push_back((1009 * (i + 1) + 7919 * t) % vocab);
      reqs.push_back({p, news[i], {}});
    }
    // The reference: each prompt alone, recomputed without a cache at every step.
    auto reference = [&](const GenerationRequest& r) {
      GenerateOptions o;
      o.max_new_tokens = r.max_new_tokens;
      o.stop_ids = r.stop_ids;
      o.use_cache = false;
      return generate(*model, {r.prompt}, o, nullptr)[0];
    };
    // An EOS that fires: request 0's fourth greedy token.
    const Generation plain0 = reference(reqs[0]);
    REQUIRE(plain0.ids.size() == 12);
    reqs[0].stop_ids = {plain0.ids[3]};
    reqs[3].stop_ids = {plain0.ids[3]};
    GenerateUntilOptions o;
    o.max_batch = 2;       // six requests through two slots: slots are refilled as rows finish
    o.steps_per_look = 4;  // rows finish mid-run
    o.prefill_chunk = 8;
    std::vector<GenerationAnswer> got(reqs.size());
    std::vector<int> calls(reqs.size(), 0);
    generate_until(*model, reqs, o, [&](size_t i, const GenerationAnswer& a) {
      got[i] = a;
      ++calls[i];
    });
    for (size_t i = 0; i < reqs.size(); ++i) {
      INFO("request " << i);
      CHECK(calls[i] == 1);
      const Generation want = reference(reqs[i]);
      CHECK(got[i].ids == want.ids);
      CHECK(got[i].reason == want.reason);
    }
    CHECK(got[0].reason == StopReason::eos);
    CHECK(got[0].ids.size() <= 3);
    // Alone vs beside the others: the same answer.
    for (size_t i : {size_t(1), size_t(4)}) {
      GenerationAnswer alone;
      generate_until(*model, {reqs[i]}, o, [&](size_t, const GenerationAnswer& a) { alone = a; });
      CHECK(alone.ids == got[i].ids);
    }
  }
}

TEST_CASE("generate_until: bad requests are named") {
  auto model = load_model(fixture("fox_pro"), RunOptions{"cpu", "float32"});
  auto run = [&](std::vector<GenerationRequest> r, GenerateUntilOptions o = {}) {
    generate_until(*model, r, o, [](size_t, const GenerationAnswer&) {});
  };
  CHECK_THROWS_WITH(run({{{1, 2}, 3, {}}, {{}, 3, {}}}), doctest::Contains("request 1 has an empty prompt"));
  CHECK_THROWS_WITH(run({{{1, 999999}, 3, {}}}), doctest::Contains("request 0 holds id 999999"));
  CHECK_THROWS_WITH(run({{{1}, -2, {}}}), doctest::Contains("asks for -2 new tokens"));
  GenerateUntilOptions o;
  o.max_batch = 0;
  CHECK_THROWS_WITH(run({{{1}, 2, {}}}, o), doctest::Contains("max batch 0"));
  // max_new_tokens 0: an empty answer, no model call needed.
  GenerationAnswer a;
  a.ids = {5};
  generate_until(*model, {{{1, 2}, 0, {}}}, GenerateUntilOptions{}, [&](size_t, const GenerationAnswer& x) { a = x; });
  CHECK(a.ids.empty());
}

TEST_CASE("generate_until: capacity buckets waste under 1/8, and under 1/32 from 16k tokens") {
  auto model = load_model(fixture("fox_pro"), RunOptions{"cpu", "float32"});
  GenerateUntilOptions o;  // 16 steps a look: a row may run 16 tokens past its request
  auto capacity = [&](int64_t total) { return plan_slots(*model, total, 1, o).capacity; };
  CHECK(capacity(10) == 256);
  CHECK(capacity(1024 + 256) == 1408);            // 1296 tokens needed: steps of 128
  CHECK(capacity(8192 + 256) == 9216);            // steps of 1024
  CHECK(capacity(16384 - 17) == 16384);           // the last bucket of the coarse grid
  CHECK(capacity(16384 - 16) == 16384);           // 16384 needed: the fine grid, steps of 256
  CHECK(capacity(32768 + 256) == 33792);          // steps of 1024: 16 slots fit an 80 GB GPU
  CHECK(capacity(32000 + 1024) == 33792);         // NIAH's longest cell
  for (int64_t total : {300, 1500, 5000, 9000, 17000, 40000, 70000, 130000}) {
    const int64_t need = total + o.steps_per_look, c = capacity(total);
    CHECK(c >= need);
    CHECK(static_cast<double>(c - need) < static_cast<double>(need) / (need >= 16384 ? 32 : 8));
  }
  // The memory plan reserves a prefill's own state only where the family has no in-slot prefill.
  CHECK(model->prefills_in_slot());
  CHECK_FALSE(load_model(fixture("mamba2"), RunOptions{"cpu", "float32"})->prefills_in_slot());
}
