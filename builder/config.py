"""Build configuration: a YAML file validated by pydantic. Relative paths resolve against the config file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from builder.errors import InputError
from builder.io import read_text


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputConfig(_Strict):
    path: str | None = Field(None, description="Conversations file; empty = the embedded demo corpus.")
    format: Literal["auto", "generic", "mtrag"] = "auto"
    retrieval_tasks: str | None = Field(None, description="MTRAG retrieval_tasks/ folder (rewrites and ids).")
    source_dataset: str | None = None


class GeneratorConfig(BaseModel):
    """One rule generator's settings; keys other than `enabled` and `rate` are the generator's own options
    (keyword arguments of its class, e.g. `post_share` of standalone_clear)."""

    model_config = ConfigDict(extra="allow")
    enabled: bool = True
    rate: float = Field(1.0, ge=0.0, le=1.0, description="Share of eligible turns the generator is applied to.")

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def _registry() -> dict[str, type]:
    from builder.synthesize.base import load_rules  # the registry is the one list of generator names

    return load_rules()


def _default(cls: type) -> GeneratorConfig:
    return GeneratorConfig(enabled=getattr(cls, "default_enabled", True), rate=getattr(cls, "default_rate", 1.0))


def _with_defaults(given: GeneratorConfig, cls: type) -> GeneratorConfig:
    """`standalone_clear: {post_share: 0.2}` keeps the generator's own default rate and enablement."""
    default = _default(cls)
    unset = {k: getattr(default, k) for k in ("enabled", "rate") if k not in given.model_fields_set}
    return given.model_copy(update=unset)


def _default_generators() -> dict[str, GeneratorConfig]:
    return {name: _default(cls) for name, cls in _registry().items()}


class SynthesizeConfig(_Strict):
    block_size: int = Field(2, ge=2, description="Conversations per stitching block (histories are borrowed within a block).")
    generators: dict[str, GeneratorConfig] = Field(
        default_factory=_default_generators,
        description="Rule generators by registered name; a name left out keeps its defaults.")

    @field_validator("generators")
    @classmethod
    def _known_generators(cls, given: dict[str, GeneratorConfig]) -> dict[str, GeneratorConfig]:
        """Names must be registered and options must construct the generator; names left out get defaults."""
        registry = _registry()
        for name, gen in given.items():
            if name not in registry:
                raise ValueError(f"unknown generator '{name}'; known: {', '.join(registry)}")
            try:
                registry[name](**gen.options())
            except (TypeError, ValueError) as err:
                raise ValueError(f"generator '{name}': bad option ({err})") from None
        return {name: _with_defaults(given[name], c) if name in given else _default(c) for name, c in registry.items()}


class DedupConfig(_Strict):
    query_threshold: float = Field(92.0, ge=50.0, le=100.0, description="rapidfuzz ratio for near-identical queries.")


class SplitConfig(_Strict):
    train: float = 0.8
    validation: float = 0.1
    test: float = 0.1


class EndpointConfig(_Strict):
    """An OpenAI-compatible endpoint (mirrors builder.llm.EngineConfig; the cache folder is a CLI option)."""

    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = Field("OPENAI_API_KEY", description="Name of the variable holding the key; never the key.")
    concurrency: int = Field(64, ge=1)
    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)
    timeout: float = Field(120.0, gt=0)
    max_retries: int = Field(6, ge=0)
    backoff_base: float = Field(1.0, ge=0)
    backoff_max: float = Field(60.0, ge=0)
    structured: bool = True
    strict_schema: bool = False
    reask: bool = True


def _llm_generators() -> dict[str, type]:
    from builder.synthesize.llm.base import turn_generators  # the LLM registry: the one list of their names

    return turn_generators()


def _default_llm_rates() -> dict[str, float]:
    from builder.synthesize.llm.base import default_rates

    return default_rates()


