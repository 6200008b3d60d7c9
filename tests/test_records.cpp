// data/records: .jsonl and .parquet records against what Python's json / pyarrow read from the same
// files (tests/tools/make_records_fixtures.py writes both), and the errors for files it must refuse.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/records.h"
#include "tests/temp_files.h"

using foxeval::Error;
using nlohmann::json;

namespace {

std::string fixture(const std::string& name) { return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/records/" + name; }

using foxeval::test::error_of;

// The error read_records gives for fixture `name` ("" when it reads).
std::string records_error(const std::string& name) {
  return error_of([&] { foxeval::read_records(fixture(name)); });
}

json read_all(const std::string& name) { return json(foxeval::read_records(fixture(name))); }

}  // namespace

TEST_CASE("records jsonl: every line one object, equal to Python's json.loads") {
  const json expected = foxeval::read_json(fixture("records.jsonl.expected.json"));
  CHECK(read_all("records.jsonl") == expected);
  // CRLF line ends and no final newline read the same.
  CHECK(read_all("records_crlf.jsonl") == expected);
  const json r = read_all("records.jsonl");
  CHECK(r[1]["input"] == "Ünïcödé — 中文 😀");
  CHECK(r[2]["big"].get<uint64_t>() == 18446744073709551615ull);
  CHECK(r[2]["neg"].get<int64_t>() == INT64_MIN);
  CHECK(foxeval::read_records(fixture("empty.jsonl")).empty());
}

TEST_CASE("records jsonl: errors name the file and the 1-based line") {
  CHECK(records_error("bad_malformed.jsonl").find("bad_malformed.jsonl line 2: not valid JSON") != std::string::npos);
  CHECK(records_error("bad_not_object.jsonl").find("bad_not_object.jsonl line 3: a record must be a JSON object, not array") != std::string::npos);
  CHECK(records_error("bad_blank.jsonl").find("bad_blank.jsonl line 2: blank line") != std::string::npos);
  CHECK(records_error("bad_extension.json").find("bad_extension.json: records are read from .jsonl or .parquet files, not '.json'") != std::string::npos);
  CHECK(records_error("missing.jsonl").find("missing.jsonl") != std::string::npos);
}

TEST_CASE("records parquet: every type equals pyarrow's to_pylist, across row groups") {
  // types.parquet: 5 rows in row groups of 2; ints of every width at their limits, float16/32/64,
  // bool, null, lists (large, nested, fixed size), structs with null fields, dictionary strings.
  const json expected = foxeval::read_json(fixture("types.parquet.expected.json"));
  const json got = read_all("types.parquet");
  REQUIRE(got.size() == 5);
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("row " << i << ": " << got[i].dump());
    CHECK(got[i] == expected[i]);
  }
  CHECK(got[1]["u64"].get<uint64_t>() == 18446744073709551615ull);
  CHECK(got[0]["f32"].get<double>() == static_cast<double>(0.1f));
  CHECK(got[2]["choices"].is_null());
  CHECK(got[4]["choices"] == json::parse(R"({"text": [null, "x"], "label": ["A", null]})"));
  CHECK(got[4]["dict"] == "test");
  CHECK(got[3]["nested"].is_null());
  CHECK(got[4]["nested"] == json::parse("[null, [4]]"));
}

TEST_CASE("records parquet: ARC-like choices struct becomes an object of lists") {
  const json got = read_all("arc_like.parquet");
  CHECK(got == foxeval::read_json(fixture("arc_like.parquet.expected.json")));
  CHECK(got[1]["choices"]["label"] == json::parse(R"(["1", "2"])"));
  CHECK(got[1]["answerKey"] == "2");
}

TEST_CASE("records parquet: unsupported types, bad UTF-8 and non-Parquet files are refused by name") {
  CHECK(records_error("bad_binary.parquet").find("bad_binary.parquet: column 'blob' has Arrow type binary") != std::string::npos);
  CHECK(records_error("bad_nested_decimal.parquet").find("bad_nested_decimal.parquet: column 'meta.price' has Arrow type decimal128(10, 2)") != std::string::npos);
  CHECK(records_error("bad_utf8.parquet").find("bad_utf8.parquet row 2: field 's': a string is not valid UTF-8") != std::string::npos);
  CHECK(records_error("bad_not_parquet.parquet").find("bad_not_parquet.parquet: not a Parquet file Arrow can read") != std::string::npos);
}

TEST_CASE("records field helpers name where the record is") {
  CHECK(foxeval::record_where("d/x.jsonl", 0) == "d/x.jsonl line 1");
  CHECK(foxeval::record_where("d/x.parquet", 0) == "d/x.parquet row 0");
  const json r = json::parse(R"({"input": "q", "length": 3})");
  CHECK(foxeval::record_field(r, "length", "f.jsonl line 4") == 3);
  CHECK(foxeval::record_string(r, "input", "f.jsonl line 4") == "q");
  CHECK(error_of([&] { foxeval::record_field(r, "answers", "f.jsonl line 4"); }) == "f.jsonl line 4: missing field 'answers'");
  CHECK(error_of([&] { foxeval::record_string(r, "length", "f.parquet row 3"); }) ==
        "f.parquet row 3: field 'length' must be a string, not number");
}
