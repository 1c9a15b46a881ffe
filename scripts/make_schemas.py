"""Write the JSON Schema of every output into docs/schema/NAME.json (`ari-mem-tui schema NAME`
prints the same text); `--check` writes nothing and exits 1 when a committed file is stale.

Run it after a field of render/outputs.py changed:

    python scripts/make_schemas.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ari_mem_tui.render.outputs import OUTPUTS, json_schema
from ari_mem_tui.render.text import json_text

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "docs" / "schema"


def schema_text(name: str) -> str:
    return json_text(json_schema(name)) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which files are stale")
    args = parser.parse_args()
    stale = []
    for name in OUTPUTS:
        path = SCHEMA_DIR / f"{name}.json"
        text = schema_text(name)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    extra = sorted(set(SCHEMA_DIR.glob("*.json")) - {SCHEMA_DIR / f"{n}.json" for n in OUTPUTS})
    for path in extra:  # a document that is gone
        stale.append(path)
        if not args.check:
            path.unlink()
    verb = "stale" if args.check else "written"
    for path in stale:
        print(f"{verb}: {path.relative_to(SCHEMA_DIR.parents[1])}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
