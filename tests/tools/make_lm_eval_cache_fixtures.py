"""Writes tests/fixtures/lm_eval/caches/: the 11 tasks' fixture documents (tests/fixtures/lm_eval/data,
our own docs in each dataset's published field layout) laid out as researchers' machines hold them,
for `foxeval lm-eval requests --data hf`:

  datasets/  a `datasets` Arrow cache (HF_DATASETS_CACHE), written by datasets' own Parquet builder
             (download_and_prepare, so the builder's file naming, sharding and dataset_info.json are
             real), then placed where loading the hub id puts it: {org}___{name}/{config}/{version}/{hash}.
             (The builder is run on local files, which datasets names "{config}-{data_files hash}" and
             without the namespace; the two folders are renamed to the names a hub load gives.)
  hub/       a huggingface_hub cache (HF_HUB_CACHE): datasets--{org}--{name}/refs/main and
             snapshots/{commit}/ with parquet files in Hugging Face's split-naming conventions, made by
             hand per huggingface_hub's documented cache layout (blobs/ are not needed to read).
  saved/     piqa/ written by DatasetDict.save_to_disk.

Both cache kinds, both id generations (lm-eval 0.4.4's and current lm-eval's), sharded splits, and
decoys beside each task's split (other configs, other splits) holding different documents, so a
wrong pick changes the requests. Nothing here is fetched: every document is generated.

Run: /tmp/lmeval-venv/bin/python tests/tools/make_lm_eval_cache_fixtures.py   (datasets, pyarrow)
"""
import json
import os
import shutil

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from datasets.packaged_modules.parquet.parquet import Parquet

