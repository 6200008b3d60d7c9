"""Writes tests/fixtures/records/: small .jsonl and .parquet files for data/records (read_records),
and for each good file the records pyarrow / Python's json read from it (*.expected.json), which
the C++ reader must equal.

    .venv/bin/python tests/tools/make_records_fixtures.py

Deterministic: rerunning rewrites the same files (pyarrow's parquet writer is given fixed settings).
"""
import json
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

OUT = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "records"


def write_text(name, text):
    (OUT / name).write_bytes(text.encode("utf-8"))


def plain(v):
    """pyarrow gives float16 values as numpy scalars: JSON wants Python floats."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, np.floating):
        return float(v)
    return v


def write_expected(name, records):
    # allow_nan=False: a NaN would not round-trip through JSON, so none may be in the fixtures.
    (OUT / (name + ".expected.json")).write_text(json.dumps(plain(records), ensure_ascii=False, indent=1, allow_nan=False) + "\n")


def jsonl_fixtures():
    records = [
        {"input": "Who wrote \"Hamlet\"?", "answers": ["Shakespeare"], "length": 5, "all_classes": None},
        {"input": "Ünïcödé — 中文 😀", "nested": {"a": [1, 2.5, True, None], "b": {}}, "answers": []},
        {"input": "", "big": 18446744073709551615, "neg": -9223372036854775808, "f": 1e-300},
    ]
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    write_text("records.jsonl", "\n".join(lines) + "\n")
    write_expected("records.jsonl", records)
    # Windows line ends and no final newline: the same records.
    write_text("records_crlf.jsonl", "\r\n".join(lines))
    write_text("empty.jsonl", "")
    write_text("bad_malformed.jsonl", lines[0] + "\n" + '{"input": "unterminated\n' + lines[2] + "\n")
    write_text("bad_not_object.jsonl", lines[0] + "\n" + lines[1] + "\n" + '["an", "array"]\n')
    write_text("bad_blank.jsonl", lines[0] + "\n\n" + lines[1] + "\n")
    write_text("bad_extension.json", lines[0] + "\n")


def types_table():
    n = 5
    choices = pa.array(
        [
            {"text": ["red", "green"], "label": ["A", "B"]},
            {"text": ["one", "two", "three"], "label": ["1", "2", "3"]},
            None,
            {"text": [], "label": []},
            {"text": [None, "x"], "label": ["A", None]},
        ],
        type=pa.struct([("text", pa.list_(pa.string())), ("label", pa.list_(pa.string()))]),
    )
    return pa.table(
        {
            "utf8": pa.array(["plain", "Ünïcödé 中文 😀", None, "", "tab\tquote\"\nnewline"], pa.string()),
            "large_utf8": pa.array(["a", None, "b", "c", "d"], pa.large_string()),
            "i8": pa.array([-128, 127, None, 0, 1], pa.int8()),
            "i16": pa.array([-32768, 32767, 0, None, 2], pa.int16()),
            "i32": pa.array([-2147483648, 2147483647, 0, 3, None], pa.int32()),
            "i64": pa.array([-9223372036854775808, 9223372036854775807, 0, 4, None], pa.int64()),
            "u8": pa.array([0, 255, None, 1, 2], pa.uint8()),
            "u16": pa.array([0, 65535, 1, None, 2], pa.uint16()),
            "u32": pa.array([0, 4294967295, 1, 2, None], pa.uint32()),
            "u64": pa.array([0, 18446744073709551615, 1, 2, None], pa.uint64()),
            "f16": pa.array(np.array([0.5, -2.0, 0.0, 65504.0, 0.1], np.float16), pa.float16(), mask=np.array([0, 0, 1, 0, 0], bool)),
            "f32": pa.array([0.1, -1.5, None, 3.4028234663852886e38, 1e-45], pa.float32()),
            "f64": pa.array([0.1, -1e300, 5e-324, None, 2.0], pa.float64()),
            "bool": pa.array([True, False, None, True, False], pa.bool_()),
            "null": pa.nulls(n),
            "ints": pa.array([[1, 2, 3], [], None, [None, 4], [5]], pa.list_(pa.int64())),
            "large_strs": pa.array([["x"], ["y", "z"], [], None, ["ü"]], pa.large_list(pa.string())),
            "nested": pa.array([[[1], [2, 3]], [], [[]], None, [None, [4]]], pa.list_(pa.list_(pa.int32()))),
            # No null fixed-size list row: pyarrow 25 (the GPU machine's) fails to read one back
            # ("Expected all lists to be of size=2 but index 1 had size=0"); 26 reads it.
            "fixed": pa.array([[1.0, 2.0], [3.0, 4.0], [8.0, 9.0], [5.0, None], [6.0, 7.0]], pa.list_(pa.float64(), 2)),
            "choices": choices,
            "meta": pa.array(
                [{"id": "q1", "score": 1.5, "tags": ["a"]}, {"id": None, "score": None, "tags": None}, {"id": "q3", "score": 0.0, "tags": []},
                 None, {"id": "q5", "score": -2.0, "tags": ["b", "c"]}],
                type=pa.struct([("id", pa.string()), ("score", pa.float64()), ("tags", pa.list_(pa.string()))]),
            ),
            "dict": pa.array(["train", "test", "train", None, "test"]).dictionary_encode(),
            "dict_list": pa.array([["easy"], ["hard", "easy"], None, [], ["hard"]],
                                  pa.list_(pa.dictionary(pa.int8(), pa.string()))),
        }
    )


def parquet_fixtures():
    table = types_table()
    # Two rows per row group: the C++ reader must stitch chunks into rows across row groups.
    pq.write_table(table, OUT / "types.parquet", row_group_size=2, compression="snappy")
    back = pq.read_table(OUT / "types.parquet")
    write_expected("types.parquet", back.to_pylist())
    for field in back.schema:
        print(f"  types.parquet {field.name}: {field.type}")

    # ARC-like rows as Hugging Face stores them.
    arc = pa.table(
        {
            "id": ["Mercury_7175875", "Mercury_SC_409171"],
            "question": ["An astronomer observes that a planet rotates faster...", "A group of engineers wanted to know..."],
            "choices": [
                {"text": ["Planetary density will decrease.", "Planetary years will become longer."], "label": ["A", "B"]},
                {"text": ["buildings will be built faster", "buildings will be made safer"], "label": ["1", "2"]},
            ],
            "answerKey": ["C", "2"],
        }
    )
    pq.write_table(arc, OUT / "arc_like.parquet", compression="zstd")
    write_expected("arc_like.parquet", pq.read_table(OUT / "arc_like.parquet").to_pylist())

    # Columns JSON cannot hold: a top-level binary column and a decimal inside a struct.
    pq.write_table(pa.table({"text": ["a"], "blob": pa.array([b"\x00\x01"], pa.binary())}), OUT / "bad_binary.parquet")
    pq.write_table(
        pa.table({"meta": pa.array([{"price": 1}], pa.struct([("price", pa.decimal128(10, 2))]))}),
        OUT / "bad_nested_decimal.parquet",
    )
    # A string column whose third row holds bytes that are not UTF-8 (written unchecked as binary,
    # then given the string type).
    values = [b"ok", b"fine", b"bad \xff byte"]
    offsets = [0]
    for v in values:
        offsets.append(offsets[-1] + len(v))
    arr = pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(bytes(bytearray().join(
        int(o).to_bytes(4, "little") for o in offsets))), pa.py_buffer(b"".join(values))])
    pq.write_table(pa.table({"s": arr}), OUT / "bad_utf8.parquet")
    write_text("bad_not_parquet.parquet", "this is text, not a Parquet file\n")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    jsonl_fixtures()
    parquet_fixtures()
    print(f"pyarrow {pa.__version__}: wrote {OUT}")


if __name__ == "__main__":
    main()
