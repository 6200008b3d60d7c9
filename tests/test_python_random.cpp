// CPython `random`, NumPy's legacy RandomState and uuid4 ports (data/python/python_random.h,
// numpy_random.h) against the originals: tests/fixtures/ruler/python_random.json holds call
// scripts and their results from CPython 3.11 / NumPy (tests/tools/python_random_goldens.py).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "data/python/numpy_random.h"
#include "data/python/python_random.h"

using nlohmann::json;

namespace {

const json& goldens() {
  static const json g = [] {
    std::ifstream in(std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/ruler/python_random.json");
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return g;
}

// Replays one op on rng and returns its result in the golden's JSON form.
json replay(foxeval::PythonRandom& rng, const json& op) {
  const std::string kind = op["op"];
  if (kind == "getrandbits") return rng.getrandbits(op["k"].get<int>());
  if (kind == "randbelow") return rng.randbelow(op["n"].get<uint64_t>());
  if (kind == "randint") return rng.randint(op["a"].get<int64_t>(), op["b"].get<int64_t>());
  if (kind == "randrange") return rng.randrange(op["a"].get<int64_t>(), op["b"].get<int64_t>());
  if (kind == "random") return static_cast<uint64_t>(rng.random() * 9007199254740992.0);
  if (kind == "choice") {
    std::vector<size_t> seq(op["n"].get<size_t>());
    for (size_t i = 0; i < seq.size(); ++i) seq[i] = i;
    return rng.choice(seq);
  }
  if (kind == "choices") return foxeval::python_choices_string(rng, op["alphabet"], op["k"].get<size_t>());
  if (kind == "sample") return rng.sample_indices(op["n"].get<size_t>(), op["k"].get<size_t>());
  if (kind == "shuffle") {
    std::vector<size_t> x(op["n"].get<size_t>());
    for (size_t i = 0; i < x.size(); ++i) x[i] = i;
    rng.shuffle(x);
    return x;
  }
  if (kind == "uuid4") return foxeval::python_uuid4_string(rng.getrandbits_words(128));
  FAIL("unknown op " << kind);
  return nullptr;
}

}  // namespace

TEST_CASE("python random: call scripts equal CPython's random.Random(seed)") {
  size_t checked = 0, samples_set = 0, samples_pool = 0;
  for (const json& script : goldens()["python_scripts"]) {
    foxeval::PythonRandom rng(script["seed"].get<uint64_t>());
    for (const json& op : script["ops"]) {
      CAPTURE(script["seed"]);
      CAPTURE(op.dump());
      REQUIRE(replay(rng, op) == op["out"]);
      if (op["op"] == "sample") {
        const size_t n = op["n"], k = op["k"];
        (n > 21 && k > 5 ? samples_set : samples_pool) += 1;  // rough split, to see both ran
      }
      ++checked;
    }
    CHECK(rng.getrandbits(32) == script["next32"].get<uint64_t>());
  }
  CHECK(checked == 8 * 400);
  CHECK(samples_set > 0);
  CHECK(samples_pool > 0);
}

TEST_CASE("python random: seeding and argument errors") {
  foxeval::PythonRandom a(42), b(0);
  b.seed(42);
  CHECK(a.getrandbits(64) == b.getrandbits(64));
  CHECK_THROWS(a.randbelow(0));
  CHECK_THROWS(a.randrange(3, 3));
  CHECK_THROWS(a.sample_indices(3, 4));
  CHECK_THROWS(a.getrandbits(65));
  // uuid4's forced bits: version nibble 4, variant 10xx.
  const std::string u = foxeval::python_uuid4_string({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu});
  CHECK(u == "ffffffff-ffff-4fff-bfff-ffffffffffff");
}

TEST_CASE("numpy legacy RandomState: seed + randint equal NumPy's") {
  size_t checked = 0;
  for (const json& script : goldens()["numpy_scripts"]) {
    foxeval::NumpyRandomState rs(script["seed"].get<uint32_t>());
    for (const json& call : script["calls"]) {
      CAPTURE(script["seed"]);
      CAPTURE(call.dump());
      REQUIRE(rs.randint(call["low"].get<int64_t>(), call["high"].get<int64_t>()) == call["out"].get<int64_t>());
      ++checked;
    }
  }
  CHECK(checked == 5 * 300);
  foxeval::NumpyRandomState rs(1);
  CHECK_THROWS(rs.randint(0, 0));
  CHECK_THROWS(rs.randint(0, (int64_t{1} << 32) + 2));
}

TEST_CASE("numpy round(linspace) equals NumPy's (RULER's needle depths)") {
  for (const auto& [num, values] : goldens()["depths"].items()) {
    CAPTURE(num);
    CHECK(json(foxeval::numpy_round_linspace(0, 100, std::stoi(num))) == values);
  }
}
