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
  fwe_goldens.jsonl            ruler_fwe's docs (the same form), built after ruler_cwe
  qa/dev-v2.0.json             a synthetic SQuAD v2 dev file (its layout: articles, paragraphs, qas with
                               is_impossible; contexts repeated across articles; quotes, accents,
                               NBSP and backslashes in answers), standing in for lm-eval's download
  qa/hotpot_dev_distractor_v1.json  a synthetic HotpotQA dev-distractor file (its layout), its
                               documents few enough that 4096 tokens hold all of them (lm-eval's
                               branch that shuffles its cached document list in place)
  qa_goldens.jsonl             ruler_qa_squad's then ruler_qa_hotpot's docs, built after ruler_fwe
With --long (after the above, on the same data): long_goldens.jsonl, the tasks of LONG_TASKS built as
lm-eval builds that task list (fresh seeds, the group's order) at LONG_LENGTH tokens, one line per
task: {"task", "docs": [[index, length, digest], ...]} (long_digest; the inputs are 60 KB each).

How lm-eval is run without its network and heavy dependencies: `transformers.AutoTokenizer` is a
stand-in returning the checkpoints' tokenizer (JSONGPT2Tokenizer with add_bos_token=True: BOS 50256,
then GPT-2 BPE of json.dumps(text)[1:-1], via tiktoken on data/gpt2's files); `datasets` is a
stand-in whose load_dataset("baber/paul_graham_essays") returns the synthetic essays (sorted by file
name) and whose Dataset.from_list returns the list; qa_utils.download_json reads the synthetic QA
files instead of the network; NLTK_DATA points at the synthetic punkt_tab
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
# RULER_GOLDENS_OUT: write into another folder (tests/cli_ruler_lm_eval_test.sh compares it with the committed one).
FIX = os.environ.get("RULER_GOLDENS_OUT") or os.path.join(ROOT, "tests", "fixtures", "ruler")
LENGTHS = [1024, 4096]
LONG_LENGTH = 16384
LONG_TASKS = ["niah_single_2", "niah_multikey_3", "ruler_vt", "ruler_cwe", "ruler_fwe", "ruler_qa_squad", "ruler_qa_hotpot"]
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


def write_qa_data(rng):
    """Synthetic SQuAD v2 dev and HotpotQA dev-distractor files in the layouts lm-eval reads."""
    words = ["river", "castle", "engine", "music", "harbor", "garden", "museum", "bridge", "valley", "tower",
             "library", "station", "market", "island", "forest", "canal", "temple", "school", "theatre", "mill"]
    odd = ["Beyonc\u00e9", "caf\u00e9's", "\"quoted\"", "O'Brien", "1\u00a0000", "back\\slash", "na\u00efve",
           "\u2014dash", "it's \"both\"", "tab\there", "Z\u00fcrich", "\u65e5\u672c"]

    def sentence(lo=6, hi=16):
        ws = [rng.choice(words) for _ in range(rng.randrange(lo, hi))]
        if rng.random() < 0.5:
            ws.insert(rng.randrange(len(ws)), rng.choice(odd))
        return " ".join(ws).capitalize() + rng.choice([".", ".", "!", "?"])

    def paragraph(lo, hi):
        return " ".join(sentence() for _ in range(rng.randrange(lo, hi)))

    def answer_from(text):
        ws = text.split()
        i = rng.randrange(len(ws))
        return " ".join(ws[i:i + rng.randrange(1, 4)]).rstrip(".!?")

    os.makedirs(os.path.join(FIX, "qa"), exist_ok=True)
    articles, shared = [], []
    for a in range(45):
        paras = []
        for _ in range(rng.choice([1, 2, 3, 5, 8, 12, 14])):
            ctx = rng.choice(shared) if shared and rng.random() < 0.1 else paragraph(2, 5)
            shared.append(ctx)
            qas = []
            for q in range(rng.randrange(1, 6)):
                imp = rng.random() < 0.3
                ans = [] if imp else [answer_from(ctx) for _ in range(rng.randrange(1, 4))]
                qas.append({"question": f"Which {rng.choice(words)} of {answer_from(ctx)}?", "id": f"{a}-{len(paras)}-{q}",
                            "answers": [{"text": t, "answer_start": max(ctx.find(t), 0)} for t in ans],
                            "is_impossible": imp} | ({"plausible_answers": [{"text": answer_from(ctx), "answer_start": 0}]} if imp else {}))
            paras.append({"qas": qas, "context": ctx})
        articles.append({"title": f"Article_{a}", "paragraphs": paras})
    with open(os.path.join(FIX, "qa", "dev-v2.0.json"), "w", encoding="utf-8") as f:
        json.dump({"version": "v2.0", "data": articles}, f, ensure_ascii=False)

    titles = [f"{rng.choice(words).capitalize()} {rng.choice(odd)} {t}" for t in range(36)]
    pool = [(t, [" " + sentence(4, 10) if i else sentence(4, 10) for i in range(rng.randrange(1, 3))]) for t in titles]
    entries = []
    for q in range(520):
        ctx = rng.sample(pool, rng.randrange(2, 7))
        gold = ctx[0]
        entries.append({"_id": f"h{q}", "answer": answer_from("".join(gold[1])), "question": f"What {rng.choice(words)} is in {gold[0]}?",
                        "supporting_facts": [[gold[0], 0]], "context": [[t, list(p)] for t, p in ctx],
                        "type": rng.choice(["bridge", "comparison"]), "level": rng.choice(["easy", "medium", "hard"])})
    with open(os.path.join(FIX, "qa", "hotpot_dev_distractor_v1.json"), "w", encoding="utf-8") as f:
        json.dump(entries, f, ensure_ascii=False)


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


def long_digest(d):
    """The first 16 hex digits of SHA-256 over input, outputs, gen_prefix and input_example
    (NUL between fields, 0x1F between outputs): tests/test_ruler_niah.cpp computes the same."""
    text = "\0".join([d["input"], "\x1f".join(d["outputs"]), d["gen_prefix"], d.get("input_example", "")])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def long_goldens(niah_utils, vt_utils, cwe_utils, fwe_utils, qa_utils):
    import numpy as np
    random.seed(0)
    np.random.seed(1234)
    build = {"ruler_vt": vt_utils.get_vt_dataset, "ruler_cwe": cwe_utils.get_cw_dataset, "ruler_fwe": fwe_utils.fwe_download,
             "ruler_qa_squad": qa_utils.get_squad, "ruler_qa_hotpot": qa_utils.get_hotpotqa}
    n = 0
    with open(os.path.join(FIX, "long_goldens.jsonl"), "w", encoding="utf-8") as f:
        for task in LONG_TASKS:
            get = build.get(task) or getattr(niah_utils, task)
            docs = []
            for d in get(max_seq_lengths=[LONG_LENGTH], pretrained="fixture")["test"]:
                assert d["max_length"] == LONG_LENGTH
                docs.append([d["index"], d["length"], long_digest(d)])
            f.write(json.dumps({"task": task, "docs": docs}) + "\n")
            n += len(docs)
    print(f"wrote {n} docs at {LONG_LENGTH} tokens")


def main():
    write_synthetic_data(random.Random(5353))
    write_qa_data(random.Random(5252))
    install_stand_ins()
    import numpy as np
    import lm_eval
    # lm_eval/tasks/__init__.py imports the whole task registry (yaml, jinja, evaluate...); the RULER
    # modules need none of it: the package is entered without running that __init__.
    tasks_pkg = types.ModuleType("lm_eval.tasks")
    tasks_pkg.__path__ = [os.path.join(os.path.dirname(lm_eval.__file__), "tasks")]
    sys.modules["lm_eval.tasks"] = tasks_pkg
    from lm_eval.tasks.ruler import cwe_utils, fwe_utils, niah_utils, qa_utils, vt_utils

    def local_json(url):
        name = url.rsplit("/", 1)[-1]
        with open(os.path.join(FIX, "qa", name), encoding="utf-8") as f:
            return json.load(f)
    qa_utils.download_json = local_json

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
    fwe = fwe_utils.fwe_download(max_seq_lengths=list(LENGTHS), pretrained="fixture")["test"]
    with open(os.path.join(FIX, "fwe_goldens.jsonl"), "w", encoding="utf-8") as f:
        for d in fwe:
            f.write(json.dumps({"task": "ruler_fwe", "doc": compact(d)}, ensure_ascii=False) + "\n")
    out += fwe
    with open(os.path.join(FIX, "qa_goldens.jsonl"), "w", encoding="utf-8") as f:
        for task, get in [("ruler_qa_squad", qa_utils.get_squad), ("ruler_qa_hotpot", qa_utils.get_hotpotqa)]:
            docs = get(max_seq_lengths=list(LENGTHS), pretrained="fixture")["test"]
            for d in docs:
                f.write(json.dumps({"task": task, "doc": compact(d)}, ensure_ascii=False) + "\n")
            out += docs
    if "--long" in sys.argv:
        # A fresh process state is what a second lm-eval run has: the QA lists' cache too.
        # and cwe_utils' module Random(42) as its import makes it.
        import importlib
        qa_utils.read_squad.cache_clear(), qa_utils.read_hotpotqa.cache_clear()
        cwe_utils = importlib.reload(cwe_utils)
        long_goldens(niah_utils, vt_utils, cwe_utils, fwe_utils, qa_utils)
    print(f"wrote {len(out)} docs; lm-eval {lm_eval.__version__}, "
          f"python {sys.version.split()[0]}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
