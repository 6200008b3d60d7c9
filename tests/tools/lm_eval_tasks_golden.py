"""Writes tests/fixtures/lm_eval/: synthetic docs of our own for the 11 lm-eval tasks of the paper
(data/{task}.jsonl, in each Hugging Face dataset's field layout) and tasks_golden.json: what
lm-evaluation-harness 0.4.4's own task objects make of them (request strings, as lm-eval numbers
them) and what its own process_results + aggregations give on fixed fake log-likelihoods.

No network: each task's YAML is loaded by lm-eval's TaskManager, and the ConfigurableTask's dataset
download is replaced by the docs below (every split holds them).

Run: .venv/bin/python tests/tools/lm_eval_tasks_golden.py   (lm-eval==0.4.4, datasets)

Check a foxeval run on any docs (e.g. held-out ones) against lm-eval itself: lm-eval's requests
must equal the run's (--log-samples "arguments") and lm-eval's process_results + aggregations fed
with the run's answers must give the run's results, to the bit:
  .venv/bin/python tests/tools/lm_eval_tasks_golden.py --check RESULT.json SAMPLES.jsonl DATA_DIR
(DATA_DIR/{task}.jsonl as given to `foxeval lm-eval run --data`.)
"""
import argparse
import json
import os
import random

import datasets

from lm_eval.api import metrics as lm_metrics
from lm_eval.api.task import ConfigurableTask
from lm_eval.tasks import TaskManager

from importlib.metadata import version

assert version("lm-eval") == "0.4.4", version("lm-eval")

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "lm_eval")
os.makedirs(os.path.join(here, "data"), exist_ok=True)

TASKS = ["wikitext", "lambada_openai", "piqa", "hellaswag", "winogrande", "arc_easy", "arc_challenge",
         "boolq", "sciq", "copa", "openbookqa"]

# ---- docs of our own, with the corner cases each template or preprocessing step has ----------

