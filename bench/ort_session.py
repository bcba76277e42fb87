"""The yardstick of memlog's embedding throughput: the same model file run
by ONNX Runtime's own Python session, on the same texts, already tokenized
by memlog's tokenizer (so that only the model's own speed is measured here),
with the same thread count and batch size.

Reads one JSON object on stdin:
  {"model": path, "threads": n, "batch": n, "ids": [[token ids], ...]}
and prints {"texts": n, "seconds": s, "load_seconds": s, "first": [vector,
...]}: the wall time of
embedding every text once (inputs built, session run, mean pooling and
normalisation), batches of texts of similar length (sorted by token count,
each batch padded to its longest), the session's creation not counted, and
the vectors of the first eight texts (the bench checks that memlog's agree).

Run by `memlog-bench --embedding` (and --vectors) with the venv scripts/install-assets
--bench makes (onnxruntime, numpy).
"""

import json
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    request = json.load(sys.stdin)
    started = time.perf_counter()
    options = ort.SessionOptions()
    options.intra_op_num_threads = request["threads"]
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(
        request["model"], options, providers=["CPUExecutionProvider"]
    )
    names = {i.name for i in session.get_inputs()}
    loaded = time.perf_counter() - started

    texts = request["ids"]
    batch = request["batch"]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = [None] * len(texts)
    started = time.perf_counter()
    for at in range(0, len(order), batch):
        chunk = order[at : at + batch]
        width = max(len(texts[i]) for i in chunk)
        ids = np.zeros((len(chunk), width), dtype=np.int64)
        mask = np.zeros((len(chunk), width), dtype=np.int64)
        for row, i in enumerate(chunk):
            ids[row, : len(texts[i])] = texts[i]
            mask[row, : len(texts[i])] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        for row, i in enumerate(chunk):
            out[i] = pooled[row]
    seconds = time.perf_counter() - started
    json.dump(
        {
            "texts": len(texts),
            "seconds": seconds,
            "load_seconds": loaded,
            "first": [v.tolist() for v in out[:8]],
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
