"""The LLM generators, one per module; each registers itself with `builder.synthesize.llm.base.register`.

`base.py` is the interface (plan requests, parse replies), `run.py` the build's glue (plan -> engine -> parse).
"""