DOCS = {
    "wikitext": [
        {"page": " = Valkyria Chronicles III = \n \n Senjō no Valkyria 3 : Unrecorded Chronicles ( Japanese : "
                 "戦場のヴァルキュリア3 , lit . Valkyria of the Battlefield 3 ) , is a tactical role @-@ playing "
                 "game . It sold 1 @,@ 000 copies at 3 @.@ 5 dollars . \n = = Gameplay = = \n \n The players ' "
                 "team ' s leader \" is here \" ; and [ more ] { braces } . Why ? Yes ! N 's 5 ° C . \n"},
        {"page": "\n = = = Deep heading = = = \n = = = = Deeper = = = = \n It /' 5/ was ' quoted text ' and "
                 "the dogs ' bones .\tTabs\there , and\u00a0no-break\u3000spaces ( \n multi \n line ) end . \n"},
        {"page": "A short page without markup"},
        {"page": "  leading spaces ,and \" unbalanced quote ( paren [ bracket \n\n\n trailing  "},
    ],
    "lambada_openai": [
        {"text": "In my palm is a clear stone , and inside it is a small ivory statuette . A guardian angel . "
                 "`` Figured if you 're going to be out at night getting hit by cars , you might as well "
                 "have some backup . '' I look at him , feeling stunned . Like this is some sort of sign"},
        {"text": "She said  two spaces  and then café"},
        {"text": "word"},
        {"text": "ends with a space "},
        {"text": "Unicode — dashes “quotes” and naïve résumé"},
    ],
    "piqa": [
        {"goal": "How do I ready a guinea pig cage for it's new occupants?",
         "sol1": "Provide the guinea pig with a cage full of a few inches of bedding made of ripped paper strips.",
         "sol2": "Provide the guinea pig with a cage full of a few inches of bedding made of ripped jeans material.",
         "label": 0},
        {"goal": "dresser", "sol1": "can hold \"quotes\" and 'apostrophes'", "sol2": "back\\slash\nnewline", "label": 1},
        {"goal": "Make café au lait ", "sol1": "ééééé", "sol2": "abcdefg", "label": 0},
        {"goal": "tie", "sol1": "same", "sol2": "same", "label": 1},
    ],
    "hellaswag": [
        {"ind": 24, "activity_label": "Roof shingle removal",
         "ctx_a": "A man is sitting on a roof.", "ctx_b": "he",
         "ctx": "A man is sitting on a roof. he",
         "endings": ["is using wrap to wrap a pair of skis.", "is ripping level tiles off.",
                     "is holding a rubik's cube.", "starts pulling up roofing on a roof."],
         "source_id": "activitynet~v_-JhWjGDPHMY", "split": "val", "split_type": "indomain", "label": "3"},
        {"ind": 92, "activity_label": "Personal Care and Style",
         "ctx_a": "[header] How to get rid of acne [title] Wash your face twice a day.",
         "ctx_b": "[step] Use A Gentle CLEANSER.",
         "ctx": "x",
         "endings": [" [substeps] Rinse  with  warm water. ", "Apply [title] a toner.",
                     "Scrub hard [unclosed bracket\n] here.", "Dry [a] [b] gently."],
         "source_id": "wikihow~1", "split": "val", "split_type": "zeroshot", "label": "0"},
        {"ind": 7, "activity_label": "Élan", "ctx_a": "Someone walks in.", "ctx_b": "",
         "ctx": "Someone walks in. ", "endings": ["a", "bb", "ccc", "dddd"],
         "source_id": "x", "split": "val", "split_type": "indomain", "label": "1"},
        {"ind": 8, "activity_label": "Skiing", "ctx_a": "", "ctx_b": "élan VITAL über ALLES",
         "ctx": "", "endings": ["ü", "u", "éé", "ee"],
         "source_id": "y", "split": "val", "split_type": "indomain", "label": "2"},
    ],
    "winogrande": [
        {"sentence": "Sarah was a much better surgeon than Maria so _ always got the harder cases.",
         "option1": "Sarah", "option2": "Maria", "answer": "1"},
        {"sentence": "The trophy doesn't fit into the brown suitcase because the _ is too large.  ",
         "option1": "trophy", "option2": "suitcase", "answer": "2"},
        {"sentence": "_ liked it.", "option1": "Ann", "option2": "Bob", "answer": "2"},
        {"sentence": "He gave it to _ _ twice.", "option1": "Zoë", "option2": "Chloé", "answer": "1"},
    ],
    "arc_easy": [
        {"id": "Mercury_7175875", "question": "Which of the following is an example of a physical change?",
         "choices": {"text": ["burning wood", "rusting iron", "melting ice", "baking bread"],
                     "label": ["A", "B", "C", "D"]}, "answerKey": "C"},
        {"id": "NYSEDREGENTS_2015_4_8", "question": "Numbered labels?",
         "choices": {"text": ["one", "two", "three"], "label": ["1", "2", "3"]}, "answerKey": "2"},
        {"id": "x5", "question": "Five choices, with unicode: naïve?",
         "choices": {"text": ["é", "ab", "c", "dé", "ee"], "label": ["A", "B", "C", "D", "E"]}, "answerKey": "E"},
    ],
    "arc_challenge": [
        {"id": "Mercury_SC_415702", "question": "George wants to warm his hands quickly by rubbing them. "
         "Which skin surface will produce the most heat?",
         "choices": {"text": ["dry palms", "wet palms", "palms covered with oil", "palms covered with lotion"],
                     "label": ["A", "B", "C", "D"]}, "answerKey": "A"},
        {"id": "c2", "question": "Trailing newline?\n",
         "choices": {"text": ["yes", "no"], "label": ["A", "B"]}, "answerKey": "B"},
        {"id": "c3", "question": "Four?", "choices": {"text": ["a", "b", "c", "d"], "label": ["A", "B", "C", "D"]},
         "answerKey": "D"},
    ],
    "boolq": [
        {"question": "do iran and afghanistan speak the same language",
         "passage": "Persian language -- Persian is a Western Iranian language.", "idx": 0, "label": 1},
        {"question": "is the sky green", "passage": "The sky is \"blue\".\nMostly.", "idx": 1, "label": 0},
        {"question": "question ending with a mark?", "passage": "", "idx": 2, "label": 1},
    ],
    "sciq": [
        {"question": "What type of organism is commonly used in preparation of foods such as cheese and yogurt?",
         "distractor3": "viruses", "distractor1": "protozoa", "distractor2": "gymnosperms",
         "correct_answer": "mesophilic organisms",
         "support": "Mesophiles grow best in moderate temperature, typically between 25°C and 40°C."},
        {"question": "Empty support?", "distractor3": "c", "distractor1": "a", "distractor2": "b",
         "correct_answer": "d", "support": ""},
        {"question": "Leading whitespace?", "distractor3": "three", "distractor1": "one", "distractor2": "two",
         "correct_answer": "four", "support": " \n\t Support after whitespace.  \n"},
    ],
    "copa": [
        {"premise": "My body cast a shadow over the grass.", "choice1": "The sun was rising.",
         "choice2": "The grass was cut.", "question": "cause", "idx": 0, "label": 0},
        {"premise": "The man broke his toe. ", "choice1": "He dropped a hammer on his foot.",
         "choice2": "I said Élan.", "question": "effect", "idx": 1, "label": 1},
        {"premise": "  Spaces around!  ", "choice1": "Ünder", "choice2": "over", "question": "cause", "idx": 2,
         "label": 0},
        {"premise": "Twins.", "choice1": "Same thing.", "choice2": "Same thing.", "question": "effect", "idx": 3,
         "label": 1},
    ],
    "openbookqa": [
        {"id": "7-980", "question_stem": "The sun is responsible for",
         "choices": {"text": ["puppies learning new tricks", "children growing up and getting old",
                              "flowers wilting in a vase", "plants sprouting, blooming and wilting"],
                     "label": ["A", "B", "C", "D"]}, "answerKey": "D"},
        {"id": "7-1", "question_stem": "Key with a space", "choices": {"text": ["a", "b", "c", "d"],
                                                                      "label": ["A", "B", "C", "D"]},
         "answerKey": " B"},
        {"id": "7-2", "question_stem": "naïve ", "choices": {"text": ["éé", "abc", "x", "yz"],
                                                            "label": ["A", "B", "C", "D"]}, "answerKey": "A"},
    ],
}

