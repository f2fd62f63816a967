"""Hand-made, schema-valid records and releases for the training tests, and a tiny random Llama."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from builder.record import CLEAR, Record
from builder.release import write_release

ENTITIES = [
    ("the Horizon card", "Horizon Rewards Card", "annual fee"),
    ("the Yosemite park", "Yosemite National Park", "entrance fee"),
    ("the Django framework", "Django REST Framework", "rate limit"),
    ("the Berlin Wall", "Berlin Wall", "length"),
    ("the Nile river", "Nile River", "length"),
    ("the Postgres plan", "PostgreSQL Standard plan", "connection limit"),
    ("the Alaska cruise", "Northstar Alaska cruise", "price"),
    ("the Tesla car", "Tesla Model 3", "range"),
    ("the Kyoto temple", "Kinkaku-ji temple", "opening hours"),
    ("the Roth account", "Roth IRA", "contribution limit"),
    ("the Python release", "Python 3.12", "release date"),
    ("the Everest climb", "Mount Everest", "height"),
]
OTHER = ["Sahara Desert", "Louvre Museum", "Bitcoin", "Kubernetes autoscaler", "Amazon rainforest"]
QUESTION = "Which thing do you mean? Could you name it?"
TOPICS = "The documents cover more than one topic. Which one are you asking about?"


def _prov(i: int) -> dict[str, Any]:
    return {"source_dataset": "hand", "conversation_id": f"conv-{i}", "turn": 2, "method": "hand",
            "method_version": "1", "seed": 0, "label_source": "human"}


def _doc(i: int, title: str, text: str) -> dict[str, str]:
    return {"id": f"doc-{i}-{abs(hash(title)) % 10_000}", "title": title, "text": text}


def records_for(i: int, rng: random.Random) -> list[dict[str, Any]]:
    """Five records about one entity: a positive and a hard negative per setting, and a clear one."""
    _, name, attr = ENTITIES[i % len(ENTITIES)]
    other = OTHER[i % len(OTHER)]
    history = [{"role": "user", "content": f"Tell me about the {name}."},
               {"role": "assistant", "content": f"The {name} is well known; people often ask about its {attr}."}]
    pronoun_query = f"What is its {attr}?"
    resolved = f"What is the {attr} of the {name}?"
    same = [_doc(i, name, f"The {name} has a {attr} that is listed here."),
            _doc(i + 100, name, f"More on the {name} and its {attr}.")]
    mixed = [_doc(i, name, f"The {name} has a {attr}."), _doc(i + 200, other, f"The {other} has a {attr} too.")]
    stitched = [{"role": "user", "content": f"What do you know about the {other}?"},
                {"role": "assistant", "content": f"The {other} is a famous subject."}]
    rows = [
        dict(setting="pre_retrieval", history=rng.choice([[], stitched]), query=pronoun_query, documents=[],
             needs=True, category="unresolved_reference", target=QUESTION,
             interpretations=[resolved, f"What is the {attr} of the {other}?"]),
        dict(setting="pre_retrieval", history=history, query=pronoun_query, documents=[], needs=False,
             category="hard_negative", resolution={"source": "history", "turn_index": 0, "referent": name,
                                                   "resolved_query": resolved}),
        dict(setting="post_retrieval", history=[], query=pronoun_query, documents=mixed, needs=True,
             category="multiple_interpretations", target=TOPICS,
             interpretations=[resolved, f"What is the {attr} of the {other}?"]),
        dict(setting="post_retrieval", history=[], query=pronoun_query, documents=same, needs=False,
             category="hard_negative", resolution={"source": "documents", "document_id": same[0]["id"],
                                                   "referent": name, "resolved_query": resolved}),
        dict(setting="pre_retrieval", history=rng.choice([[], history]), query=resolved, documents=[],
             needs=False, category="clear"),
    ]
    out = []
    for j, row in enumerate(rows):
        needs = row["needs"]
        prov = _prov(i * 10 + j)
        out.append(Record(
            domain=["finance", "travel", "software"][i % 3], setting=row["setting"], history=row["history"],
            query=row["query"], documents=row["documents"], needs_clarification=needs, category=row["category"],
            interpretations=row.get("interpretations", [resolved]),
            target={"clarification": row["target"] if needs else CLEAR},
            resolution=row.get("resolution"), pair_id=f"pair-{i}", provenance=prov,
        ).to_dict())
    return out


def make_records(n_entities: int, seed: int = 0, offset: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [r for i in range(offset, offset + n_entities) for r in records_for(i, rng)]


def write_hand_release(root: Path, train: int = 8, validation: int = 2, test: int = 2) -> Path:
    """A release whose splits come from disjoint entities."""
    out = Path(root) / "clariedge-hand" / "0.0.1"
    splits = {"train": make_records(train, 1), "validation": make_records(validation, 2, offset=train),
              "test": make_records(test, 3, offset=train + validation)}
    return write_release(out, splits, {"name": "clariedge-hand", "version": "0.0.1", "seed": 0}, "# hand\n")


CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def tiny_llama(out: Path, texts: list[str], vocab_size: int = 400, seed: int = 0) -> Path:
    """A random 2-layer Llama with a byte-level BPE tokenizer trained here on `texts`; saved to `out`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=1024, initializer_range=0.2, bos_token_id=fast.bos_token_id,
                         eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    model = LlamaForCausalLM(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    fast.save_pretrained(out)
    return out


def tiny_bert(out: Path, texts: list[str], seed: int = 0) -> Path:
    """A random 2-layer BERT with a word-level vocabulary from `texts`; saved to `out` (nothing downloaded)."""
    import re

    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    words = sorted({w for t in texts for w in re.findall(r"\w+|[^\w\s]", t.lower())})
    out.mkdir(parents=True, exist_ok=True)
    (out / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(out / "vocab.txt"))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512, num_labels=2)
    BertForSequenceClassification(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
