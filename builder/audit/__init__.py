"""Label-quality audit: sample for annotators, import their labels, measure, find suspects, apply fixes.

Entry point: `clariedge audit ...` (builder/audit/cli.py). One module per concern:
release (read a release), render (text for people), sample, annotations (import), agreement (kappa),
metrics, suspects (model), judge (LLM), report, apply.
"""
