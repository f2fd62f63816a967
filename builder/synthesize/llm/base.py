"""The LLM-generator interface: `plan(...) -> [Request]`, the engine answers (cache first), `parse(request, reply)`.

An LLM generator is a class in `builder/synthesize/llm/`, decorated with `@register`:
- `name`: its key (under `llm.generators` in a build config, for a generator over turns);
- `method`: `provenance.method` of its records and its key in the manifest's `generators`;
- `prompts`: the prompt files (`prompts/<name>.md`) it asks with. Its `version` is derived from theirs
  (`ambiguate@1+clarify@1`), so a prompt's version is written once, in the prompt file;
- `stage`: "turns" (plans over TurnContexts, like a rule generator) or "records" (plans over record dicts:
  the verify judge, the naturalize post-edit).

`plan` returns plain data: a Request's `spec` is all the engine sends, and its hash is the cache key; `ctx`
and `data` stay here for `parse`. `parse` runs on every build, after the cache, so editing a parser never
re-pays (unless what it returns is asked again: a follow-up Request, or a record text the judge then reads).
A turn generator's `parse` returns a Record, a Rejection (with its reason), or a follow-up Request asked in
the next round (ambiguate asks clarify about its own draft).
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Sequence

if TYPE_CHECKING:
    from builder.conversation import Passage
    from builder.llm import RequestSpec, Result
    from builder.record import Record
    from builder.synthesize.context import TurnContext
    from builder.synthesize.rejection import Rejection

STAGES = ("turns", "records")


@dataclass
class LLMSettings:
    """What a build config's `llm:` section holds (the endpoint itself is an EngineConfig)."""

    model: str = "gpt-4o-mini"
    temperature: float = 0.7
    max_tokens: int = 512
    seed: int | None = 13
    generators: dict[str, float] = field(default_factory=lambda: default_rates())  # name -> share of turns
    verify: str = "drop"  # off | drop | flag: what a disagreement with the judge does
    naturalize: bool = False  # post-edit rule-based records (then re-verify)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.seed is not None:
            out["seed"] = self.seed
        return out


@dataclass(frozen=True)
class Request:
    """One planned request: `spec` goes to the engine; `ctx` and `data` are what `parse` needs, never sent."""

    generator: str  # registered name whose parse() reads the reply
    spec: RequestSpec
    ctx: TurnContext | None = None  # the turn it was planned for (None for a records step)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        return self.spec.prompt_name


class LLMGenerator(Protocol):
    name: ClassVar[str]
    method: ClassVar[str]
    prompts: ClassVar[tuple[str, ...]]
    stage: ClassVar[str]
    version: ClassVar[str]  # set by @register from the prompts' versions
    # Optional: followups (requests each planned one leads to, for the dry run's estimate; 0),
    # default_rate (share of turns when the config names no generator; 1.0).

    def __init__(self, settings: LLMSettings) -> None: ...

    def plan(self, items: Sequence[Any]) -> list[Request]: ...

    def parse(self, request: Request, reply: Result) -> Record | Rejection | Request | Any: ...

    @classmethod
    def active(cls, settings: LLMSettings) -> bool: ...


REGISTRY: dict[str, type[LLMGenerator]] = {}


def register(cls: type) -> type:
    """Class decorator: the one place an LLM generator's name is declared; its version comes from its prompts."""
    for attr in ("name", "method", "stage"):
        if not isinstance(getattr(cls, attr, None), str) or not getattr(cls, attr):
            raise TypeError(f"LLM generator {cls.__qualname__} needs a non-empty string class attribute '{attr}'")
    if cls.stage not in STAGES:
        raise TypeError(f"LLM generator {cls.__qualname__}: stage must be one of {STAGES}, got {cls.stage!r}")
    prompts = getattr(cls, "prompts", None)
    if not isinstance(prompts, tuple) or not prompts or not all(isinstance(p, str) and p for p in prompts):
        raise TypeError(f"LLM generator {cls.__qualname__} needs a non-empty tuple of prompt names 'prompts'")
    if "version" in vars(cls):
        raise TypeError(f"LLM generator {cls.__qualname__}: 'version' comes from its prompts' versions; "
                        "bump the version in the prompt file instead")
    for method in ("plan", "parse"):
        if not callable(getattr(cls, method, None)):
            raise TypeError(f"LLM generator {cls.__qualname__} needs a {method}() method")
    known = REGISTRY.get(cls.name)
    if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(f"LLM generator name {cls.name!r} registered twice: {known.__module__}.{known.__qualname__} "
                         f"and {cls.__module__}.{cls.__qualname__}")
    cls.version = method_version(prompts)
    if not hasattr(cls, "active"):
        cls.active = classmethod(_rate_active)
    REGISTRY[cls.name] = cls
    return cls


def _rate_active(cls: type, settings: LLMSettings) -> bool:
    return settings.generators.get(cls.name, 0) > 0


def load_llm() -> dict[str, type[LLMGenerator]]:
    """Import every module of builder/synthesize/llm/ (each registers its generators); the registry, by name."""
    from builder.synthesize import llm

    for info in sorted(pkgutil.iter_modules(llm.__path__), key=lambda m: m.name):
        importlib.import_module(f"{llm.__name__}.{info.name}")
    return dict(sorted(REGISTRY.items()))


def turn_generators() -> dict[str, type[LLMGenerator]]:
    """The generators over turns: the names `llm.generators` may use."""
    return {name: cls for name, cls in load_llm().items() if cls.stage == "turns"}


def default_rates() -> dict[str, float]:
    return {name: float(getattr(cls, "default_rate", 1.0)) for name, cls in turn_generators().items()}


# --- helpers the generators share --------------------------------------------------------------------


def method_version(prompts: Sequence[str]) -> str:
    from builder.llm.prompts import load_prompt

    return "+".join(f"{n}@{load_prompt(n).version}" for n in prompts)


def prompt_info(prompts: Sequence[str]) -> dict[str, str]:
    """Name, version and sha256 of the prompt files (joined for a chain), for provenance and the manifest."""
    from builder.llm.prompts import load_prompt

    loaded = [load_prompt(n) for n in prompts]
    if len(loaded) == 1:
        return loaded[0].info()
    joined = "".join(p.sha256 for p in loaded)
    return {"name": "+".join(p.name for p in loaded), "version": "+".join(p.version for p in loaded),
            "sha256": hashlib.sha256(joined.encode()).hexdigest()}


def documents(passages: Sequence[Passage]) -> list[dict[str, str]]:
    return [p.as_document() for p in passages]


def failed(request: Request, method: str, reply: Result, query: str | None = None) -> Rejection:
    """The rejection of a turn whose request got no usable reply; the engine's reason is kept."""
    return request.ctx.reject(method, f"llm: {reply.error}", query)
