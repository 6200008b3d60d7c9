#!/usr/bin/env python3
"""Goldens for foxeval's port of jieba.cut (tasks/longbench/jieba.h), from Python jieba 0.42.1.

Writes, under OUT_DIR (default tests/fixtures/jieba):
  cut_goldens.jsonl  one {"text": ..., "tokens": [...]} per line: list(jieba.cut(text)), i.e.
                     cut_all=False, HMM=True, for seeded random sentences and a few paragraphs.
  data_stats.json    sizes of the data the port loads (dict.txt entry lines, len(FREQ), total,
                     len(start_P), trans entries, len(emit_P[s])), spot values of the HMM tables
                     (repr and float.hex), and the sha256 of each data file.

Python and data used: Debian's python3-jieba 0.42.1 under /usr/lib/python3/dist-packages/jieba,
imported by the system interpreter (/usr/bin/python3, CPython 3.11.2):
    /usr/bin/python3 tests/tools/make_jieba_goldens.py
Its dict.txt, __init__.py, _compat.py and finalseg/*.py are byte-identical (sha256) to the PyPI
sdist jieba-0.42.1.tar.gz, so PyPI's jieba gives the same goldens; --verify re-cuts the committed
goldens with whatever jieba the running Python imports, e.g.
    python3 -m venv /tmp/jiebavenv && /tmp/jiebavenv/bin/pip install jieba==0.42.1
    /tmp/jiebavenv/bin/python tests/tools/make_jieba_goldens.py --verify
(that compares the token lists only: it uses the imported package's own dict.txt). Done for the
committed goldens with PyPI's jieba 0.42.1 under CPython 3.11.7: 0 mismatches.

The prefix dict is built straight from dict.txt (gen_pfdict), bypassing jieba's marshal cache in
the temp dir, which could be stale or from another dictionary.
"""
import argparse
import hashlib
import json
import os
import random
import sys

import jieba
import jieba.finalseg as finalseg

SEED = 20240611
N_RANDOM = 2900
OUT_DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "jieba")

# Realistic Chinese text, written for this test (not copied from anywhere).
PARAGRAPHS = [
    "今天上午，北京市气象台发布了暴雨蓝色预警信号。预计今天下午到夜间，本市大部分地区将出现中到大雨，"
    "局地暴雨，并伴有雷电和短时大风。市民出行时请注意交通安全，尽量避免在低洼地带停留。",
    "据国家统计局最新数据显示，2023年全国居民人均可支配收入为39218元，比上年名义增长6.3%，"
    "扣除价格因素实际增长6.1%。其中，城镇居民人均可支配收入51821元，农村居民人均可支配收入21691元。",
    "小明打开笔记本电脑，登录了公司的VPN，然后用Python 3.11写了一个脚本来处理Excel表格。"
    "他发现pandas的read_excel函数比openpyxl快得多，于是把代码从v1.2.3升级到了v2.0.1版本。",
    "“你吃饭了吗？”奶奶在电话那头问道。\r\n“还没呢，刚下班。”我一边挤地铁一边回答。\n"
    "奶奶说：“那你快点回家，我给你包了饺子，有韭菜馅的，也有白菜猪肉馅的。”",
    "长江是中国第一大河，全长约6300公里，流经青海、西藏、四川、云南、重庆、湖北、湖南、江西、安徽、"
    "江苏和上海等十一个省级行政区，最后在上海崇明岛附近注入东海。",
    "人工智能技术的快速发展正在深刻改变着我们的生活方式。从智能手机上的语音助手，到自动驾驶汽车，"
    "再到医疗影像诊断，深度学习模型已经在许多领域超越了传统方法。然而，数据隐私和算法偏见等问题也引起了广泛关注。",
    "这家餐厅的招牌菜是红烧肉和清蒸鲈鱼，人均消费大约120元。服务员态度很好，上菜速度也快，"
    "唯一的缺点是周末排队时间太长，我们等了将近45分钟才有座位。总体评分：4.5/5。",
    "研究团队在《自然》杂志上发表论文指出，该新型锂电池的能量密度达到了每公斤500瓦时，循环寿命超过2000次，"
    "有望在未来三到五年内实现商业化应用。",
    "孔子曰：“学而时习之，不亦说乎？有朋自远方来，不亦乐乎？人不知而不愠，不亦君子乎？”"
    "这段话出自《论语·学而》，是儒家思想的重要体现。",
    "用户反馈：iPhone 15 Pro的A17芯片性能很强，但是发热有点严重；华为Mate60的信号比较好，"
    "续航也不错。我最后买了小米14，性价比最高，价格3999元起。",
    "会议定于2024年3月15日（星期五）下午2:30在公司三楼大会议室召开，请各部门负责人准时参加，"
    "并提前准备好第一季度的工作总结和第二季度的工作计划。联系人：张经理，电话：010-12345678。",
    "他说他从小就喜欢研究生命科学，后来考上了北京大学生命科学学院的研究生，毕业后去了美国做博士后研究。",
    "南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计和建造的双层式铁路、公路两用桥梁。",
    "乒乓球拍卖完了。结婚的和尚未结婚的都来了。我们中出了一个叛徒。这些句子经常被用来测试中文分词系统的歧义消解能力。",
    "在C++和C#之间，很多游戏开发者选择了C#，因为Unity引擎使用它作为主要脚本语言；而AT&T的贝尔实验室则是C++的诞生地。",
]

