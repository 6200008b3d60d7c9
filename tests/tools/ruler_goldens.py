#!/usr/bin/env python3
"""Goldens for foxeval's RULER samples (tasks/ruler/), made by lm-eval 0.4.13's own generator code
(lm_eval/tasks/ruler/*.py) run offline on small synthetic data.

Writes under tests/fixtures/ruler/:
  haystack/essay_NN.txt        synthetic "essays" (made up here: sentences with abbreviations,
                               initials, numbers, quotes), standing in for baber/paul_graham_essays
  wonderwords/*list.txt        synthetic word lists in wonderwords' asset layout
  niah_goldens.jsonl           one line per generated doc, the NIAH tasks in ruler.yaml's order, each
                               at every length of LENGTHS, as simple_evaluate builds them
                               (random.seed(0), np.random.seed(1234) once, then task after task):
                               {"task", "doc"} with the doc's fields, its `input` replaced by
                               `input_sha256` (hex of its UTF-8) except for index 0 (8000 full docs
                               would be 76 MB)
  vt_goldens.jsonl             ruler_vt's docs (the same form), built after the NIAH tasks as in the group
  cwe_goldens.jsonl            ruler_cwe's docs (the same form), built after ruler_vt

How lm-eval is run without its network and heavy dependencies: `transformers.AutoTokenizer` is a
stand-in returning the checkpoints' tokenizer (JSONGPT2Tokenizer with add_bos_token=True: BOS 50256,
then GPT-2 BPE of json.dumps(text)[1:-1], via tiktoken on data/gpt2's files); `datasets` is a
stand-in whose load_dataset("baber/paul_graham_essays") returns the synthetic essays (sorted by file
name) and whose Dataset.from_list returns the list; NLTK_DATA points at the synthetic punkt_tab
(tests/fixtures/ruler/nltk_data); wonderwords' default lists are replaced by the synthetic ones
before lm-eval's modules import it. Everything else is lm-eval's code as installed.

    /opt/ruler-venv/bin/python tests/tools/ruler_goldens.py    # lm-eval 0.4.13 (scripts/setup.sh)
"""
import glob
import hashlib
import json
import os
import random
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "tests", "fixtures", "ruler")
LENGTHS = [1024, 4096]
NIAH_TASKS = ["niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
              "niah_multikey_3", "niah_multiquery", "niah_multivalue"]


def gpt2_encoding():
    import tiktoken
    import tiktoken.load
    from tiktoken_ext.openai_public import r50k_pat_str
    gpt2 = os.path.join(ROOT, "data", "gpt2")
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=os.path.join(gpt2, "vocab.bpe"), encoder_json_file=os.path.join(gpt2, "encoder.json"))
    return tiktoken.Encoding(name="gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257)


class JsonGpt2Tokenizer:
    """The checkpoints' tokenizer as lm-eval's RULER code calls it: tok(text).input_ids."""

    def __init__(self):
        self.enc = gpt2_encoding()

    def __call__(self, text):
        ids = [50256] + self.enc.encode(json.dumps(text)[1:-1], allowed_special={"<|endoftext|>"})
        return types.SimpleNamespace(input_ids=ids)


def write_synthetic_data(rng):
    words = ["time", "startup", "founder", "essay", "idea", "money", "city", "school", "program", "language",
             "writer", "investor", "problem", "question", "answer", "friend", "company", "product", "user",
             "growth", "work", "people", "world", "thing", "way", "year", "day", "life", "mind", "hacker"]
    verbs = ["make", "build", "think", "write", "find", "want", "know", "see", "get", "start", "grow", "learn"]
    extras = ["Mr. Smith", "Dr. Jones", "e.g. this", "the U.S. market", "J. S. Bach", "3.5 percent", "in 1998",
              "(or so)", "\"really\"", "etc.", "vs. them", "No. 7", "it's", "don't", "St. Louis"]
    os.makedirs(os.path.join(FIX, "haystack"), exist_ok=True)
    for old in glob.glob(os.path.join(FIX, "haystack", "*.txt")):
        os.remove(old)
    for e in range(12):
        paras = []
        for _ in range(rng.randrange(4, 9)):
            sents = []
            for _ in range(rng.randrange(3, 9)):
                n = rng.randrange(5, 18)
                ws = [rng.choice(words + verbs) for _ in range(n)]
                if rng.random() < 0.4:
                    ws.insert(rng.randrange(len(ws)), rng.choice(extras))
                s = " ".join(ws)
                s = s[0].upper() + s[1:] + rng.choice([".", ".", ".", "?", "!", "...", ".\"", ".)"])
                sents.append(s)
            paras.append(("  " if rng.random() < 0.2 else " ").join(sents))
        with open(os.path.join(FIX, "haystack", f"essay_{e:02d}.txt"), "w", encoding="utf-8", newline="") as f:
            f.write("\n\n".join(paras) + "\n")
    adjs = sorted({"".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(2, 7)))
                   for _ in range(40)} | {"well-known", "odd", "od"})
    nouns = sorted({"".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(2, 8)))
                    for _ in range(150)} | {"known-odd", "d-well", "CD", "TV"})
    verbs_ = sorted({"".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(3, 8)))
                     for _ in range(60)} | {"odd"})
    rng.shuffle(adjs), rng.shuffle(nouns), rng.shuffle(verbs_)
    os.makedirs(os.path.join(FIX, "wonderwords"), exist_ok=True)
    for name, ws in [("adjectivelist.txt", adjs), ("nounlist.txt", nouns), ("verblist.txt", verbs_)]:
        with open(os.path.join(FIX, "wonderwords", name), "w", encoding="utf-8", newline="") as f:
            f.write("".join(w + ("  \n" if i % 7 == 3 else "\n") for i, w in enumerate(ws)))


