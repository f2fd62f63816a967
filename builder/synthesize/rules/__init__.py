"""The rule-based generators, one per module; each registers itself with `builder.synthesize.base.register`."""