class LLMConfig(_Strict):
    """LLM generators next to the rule-based ones (builder/synthesize/llm/; builder.synthesize.llm.base.LLMSettings)."""

    endpoint: EndpointConfig = Field(default_factory=EndpointConfig)
    model: str = "gpt-4o-mini"
    temperature: float = Field(0.7, ge=0.0)
    max_tokens: int = Field(512, ge=1)
    seed: int | None = 13
    generators: dict[str, float] = Field(
        default_factory=_default_llm_rates,
        description="Share of eligible turns, by registered LLM generator name; a name left out does not run.")
    verify: Literal["off", "drop", "flag"] = "drop"
    naturalize: bool = False
    max_failure_rate: float = Field(0.05, ge=0.0, le=1.0, description=(
        "Share of LLM requests that may end without a usable reply; above it the build stops, releasing nothing."))

    @field_validator("generators")
    @classmethod
    def _known_llm_generators(cls, given: dict[str, float]) -> dict[str, float]:
        registry = _llm_generators()
        for name in given:
            if name not in registry:
                raise ValueError(f"unknown LLM generator '{name}'; known: {', '.join(registry)}")
        return given


class BuildConfig(_Strict):
    name: str = "clariedge-demo"
    version: str = "1.0.0"
    seed: int = 13
    license: str = "apache-2.0"
    source_datasets: list[str] = Field(default_factory=list)
    input: InputConfig = Field(default_factory=InputConfig)
    synthesize: SynthesizeConfig = Field(default_factory=SynthesizeConfig)
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    split: SplitConfig = Field(default_factory=SplitConfig)
    llm: LLMConfig | None = Field(None, description="None = the offline, rule-based build.")


def load_config(path: Path | None) -> BuildConfig:
    """Read and validate a config; paths inside it become absolute."""
    if path is None:
        return BuildConfig()
    path = Path(path)
    try:
        data = yaml.safe_load(read_text(path)) or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise InputError(f"{path}{line}: malformed YAML ({getattr(err, 'problem', err)})") from None
    try:
        config = BuildConfig.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise InputError(f"{path}: field '{field}': {first['msg']}") from None
    base = path.resolve().parent
    for attr in ("path", "retrieval_tasks"):
        value = getattr(config.input, attr)
        if value:
            resolved = (base / value).resolve()
            if not resolved.exists():
                raise InputError(f"{path}: field 'input.{attr}': file not found: {resolved}")
            setattr(config.input, attr, str(resolved))
    return config


def apply_overrides(
    config: BuildConfig,
    *,
    input: Path | None = None,
    fmt: str | None = None,
    seed: int | None = None,
    base_url: str | None = None,
    llm_model: str | None = None,
    max_llm_failure_rate: float | None = None,
    name_from_input: bool = False,
    default_llm: bool = False,
) -> BuildConfig:
    """A copy of `config` with command-line flags applied: the one place where flags change a config.

    `input` replaces the conversations file (and drops the MTRAG-only retrieval tasks and source name);
    `name_from_input` then names the set after the file. `default_llm` starts from the default `llm:`
    section when the config has none; otherwise `base_url` / `llm_model` need one.
    """
    cfg = config.model_copy(deep=True)
    if input is not None:
        input = Path(input)
        if not input.exists():
            raise InputError(f"{input}: file not found")
        cfg.input.path = str(input.resolve())
        cfg.input.retrieval_tasks = None
        cfg.input.source_dataset = None
        if name_from_input:
            cfg.name = f"clariedge-{input.stem}".lower().replace("_", "-")
    if fmt and fmt != "auto":
        cfg.input.format = fmt
    if seed is not None:
        cfg.seed = seed
    if cfg.llm is None and default_llm:
        cfg.llm = LLMConfig()
    if (base_url or llm_model or max_llm_failure_rate is not None) and cfg.llm is None:
        raise InputError("--base-url, --llm-model and --max-llm-failure-rate need a config with an `llm:` section (e.g. configs/demo-llm.yaml)")
    if base_url:
        cfg.llm.endpoint.base_url = base_url
    if llm_model:
        cfg.llm.model = llm_model
    if max_llm_failure_rate is not None:
        cfg.llm.max_failure_rate = max_llm_failure_rate
    return cfg
