"""tiktoken's gpt2 encoding built from the bundled GPT-2 files (data/gpt2; no network), for the
fixture and golden generators of this folder."""
import os

import tiktoken
import tiktoken.load
from tiktoken_ext.openai_public import r50k_pat_str

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPT2 = os.path.join(ROOT, "data", "gpt2")


def gpt2_encoding():
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=os.path.join(GPT2, "vocab.bpe"),
        encoder_json_file=os.path.join(GPT2, "encoder.json"))
    return tiktoken.Encoding(name="gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257)
