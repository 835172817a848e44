"""python tests/export/hf_check.py REQUESTS.json OUT_DIR: loads exported directories with Hugging
Face's own classes (AutoModelForCausalLM, AutoTokenizer; trust_remote_code only where asked), as
tests/export/hf-transformers.integration.test.ts asks, and reports what it saw (one process for all:
importing torch and transformers takes seconds).

REQUESTS.json: [{"name": N, "dir": D, "trust_remote_code": bool, "model": bool, "tokens": [[...T]...B]
(model), "texts": [...], "prompt": str (model), "max_new_tokens": N}, ...]; for each, in OUT_DIR/N/:
result.json: {"warnings": [...every warning and transformers log record at WARNING or above
while loading...], "model_class", "model_type", "encodings": [[ids]...], "generated": {"ids", "text"},
"transformers", "torch"}; OUT_DIR/logits.safetensors: `logits` [B, T, V] float32 of the tokens.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import warnings

import torch
import transformers
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        requests = json.load(f)
    transformers.logging.set_verbosity_warning()
    transformers.logging.disable_progress_bar()
    for req in requests:
        check(req, os.path.join(sys.argv[2], req["name"]))
    return 0


def check(req: dict, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    handler = Collect()
    logging.getLogger("transformers").addHandler(handler)
    remote = {"trust_remote_code": True} if req["trust_remote_code"] else {}
    result: dict = {"transformers": transformers.__version__, "torch": torch.__version__}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = AutoTokenizer.from_pretrained(req["dir"], **remote)
        model = AutoModelForCausalLM.from_pretrained(req["dir"], **remote) if req["model"] else None
    result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught] + handler.records
    result["tokenizer_class"] = type(tok).__name__
    result["encodings"] = [tok(t)["input_ids"] for t in req["texts"]]
    result["decodings"] = [tok.decode(ids) for ids in result["encodings"]]
    if model is not None:
        model.eval()
        result["model_class"] = type(model).__name__
        result["model_type"] = model.config.model_type
        result["dtype"] = str(model.dtype)
        with torch.no_grad():
            logits = model(torch.tensor(req["tokens"], dtype=torch.int64)).logits
        save_file({"logits": logits.float().contiguous()}, os.path.join(out, "logits.safetensors"))
        prompt = tok(req["prompt"], return_tensors="pt").input_ids
        n = req["max_new_tokens"]
        ids = model.generate(prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False)[0, prompt.shape[1] :].tolist()
        result["generated"] = {"ids": ids, "text": tok.decode(ids)}
    with open(os.path.join(out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f)
    logging.getLogger("transformers").removeHandler(handler)


if __name__ == "__main__":
    sys.exit(main())
