"""Every `§x.y` the code, the tests and the docs cite is a section of docs/ari-format.md, the
project's own account of what ARI writes and how its scoped search works."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ari-format.md"
CITED = re.compile(r"§ ?(\d+(?:\.\d+)*)")
# a section is a heading (`## 5.`, `### 5.2 Scores`) or, in §11, a bold number (`**11.2**`)
SECTION = re.compile(r"^(?:#{2,4} (\d+(?:\.\d+)*)\.? |\*\*(\d+(?:\.\d+)*)\*\*)", re.MULTILINE)


def sections() -> set[str]:
    return {a or b for a, b in SECTION.findall(DOC.read_text(encoding="utf-8"))}


def citations() -> dict[str, list[str]]:
    """Each cited section: the files citing it (every tracked .py and .md file)."""
    files = subprocess.run(
        ["git", "ls-files", "*.py", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    cited: dict[str, list[str]] = {}
    for name in files:
        for number in CITED.findall((ROOT / name).read_text(encoding="utf-8")):
            cited.setdefault(number.rstrip("."), []).append(name)
    return cited


def test_the_format_doc_has_the_sections_the_code_is_organised_by():
    assert {"0", "1", "1.3", "2.7", "3.7", "4.5", "4.6", "5", "5.1", "5.2", "5.8", "11.2"} <= (
        sections()
    )


def test_every_cited_section_exists():
    cited = citations()
    assert len(cited) >= 30  # (the code cites the doc throughout: a broken pattern finds none)
    missing = {number: files for number, files in cited.items() if number not in sections()}
    assert missing == {}
