"""A plugin model batches: batch mode asks the model for its batch API
(:meth:`Model.batch_api`), never which provider class it is. A model registered through
:func:`deflectbench.models.registry.register`, of no built-in class, offers one (OpenAI's batch
wire at its own base URL, under its own wire name), and batch mode submits, collects and
judges through it against the local batch emulator: every cell once, each answer the plugin's
own reader made of the result body.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import openai

from deflectbench.benchmark import default_benchmark
from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Message,
    Model,
    ModelError,
    Usage,
    finish_reason,
)
from deflectbench.models.openai_batch import OpenAIBatches
from deflectbench.models.registry import get_model, register, unregister
from deflectbench.pipeline.batches import BatchMode
from deflectbench.pipeline.context import RunContext
from deflectbench.store import Store
from support.batch_servers import BatchServer
from support.replies import unique_reply as reply

B = default_benchmark()
CELLS = [
    (c.claim_id, t.prompt_id, s) for c in B.claims[:2] for t in B.templates[:2] for s in (0, 1)
]
SETTINGS = {"seed": 0, "temperature": 1.0, "max_tokens": 64, "judges": ["lexical"]}


class PluginBatches(OpenAIBatches):
    """The plugin's batch API: OpenAI's Files + Batches wire, named as the plugin's own."""

    wire = "plugin"


class PluginModel(Model):
    """A plugin's model: answers in batches only; its own request body and reply reader."""

    def __init__(self, name: str, base_url: str) -> None:
        self.name = name
        self.sdk = openai.AsyncOpenAI(base_url=base_url, api_key="sk-plugin-test", max_retries=0)
        self.read = 0

    def wire_body(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        return {
            "model": self.name.partition("/")[2],
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "seed": params.seed,
        }

    def completion_from_body(self, body: Mapping[str, Any]) -> Completion:
        self.read += 1
        choice = body["choices"][0]
        text = choice["message"]["content"] or ""
        usage = body.get("usage") or {}
        tokens = Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0))
        return Completion(text, tokens, finish_reason(choice.get("finish_reason"), text))

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        raise ModelError(f"{self.name}: answers in batches only")

    def batch_api(self) -> PluginBatches:
        return PluginBatches(self)  # type: ignore[arg-type]  # the wire needs only sdk, body, reader

    async def aclose(self) -> None:
        await self.sdk.close()


def _factory(name: str, config: Any, env: Mapping[str, str]) -> PluginModel:
    return PluginModel(name, config["base_url"])


def test_a_plugin_model_offers_its_batch_api_and_batch_mode_uses_it(tmp_path: Path) -> None:
    register("plugbatch", _factory, forms=["plugbatch/<model>"])
    try:
        with BatchServer(reply=reply) as server, Store.open(tmp_path / "p.db") as store:
            model = get_model("plugbatch/m1", {"plugbatch": {"base_url": server.openai_base_url}})
            assert isinstance(model, PluginModel)
            mode = BatchMode(RunContext(store, B, run_id=None), {model.name: model})
            assert mode.batched([model.name, "lexical"]) == [model.name]

            async def go() -> None:
                try:
                    await mode.submit_generations(model.name, CELLS, "c", SETTINGS)
                    await mode.collect()
                finally:
                    await mode.aclose()

            asyncio.run(go())
            assert [(r.wire, r.model, r.state) for r in store.batch_list()] == [
                ("plugin", model.name, "collected")
            ]
            assert sum(server.submissions.values()) == len(CELLS) and server.twice() == []
            rows = store.conn.execute(
                "SELECT count(*), count(DISTINCT response) FROM generations "
                "WHERE model = ? AND error IS NULL",
                (model.name,),
            ).fetchone()
            assert tuple(rows) == (len(CELLS), len(CELLS))
            assert model.read == len(CELLS)  # every answer read by the plugin's own reader
            judged = store.conn.execute("SELECT count(*) FROM judgments WHERE judge = 'lexical'")
            assert judged.fetchone()[0] == len(CELLS)  # the collector judged what came back
    finally:
        unregister("plugbatch")