here = os.path.dirname(os.path.abspath(__file__))
fixtures = os.path.join(here, "..", "fixtures", "lm_eval")
out = os.path.join(fixtures, "caches")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def docs(task):
    with open(os.path.join(fixtures, "data", task + ".jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def decoy(rows):
    """Same schema, other documents: every string gets a marker."""
    def mark(v):
        if isinstance(v, str):
            return "DECOY " + v
        if isinstance(v, list):
            return [mark(x) for x in v]
        if isinstance(v, dict):
            return {k: mark(x) if k not in ("label",) else x for k, x in v.items()}
        return v
    return [{k: (mark(v) if k not in ("label", "answer", "answerKey", "question") else v) for k, v in r.items()}
            for r in rows]


def table(rows):
    return pa.Table.from_pylist(rows)


def datasets_cache(repo_id, config, splits, shard_rows=None, hash_="4f1e8a0c2b6d9e3f"):
    """splits: {split: rows}. shard_rows: rows per parquet row group, so the builder writes
    several .arrow shards (max_shard_size below one group)."""
    tmp = os.path.join(out, "_tmp")
    os.makedirs(tmp, exist_ok=True)
    files = {}
    for split, rows in splits.items():
        path = os.path.join(tmp, f"{split}.parquet")
        pq.write_table(table(rows), path, row_group_size=shard_rows or len(rows))
        files[split] = [path]
    name = repo_id.split("/")[-1]
    cache = os.path.join(tmp, "cache")
    b = Parquet(cache_dir=cache, dataset_name=name, config_name=config, hash=hash_, data_files=files,
                writer_batch_size=1 if shard_rows else None)
    b.download_and_prepare(max_shard_size=100 if shard_rows else None)
    (config_dir,) = os.listdir(os.path.join(cache, datasets.naming.camelcase_to_snakecase(name)))
    src = os.path.join(cache, datasets.naming.camelcase_to_snakecase(name), config_dir)
    top = datasets.naming.camelcase_to_snakecase(name)
    if "/" in repo_id:
        top = repo_id.split("/")[0] + "___" + top
    dst = os.path.join(out, "datasets", top, config)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.move(src, dst)
    shutil.rmtree(tmp)
    for dirpath, _, names in os.walk(dst):
        for n in names:
            if n.endswith(".lock"):
                os.remove(os.path.join(dirpath, n))


def hub(repo_id, files):
    """files: {path in the repo: rows} written as parquet into the snapshot."""
    repo = os.path.join(out, "hub", "datasets--" + repo_id.replace("/", "--"))
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(COMMIT)
    for rel, rows in files.items():
        path = os.path.join(repo, "snapshots", COMMIT, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(table(rows), path)


def main():
    shutil.rmtree(out, ignore_errors=True)
    # --- the datasets Arrow cache -------------------------------------------------------------
    wiki = docs("wikitext")
    datasets_cache("EleutherAI/wikitext_document_level", "wikitext-2-raw-v1",
                   {"test": wiki, "train": decoy(wiki), "validation": decoy(wiki)})
    datasets_cache("EleutherAI/wikitext_document_level", "wikitext-103-raw-v1", {"test": decoy(wiki)})
    piqa = docs("piqa")  # 0.4.4's id, no config: datasets' only config folder
    datasets_cache("piqa", "plain_text", {"validation": piqa, "train": decoy(piqa)})
    hs = docs("hellaswag")  # current lm-eval's id
    datasets_cache("Rowan/hellaswag", "default", {"validation": hs, "test": decoy(hs), "train": decoy(hs)})
    arc = docs("arc_easy")  # sharded: one row group per document, one .arrow shard each
    datasets_cache("allenai/ai2_arc", "ARC-Easy", {"test": arc, "validation": decoy(arc)}, shard_rows=1)
    boolq = docs("boolq")  # 0.4.4's id, config copa beside it (without copa's split: copa is found in the hub)
    datasets_cache("super_glue", "boolq", {"validation": boolq, "train": decoy(boolq)})
    copa = docs("copa")
    datasets_cache("super_glue", "copa", {"train": decoy(copa)})
    # --- the hub cache ------------------------------------------------------------------------
    lam = docs("lambada_openai")
    hub("EleutherAI/lambada_openai", {"default/test-00000-of-00001.parquet": lam,
                                      "en/test-00000-of-00001.parquet": decoy(lam)})
    wino = docs("winogrande")  # current id, sharded, decoy configs and splits
    hub("allenai/winogrande", {"winogrande_xl/validation-00000-of-00002.parquet": wino[:1],
                               "winogrande_xl/validation-00001-of-00002.parquet": wino[1:],
                               "winogrande_xl/train-00000-of-00001.parquet": decoy(wino),
                               "winogrande_debiased/validation-00000-of-00001.parquet": decoy(wino)})
    arcc = docs("arc_challenge")
    hub("allenai/ai2_arc", {"ARC-Challenge/test-00000-of-00001.parquet": arcc,
                            "ARC-Challenge/validation-00000-of-00001.parquet": decoy(arcc),
                            "ARC-Easy/test-00000-of-00001.parquet": decoy(arc)})
    hub("aps/super_glue", {"copa/validation-00000-of-00001.parquet": copa,
                           "copa/test-00000-of-00001.parquet": decoy(copa),
                           "boolq/validation-00000-of-00001.parquet": decoy(boolq)})
    sciq = docs("sciq")  # no config: data/{split}-NNNNN-of-NNNNN at the root
    hub("allenai/sciq", {"data/test-00000-of-00001.parquet": sciq, "data/validation-00000-of-00001.parquet": decoy(sciq)})
    obqa = docs("openbookqa")  # 0.4.4's id, {config}/{split}/*.parquet (the parquet-conversion layout)
    hub("openbookqa", {"main/test/0000.parquet": obqa[:2], "main/test/0001.parquet": obqa[2:],
                       "main/validation/0000.parquet": decoy(obqa), "additional/test/0000.parquet": decoy(obqa)})
    # --- save_to_disk ---------------------------------------------------------------------------
    dd = datasets.DatasetDict({"validation": datasets.Dataset.from_list(piqa),
                               "train": datasets.Dataset.from_list(decoy(piqa))})
    dd.save_to_disk(os.path.join(out, "saved", "piqa"))


if __name__ == "__main__":
    main()