def install_stand_ins():
    os.environ["NLTK_DATA"] = os.path.join(FIX, "nltk_data")
    tok = JsonGpt2Tokenizer()
    transformers = types.ModuleType("transformers")
    transformers.AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda name, **kw: tok)
    sys.modules["transformers"] = transformers

    essays = []
    for path in sorted(glob.glob(os.path.join(FIX, "haystack", "*.txt"))):
        with open(path, encoding="utf-8") as f:
            essays.append(f.read())
    datasets = types.ModuleType("datasets")
    datasets.load_dataset = lambda name, split=None, **kw: {"text": essays}
    datasets.Dataset = types.SimpleNamespace(from_list=lambda rows, split=None: rows)
    datasets.Split = types.SimpleNamespace(TEST="test")
    sys.modules["datasets"] = datasets

    import wonderwords.random_word as rw
    from wonderwords.random_word import Defaults
    for d, name in [(Defaults.NOUNS, "nounlist.txt"), (Defaults.ADJECTIVES, "adjectivelist.txt"),
                    (Defaults.VERBS, "verblist.txt")]:
        with open(os.path.join(FIX, "wonderwords", name)) as f:
            rw._DEFAULT_CATEGORIES[d] = [w.rstrip() for w in f.readlines()]


def compact(doc):
    """The doc with `input_sha256` (and `input_example_sha256`); the texts themselves only at index 0."""
    d = dict(doc)
    for key in ["input", "input_example"]:
        if key in d:
            d[key + "_sha256"] = hashlib.sha256(d[key].encode("utf-8")).hexdigest()
            if d["index"] != 0:
                del d[key]
    return d


def main():
    write_synthetic_data(random.Random(5353))
    install_stand_ins()
    import numpy as np
    import lm_eval
    # lm_eval/tasks/__init__.py imports the whole task registry (yaml, jinja, evaluate...); the RULER
    # modules need none of it: the package is entered without running that __init__.
    tasks_pkg = types.ModuleType("lm_eval.tasks")
    tasks_pkg.__path__ = [os.path.join(os.path.dirname(lm_eval.__file__), "tasks")]
    sys.modules["lm_eval.tasks"] = tasks_pkg
    from lm_eval.tasks.ruler import cwe_utils, niah_utils, vt_utils

    random.seed(0)  # simple_evaluate's seeds
    np.random.seed(1234)
    out = []
    for task in NIAH_TASKS:
        docs = getattr(niah_utils, task)(max_seq_lengths=list(LENGTHS), pretrained="fixture")["test"]
        out += [{"task": task, "doc": compact(d)} for d in docs]
    with open(os.path.join(FIX, "niah_goldens.jsonl"), "w", encoding="utf-8") as f:
        for o in out:
            f.write(json.dumps(o, ensure_ascii=False) + "\n")
    # ruler_vt, built after the NIAH tasks as in the group: the same streams continue.
    vt = vt_utils.get_vt_dataset(max_seq_lengths=list(LENGTHS), pretrained="fixture")["test"]
    with open(os.path.join(FIX, "vt_goldens.jsonl"), "w", encoding="utf-8") as f:
        for d in vt:
            f.write(json.dumps({"task": "ruler_vt", "doc": compact(d)}, ensure_ascii=False) + "\n")
    out += vt
    # ruler_cwe next (its module-level Random(42) was made, and shuffled WORDS, at import above).
    cwe = cwe_utils.get_cw_dataset(max_seq_lengths=list(LENGTHS), pretrained="fixture")["test"]
    with open(os.path.join(FIX, "cwe_goldens.jsonl"), "w", encoding="utf-8") as f:
        for d in cwe:
            f.write(json.dumps({"task": "ruler_cwe", "doc": compact(d)}, ensure_ascii=False) + "\n")
    out += cwe
    print(f"wrote {len(out)} docs; lm-eval {lm_eval.__version__}, "
          f"python {sys.version.split()[0]}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
