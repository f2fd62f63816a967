"""The rule-generator interface: a `Generator` protocol and the registry that names and versions them.

A generator is a class in `builder/synthesize/rules/`, decorated with `@register`. Its `name` is the config
key under `synthesize.generators` and the record's `provenance.method`; its `version` is
`provenance.method_version`. It is constructed with its config options as keyword arguments.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, ClassVar, Iterator, Protocol

from builder.synthesize.rejection import Rejection

if TYPE_CHECKING:
    from builder.record import Record
    from builder.synthesize.context import TurnContext


class Generator(Protocol):
    name: ClassVar[str]  # config key, provenance.method
    version: ClassVar[str]  # provenance.method_version
    # Optional class attributes: default_rate (share of turns when the config says nothing), default_enabled,
    # needs_corpus
    # (the build's pooled Corpus is made and passed in ctx.corpus), describe (how its records are made).

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]: ...


REGISTRY: dict[str, type[Generator]] = {}


def register(cls: type) -> type:
    """Class decorator: the one place a generator's name and version are declared."""
    for attr in ("name", "version"):
        if not isinstance(getattr(cls, attr, None), str) or not getattr(cls, attr):
            raise TypeError(f"generator {cls.__qualname__} needs a non-empty string class attribute '{attr}'")
    if not callable(getattr(cls, "generate", None)):
        raise TypeError(f"generator {cls.__qualname__} needs a generate(ctx) method")
    known = REGISTRY.get(cls.name)
    if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(f"generator name {cls.name!r} registered twice: {known.__module__}.{known.__qualname__} and "
                         f"{cls.__module__}.{cls.__qualname__}")
    REGISTRY[cls.name] = cls
    return cls


def load_rules() -> dict[str, type[Generator]]:
    """Import every module of builder/synthesize/rules/ (each registers its generators); the registry, by name."""
    from builder.synthesize import rules

    for info in sorted(pkgutil.iter_modules(rules.__path__), key=lambda m: m.name):
        importlib.import_module(f"{rules.__name__}.{info.name}")
    return dict(sorted(REGISTRY.items()))


def default_rate(cls: type) -> float:
    return float(getattr(cls, "default_rate", 1.0))
