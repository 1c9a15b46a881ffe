"""The demo run as it is being written: its rng, its entries and reads so far, each node's
content and direction, and the one way an entry is written (`RunState.write`, which draws its
passage id). The tool-call handlers (`demo.calls`) and the node end (`demo.node_end`) write
through it; `demo.run.DemoRun` adds the order in which everything happens."""

from __future__ import annotations

import random
from typing import Any

from ari_mem_tui.demo.planted import Planted
from ari_mem_tui.demo.records import Entry, NodeContent, Read
from ari_mem_tui.demo.tree import SimNode, Timeline


class RunState:
    """What the generator has written so far; afterwards, what the file writers read."""

    def __init__(self, rng: random.Random, timeline: Timeline) -> None:
        self.rng = rng
        self.tl = timeline
        self.run_id = timeline.run_id
        self.stop = timeline.stop
        self.nodes = timeline.nodes
        self.entries: list[Entry] = []
        self.reads: list[Read] = []
        self.content: dict[str, NodeContent] = {n.id: NodeContent() for n in self.nodes}
        self.directions: dict[str, str | None] = {}
        self.core_context: dict[str, Any] = {}
        self.queries: list[str] = []
        self.planted = Planted()  # chosen when the run is built, from the timeline alone
        # the storm's passage ids come from a stream of their own: planting it changes no
        # other entry of the run (`demo.planted.plant_tool_storm`)
        self.storm_rng = random.Random(f"{timeline.run_id}:tool-storm")

    def passage_id(self, rng: random.Random | None = None) -> str:
        """`passage-` + a version-4 UUID drawn from the rng (str(uuid.UUID(int=x, version=4)))."""
        x = (rng or self.rng).getrandbits(128)
        x = (x & ~(0xC000 << 48)) | (0x8000 << 48)  # RFC 4122 variant
        x = (x & ~(0xF000 << 64)) | (4 << 76)  # version 4
        h = f"{x:032x}"
        return f"passage-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def sha(self) -> str:
        return f"{self.rng.getrandbits(256):064x}"

    def write(
        self,
        node: str,
        text: str,
        meta: dict[str, Any],
        ts: float,
        kind: str = "node_scope",
        rank_text: str | None = None,
        rng: random.Random | None = None,
    ) -> Entry:
        entry = Entry(kind, node, text, meta, round(ts, 6), self.passage_id(rng), rank_text)
        self.entries.append(entry)
        return entry

    @staticmethod
    def fallback(node: SimNode, step: int) -> bool:
        """The few writes whose MCP add_memory raised, so ARI copied them to the react store."""
        return step == 2 and node.order % 5 == 2 and node.order < 100
