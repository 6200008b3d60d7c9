#!/usr/bin/env python3
"""Writes tests/fixtures/lm_eval/hflm_golden.json: what lm-evaluation-harness 0.4.4's own HFLM code
does with add_bos_token=True and the official JSONGPT2Tokenizer, on texts written for this project.

lm-eval's methods run unchanged (TemplateLM.loglikelihood/_encode_pair, HFLM.tok_encode,
loglikelihood_rolling, _loglikelihood_tokens with its Collator, truncation, right padding,
one-token-continuation cache and is_greedy check) on an HFLM object built without a Hugging Face
model: the tokenizer and the model call are stand-ins.

- Tokenizer: behaves as forgetting_transformer's JSONGPT2Tokenizer (GPT2Tokenizer with
  add_bos_token=True and prepare_for_tokenization = json.dumps(text)[1:-1]) under the transformers
  4.x the official code ran: encode(text, add_special_tokens=True) = [50256] + GPT-2 BPE of the
  escaped text, with a literal <|endoftext|> as the special token (tiktoken from data/gpt2 files).
- Model: a fake causal LM whose logits are hidden @ head^T, both defined in closed form below and
  re-implemented by tests/test_lm_eval_hflm.cpp, so the C++ engine's answers can be compared with
  lm-eval's _loglikelihood_tokens on the same "model":
    V = 50257, F = [1, 7, 49, 343, 2401], H = 2 len(F)
    head[v] = [cos(2 pi f v / V), sin(2 pi f v / V) for f in F]            (float64 -> float32)
    at position t of an input row x: c = (x[t] + 1) % V, p = x[t-1] (0 at t = 0),
    s = 2 + sin(0.37 t + 0.001 p), hidden[t] = s * [cos(2 pi f c / V), sin(2 pi f c / V) ...]
  so the argmax after token x is x + 1 (is_greedy can be true) and positions matter (truncation
  shows in the numbers).

Usage: .venv/bin/python tests/tools/lm_eval_hflm_golden.py   (needs lm-eval==0.4.4; no network)
"""
import importlib.metadata
import json
import math
import os
import types

import tiktoken
import tiktoken.load
import torch
import transformers
from tiktoken_ext.openai_public import r50k_pat_str

from lm_eval.api.model import CacheHook
from lm_eval.models.huggingface import HFLM

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPT2 = os.path.join(ROOT, "data", "gpt2")
OUT = os.path.join(ROOT, "tests", "fixtures", "lm_eval", "hflm_golden.json")
MAX_LENGTH = 64
BATCH_SIZE = 3
V = 50257
FREQS = [1, 7, 49, 343, 2401]