# Fake answers fixed by hand where a case must be exercised (acc_norm by characters, not bytes;
# ties go to the first choice); the rest come from a seeded generator.
FIXED_ANSWERS = {
    ("piqa", 2): [(-10.0, False), (-13.0, True)],  # per char: -2 vs -1.857 (1); per byte: -1 vs -1.857 (0)
    ("piqa", 3): [(-4.0, True), (-4.0, True)],
    ("arc_easy", 2): [(-3.0, False), (-5.0, False), (-2.5, False), (-5.0, False), (-4.0, True)],
    ("hellaswag", 3): [(-2.0, False), (-1.5, False), (-3.0, True), (-2.9, False)],
    ("copa", 3): [(-1.0, False), (-2.0, False)],  # gold is choices.index(target) = 0, not the label 1
}


class InjectedTask(ConfigurableTask):
    """A ConfigurableTask whose dataset is the docs above instead of a download."""

    docs = None

    def download(self, dataset_kwargs=None):
        split = datasets.Dataset.from_list(self.docs)
        self.dataset = datasets.DatasetDict({name: split for name in ["train", "validation", "test"]})


def make_task(manager, name, docs=None):
    config = manager._get_config(name)
    if "include" in config:  # arc_challenge includes arc_easy.yaml
        from lm_eval import utils
        config = {**utils.load_yaml_config(yaml_path=None, yaml_config={"include": config.pop("include")},
                                           mode="full"), **config}
    cls = type(f"Injected_{name}", (InjectedTask,), {"docs": DOCS[name] if docs is None else docs})
    return cls(config=config), manager._get_yaml_path(name)


def stderr_or_na(agg, items):
    # lm-eval: the closed form for mean aggregations; a random bootstrap for "perplexity" (not
    # reproducible, so not a golden); "N/A" where it has no stderr (weighted_perplexity, bits_per_byte).
    fn = lm_metrics.stderr_for_metric(agg, bootstrap_iters=100000)
    if fn is None or len(items) <= 1:
        return "N/A"
    if agg is lm_metrics.mean:
        return fn(items)
    return "bootstrap"