# Common ASCII words, including some that dict.txt lists (with case as dict.txt has it).
ASCII_WORDS = ["hello", "world", "Python", "jieba", "AT&T", "c#", "C++", "iPhone", "Windows", "NBA", "CPU",
               "GPU", "T恤", "B超", "X光", "KTV", "ok", "OK", "email", "A4", "U盘", "e-mail", "well-known",
               "foo_bar", "x86_64", "node.js", "a.b.c", "100%", "50%%", "#tag", "&amp", "--", "...", "_"]
CN_PUNCT = list("，。！？、；：“”‘’（）《》【】…—·～「」『』〈〉")
ASCII_PUNCT = list("!\"$'()*,/:;<=>?@[\\]^`{|}~") + ["+", "#", "&", ".", "_", "%", "-"]
WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]  # all of re's \s on str
FULL_WIDTH = list("ＡＢＣａｂｃ０１２３４５６７８９％＋－．＿＃＆")
OTHER_DIGITS = list("٠١٢٣٤٥٦٧٨٩०१२३४५६७८९")  # \d on str but outside [0-9]
EMOJI = ["😀", "👍", "🇨🇳", "👨‍👩‍👧", "❤️", "🎉", "🍜", "✅", "☕"]
# Characters just outside [\u4E00-\u9FD5] and other CJK blocks, plus invisible ones.
OUTSIDE_HAN = ["\u9fd6", "\u9fd7", "\u9fea", "\u9fff", "\u3400", "\u4db5", "\u4dff", "\u3007", "\u3006",
               "\U00020000", "\U0002a6d6", "\uf900", "\u2e80", "\u200b", "\ufeff", "\u00ad", "\u3005"]
EDGE_CASES = ["", " ", "\r\n", "\r\r\n\n", "\n\r", "\t\t", "\u3000\u3000", "a", "中", "\u9fd5", "\u4e00",
              "123", "3.14", "12.5%", "v1.2.3", "2.0.1", ".5", "5.", "1..2", "1.2.3.4%", "%", "-", "--1",
              "哈哈哈哈哈哈哈哈", "的的的的的", "嗯嗯嗯", "abc中文xyz1.5%", "中文abc", "１２３", "ＡＢＣ１２３％",
              "共有3000人参加", "增长了12.5%左右", "版本v1.2.3发布", "a\r\nb", "中\u3000文", "中\u00a0文",
              "c#语言", "AT&T公司", "B超检查", "T恤衫", "e-mail地址", "C++编程", "x光片", "3.14159265358979",
              "１２.５％", "12.５%", "12.٣%", "ab.٣", "我是\u9fd6字", "\u3400\u3401\u3402", "😀😀", "中😀文"]


def make_tokenizer():
    """jieba's default Tokenizer with FREQ built from dict.txt now (no cache file involved)."""
    tk = jieba.Tokenizer()
    tk.FREQ, tk.total = tk.gen_pfdict(tk.get_dict_file())
    tk.initialized = True
    return tk


def data_dir():
    return os.path.dirname(os.path.abspath(jieba.__file__))


def load_dict_words(path):
    words = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words.append(line.split(" ")[0])
    return words


def random_han(rng, lo=0x4E00, hi=0x9FD5):
    return chr(rng.randint(lo, hi))


def piece(rng, words, common):
    """One random fragment of a sentence."""
    kind = rng.random()
    if kind < 0.30:
        return rng.choice(common)
    if kind < 0.42:
        return rng.choice(words)
    if kind < 0.52:
        return "".join(random_han(rng) for _ in range(rng.randint(1, 6)))  # mostly rare Han
    if kind < 0.58:
        return rng.choice(ASCII_WORDS) if rng.random() < 0.6 else "".join(
            rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(rng.randint(1, 8)))
    if kind < 0.66:
        return number(rng)
    if kind < 0.72:
        return rng.choice(CN_PUNCT)
    if kind < 0.76:
        return rng.choice(ASCII_PUNCT)
    if kind < 0.82:
        return rng.choice(WHITESPACE) if rng.random() < 0.7 else rng.choice(["\r\n", "\n", " ", "\t", "\u3000", "\u00a0"])
    if kind < 0.86:
        return "".join(rng.choice(FULL_WIDTH) for _ in range(rng.randint(1, 4)))
    if kind < 0.89:
        return rng.choice(EMOJI)
    if kind < 0.93:
        return rng.choice(OUTSIDE_HAN)
    if kind < 0.95:
        return rng.choice(OTHER_DIGITS)
    return rng.choice(EDGE_CASES)