class JsonGpt2Tokenizer:
    """The parts of JSONGPT2Tokenizer(add_bos_token=True) that HFLM uses."""

    def __init__(self):
        ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=os.path.join(GPT2, "vocab.bpe"),
            encoder_json_file=os.path.join(GPT2, "encoder.json"))
        self.enc = tiktoken.Encoding(name="gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                                     special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=V)
        self.bos_token_id = 50256
        self.eos_token_id = 50256

    def encode(self, text, add_special_tokens=True):
        ids = self.enc.encode(json.dumps(text)[1:-1], allowed_special={"<|endoftext|>"})
        return ([self.bos_token_id] if add_special_tokens else []) + ids


def fake_head():
    rows = [[g(2 * math.pi * f * v / V) for f in FREQS for g in (math.cos, math.sin)] for v in range(V)]
    return torch.tensor(rows, dtype=torch.float64).to(torch.float32)


def fake_hidden(row):
    out = []
    for t, x in enumerate(row):
        c = (x + 1) % V
        p = row[t - 1] if t > 0 else 0
        s = 2 + math.sin(0.37 * t + 0.001 * p)
        out.append([s * g(2 * math.pi * f * c / V) for f in FREQS for g in (math.cos, math.sin)])
    return torch.tensor(out, dtype=torch.float64).to(torch.float32)


HEAD = fake_head()


def fake_model_call(inps, attn_mask=None, labels=None):
    hidden = torch.stack([fake_hidden(row.tolist()) for row in inps])  # [B, T, H]
    return hidden @ HEAD.T


def make_hflm():
    lm = HFLM.__new__(HFLM)  # lm-eval's methods, without loading a Hugging Face model
    lm.tokenizer = JsonGpt2Tokenizer()
    lm.add_bos_token = True
    lm.AUTO_MODEL_CLASS = transformers.AutoModelForCausalLM
    lm.logits_cache = True
    lm._max_length = MAX_LENGTH
    lm.batch_size_per_gpu = BATCH_SIZE
    lm._device = torch.device("cpu")
    lm._rank = 0
    lm._world_size = 1
    lm.custom_prefix_token_id = None
    lm.cache_hook = CacheHook(None)
    lm._model_call = fake_model_call
    lm.captured = []
    original = lm._loglikelihood_tokens

    def capture(requests, **kwargs):
        lm.captured.append([(list(c), list(x)) for _, c, x in requests])
        return original(requests, **kwargs)

    lm._loglikelihood_tokens = capture
    lm.original_loglikelihood_tokens = original
    return lm


PAIRS = [
    ("The cat sat on the", " mat"),
    ("Question: what is 2+2?\nAnswer:", " 4"),
    ("A context with a trailing space ", "word"),
    ("Several trailing whitespace characters\t\n ", "x"),
    ("No-break space at the end\u00a0", "y"),
    ("Ideographic space\u3000", "z"),
    ("", "An empty context."),
    ("   ", "an all-space context"),
    ("Unicode: caf\u00e9 na\u00efve \u2014 ", "\u65e5\u672c\u8a9e \U0001F642"),
    ("Quotes \"inside\" and a \\backslash", " done."),
    ("The boundary merge", "s"),
    ("Hello", " <|endoftext|> world"),
    ("Pick a colour:", " red"),
    ("Pick a colour:", " blue"),
    ("Pick a colour:", " green"),
    ("Pick a colour: red", "."),
    ("Pick a colour: red", "!"),
    ("A long context that keeps going " * 12, " and this continuation is scored after truncation"),
    ("Short", " but the continuation itself is rather long and takes many tokens, " * 2),
]

ROLLING = [
    "",
    "A short text.",
    "Tabs\tand\nnewlines\r\n and unicode \u00e9\u65e5 \U0001F600 in one text.",
    "x" + " a" * 62,   # 63 tokens + BOS = MAX_LENGTH: exactly one window
    "x" + " a" * 63,   # one token more: a second window predicting one token
    " ".join(f"word{i}" for i in range(90)),  # several windows, the last one partial
]

# Token-level requests straight into _loglikelihood_tokens (lm-eval's truncation and is_greedy on
# the fake model: after token x the argmax is x + 1).
TOKEN_REQUESTS = [
    ([100], [101, 102, 103]),                                   # greedy
    ([100], [101, 999]),                                        # not greedy at the second token
    ([50256], [0, 1]),                                          # wraps around the vocabulary: greedy
    (list(range(1000, 1070)), [1070, 1071]),                    # truncated input, greedy
    (list(range(2000, 2010)), list(range(2010, 2010 + 64))),    # continuation of max_length tokens
    ([7], list(range(8, 8 + 64))),                              # context + continuation = max_length + 1
    ([500, 501], [502]),                                        # same input as the next: computed once
    ([500, 501], [77]),
]


def main():
    version = importlib.metadata.version("lm-eval")
    assert version == "0.4.4", version
    lm = make_hflm()
    tok = lm.tokenizer
    assert len(tok.encode(ROLLING[3])) == MAX_LENGTH and len(tok.encode(ROLLING[4])) == MAX_LENGTH + 1

    pair_answers = lm.loglikelihood([types.SimpleNamespace(args=p) for p in PAIRS], disable_tqdm=True)
    (pair_tokens,) = lm.captured
    pairs = [{"context": c, "continuation": x, "context_enc": ct, "continuation_enc": xt,
              "logprob": a[0], "is_greedy": a[1]}
             for (c, x), (ct, xt), a in zip(PAIRS, pair_tokens, pair_answers)]

    rolling = []
    for text in ROLLING:
        lm.captured = []
        (logprob,) = lm.loglikelihood_rolling([types.SimpleNamespace(args=(text,))], disable_tqdm=True)
        (windows,) = lm.captured
        rolling.append({"text": text, "windows": [[c, x] for c, x in windows], "logprob": logprob})

    token_answers = lm.original_loglikelihood_tokens([(None, c, x) for c, x in TOKEN_REQUESTS], disable_tqdm=True)
    token_requests = [{"context": c, "continuation": x, "logprob": a[0], "is_greedy": a[1]}
                      for (c, x), a in zip(TOKEN_REQUESTS, token_answers)]
    assert [t["is_greedy"] for t in token_requests] == [True, False, True, True, True, True, True, False]

    golden = {
        "source": "lm-evaluation-harness 0.4.4 (PyPI lm-eval==0.4.4): lm_eval/api/model.py TemplateLM.loglikelihood, "
                  "_encode_pair; lm_eval/models/huggingface.py HFLM.tok_encode, loglikelihood_rolling, "
                  "_loglikelihood_tokens; lm_eval/utils.py get_rolling_token_windows, make_disjoint_window. "
                  "Texts written for foxeval. Made by tests/tools/lm_eval_hflm_golden.py.",
        "max_length": MAX_LENGTH,
        "batch_size": BATCH_SIZE,
        "fake_model": {"vocab": V, "freqs": FREQS},
        "pairs": pairs,
        "rolling": rolling,
        "token_requests": token_requests,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}: {len(pairs)} pairs, {len(rolling)} rolling texts, {len(token_requests)} token requests")


if __name__ == "__main__":
    main()