def main():
    manager = TaskManager()
    golden = {"source": "lm-evaluation-harness 0.4.4 (PyPI lm-eval==0.4.4) task objects, process_results and "
                        "aggregations on the docs in data/; made by tests/tools/lm_eval_tasks_golden.py",
              "tasks": {}}
    for name in TASKS:
        task, yaml_path = make_task(manager, name)
        with open(os.path.join(here, "data", f"{name}.jsonl"), "w", encoding="utf-8") as f:
            for d in DOCS[name]:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        rng = random.Random(f"foxeval-{name}")
        requests, answers, doc_metrics = [], [], []
        sample_metrics = {}
        for doc_id, doc in enumerate(task.eval_docs):
            ctx = task.fewshot_context(doc, 0)
            insts = task.construct_requests(doc, ctx, metadata=(name, doc_id, 1))
            if not isinstance(insts, list):
                insts = [insts]
            for inst in insts:
                r = {"task": name, "doc_id": doc_id, "index": inst.idx, "kind": inst.request_type}
                if inst.request_type == "loglikelihood_rolling":
                    r["text"] = inst.arguments[0]
                else:
                    r["context"], r["continuation"] = inst.arguments
                requests.append(r)
            fixed = FIXED_ANSWERS.get((name, doc_id))
            if task.OUTPUT_TYPE == "loglikelihood_rolling":
                ans = [(round(rng.uniform(-2000.0, -50.0), 6), False)]
                results = [ans[0][0]]
            else:
                ans = fixed or [(round(rng.uniform(-30.0, -0.5), 6), rng.random() < 0.4) for _ in insts]
                results = ans
            assert len(ans) == len(insts)
            m = task.process_results(doc, results)
            answers.append([{"logprob": a[0], "is_greedy": a[1]} for a in ans])
            doc_metrics.append({k: (list(v) if isinstance(v, tuple) else v) for k, v in m.items()})
            for k, v in m.items():
                sample_metrics.setdefault(k, []).append(v)
        results = {"alias": name}
        for metric, items in sample_metrics.items():
            agg = task.aggregation()[metric]
            results[f"{metric},none"] = agg(items)
            results[f"{metric}_stderr,none"] = stderr_or_na(agg, items)
        golden["tasks"][name] = {"yaml": yaml_path.split("lm_eval/", 1)[1], "docs": len(DOCS[name]),
                                 "requests": requests, "answers": answers, "doc_metrics": doc_metrics,
                                 "results": results, "version": task.VERSION,
                                 "higher_is_better": task.higher_is_better()}
    with open(os.path.join(here, "tasks_golden.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", here)


def check_run(result_path, samples_path, data_dir):
    results = json.load(open(result_path, encoding="utf-8"))["results"]
    samples = {}
    for line in open(samples_path, encoding="utf-8"):
        s = json.loads(line)
        samples.setdefault(s["task"], {})[s["doc_id"]] = s
    manager, bad = TaskManager(), 0
    for name, theirs in results.items():
        docs = [json.loads(x) for x in open(os.path.join(data_dir, f"{name}.jsonl"), encoding="utf-8")]
        docs = docs[:len(samples[name])]  # --limit: the first documents
        task, _ = make_task(manager, name, docs)
        sample_metrics = {}
        for doc_id, doc in enumerate(task.eval_docs):
            s = samples[name][doc_id]
            insts = task.construct_requests(doc, task.fewshot_context(doc, 0), metadata=(name, doc_id, 1))
            insts = insts if isinstance(insts, list) else [insts]
            if [list(i.arguments) for i in insts] != s["arguments"]:
                print(f"{name} doc {doc_id}: requests differ"); bad += 1
            if task.OUTPUT_TYPE == "loglikelihood_rolling":
                answers = [sum(r[0] for r in s["resps"])]  # HFLM sums the windows in order
            else:
                answers = [tuple(r) for r in s["resps"]]
            for k, v in task.process_results(doc, answers).items():
                sample_metrics.setdefault(k, []).append(v)
        for metric, items in sample_metrics.items():
            agg = task.aggregation()[metric]
            want = {f"{metric},none": agg(items)}
            se = stderr_or_na(agg, items)
            if se != "bootstrap":
                want[f"{metric}_stderr,none"] = se
            for k, v in want.items():
                same = theirs.get(k) == v
                bad += not same
                print(f"{name}\t{k}\tfoxeval {theirs.get(k)}\tlm-eval {v}\t{'ok' if same else 'DIFFERENT'}")
    print(f"{bad} differences")
    return bad


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", nargs=3, metavar=("RESULT", "SAMPLES", "DATA_DIR"))
    args = ap.parse_args()
    if args.check:
        raise SystemExit(1 if check_run(*args.check) else 0)
    main()