def number(rng):
    n = rng.randint(0, 5)
    if n == 0:
        return str(rng.randint(0, 100000))
    if n == 1:
        return "%d.%d" % (rng.randint(0, 999), rng.randint(0, 9999))
    if n == 2:
        return "%s%%" % rng.choice([str(rng.randint(0, 100)), "%d.%d" % (rng.randint(0, 99), rng.randint(0, 99))])
    if n == 3:
        return "v" * rng.randint(0, 1) + ".".join(str(rng.randint(0, 20)) for _ in range(rng.randint(2, 4)))
    if n == 4:
        return rng.choice(["3.14", "0.5", "1e10", "2,000", "1/2", "-7", "+3", "10:30", "3.", ".25"])
    return rng.choice(["第%d" % rng.randint(1, 99), "%d年" % rng.randint(1900, 2100), "%d月%d日" % (rng.randint(1, 12), rng.randint(1, 31))])


def random_sentences(rng, words):
    # Frequent words make realistic text; dict.txt is sorted by nothing useful, so sample both.
    with open(os.path.join(data_dir(), "dict.txt"), encoding="utf-8") as f:
        entries = [line.split(" ") for line in f]
    common = [w for w, fr, *_ in entries if int(fr) >= 5000]
    out = []
    for _ in range(N_RANDOM):
        out.append("".join(piece(rng, words, common) for _ in range(rng.randint(1, 14))))
    return out


def all_sentences():
    rng = random.Random(SEED)
    words = load_dict_words(os.path.join(data_dir(), "dict.txt"))
    sents = list(EDGE_CASES) + list(PARAGRAPHS)
    sents.append("".join(PARAGRAPHS))  # one long text
    sents += ["".join(random_han(rng) for _ in range(rng.randint(5, 40))) for _ in range(40)]  # rare Han runs
    sents += ["".join(rng.choice(words) for _ in range(rng.randint(2, 12))) for _ in range(60)]  # dictionary words
    sents += random_sentences(rng, words)
    return sents


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def data_stats(tk):
    d = data_dir()
    with open(os.path.join(d, "dict.txt"), "rb") as f:
        lines = sum(1 for _ in f)
    start, trans, emit = finalseg.start_P, finalseg.trans_P, finalseg.emit_P
    rng = random.Random(SEED + 1)
    spots = [("start", s, None, start[s]) for s in "BMES"]
    spots += [("trans", a, b, trans[a].get(b, finalseg.MIN_FLOAT)) for a in "BMES" for b in "BMES"]
    for s in "BMES":
        keys = list(emit[s])
        picks = [keys[0], keys[-1], "\u4e00", "a", "\u9fd5"] + rng.sample(keys, 6)
        spots += [("emit", s, k, emit[s].get(k, finalseg.MIN_FLOAT)) for k in picks]
    files = ["dict.txt", "finalseg/prob_start.py", "finalseg/prob_trans.py", "finalseg/prob_emit.py"]
    return {
        "jieba_version": jieba.__version__,
        "dict_words": lines,
        "prefix_entries": len(tk.FREQ),
        "total_freq": tk.total,
        "start_states": len(start),
        "trans_entries": sum(len(v) for v in trans.values()),
        "emit_entries": {s: len(emit[s]) for s in "BMES"},
        "spot_values": [{"table": t, "state": s, "key": k, "value": v, "hex": float(v).hex()} for t, s, k, v in spots],
        "sha256": {f: sha256(os.path.join(d, f)) for f in files},
    }


def write(out_dir):
    tk = make_tokenizer()
    os.makedirs(out_dir, exist_ok=True)
    sents = all_sentences()
    with open(os.path.join(out_dir, "cut_goldens.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for s in sents:
            f.write(json.dumps({"text": s, "tokens": list(tk.cut(s))}, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "data_stats.json"), "w", encoding="utf-8") as f:
        json.dump(data_stats(tk), f, ensure_ascii=True, indent=1)
        f.write("\n")
    print("wrote %d sentences to %s" % (len(sents), out_dir))


def verify(out_dir):
    tk = make_tokenizer()
    bad = 0
    n = 0
    with open(os.path.join(out_dir, "cut_goldens.jsonl"), encoding="utf-8") as f:
        for line in f:
            g = json.loads(line)
            n += 1
            got = list(tk.cut(g["text"]))
            if got != g["tokens"]:
                bad += 1
                if bad <= 5:
                    print("MISMATCH %r: %r != %r" % (g["text"], got, g["tokens"]))
    print("%d sentences, %d mismatches (jieba %s from %s)" % (n, bad, jieba.__version__, data_dir()))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=OUT_DEFAULT, help="fixture folder (default tests/fixtures/jieba)")
    ap.add_argument("--verify", action="store_true", help="re-cut the committed goldens and compare")
    args = ap.parse_args()
    if jieba.__version__ != "0.42.1":
        sys.exit("need jieba 0.42.1, got %s" % jieba.__version__)
    jieba.setLogLevel(60)
    if args.verify:
        sys.exit(verify(args.out))
    write(args.out)


if __name__ == "__main__":
    main()
