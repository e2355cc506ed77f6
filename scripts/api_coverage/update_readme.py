"""Rewrites the README's "Reference: Daft's API in Ketch" section from coverage.py's output.

    .venv/bin/python scripts/api_coverage/update_readme.py

Keeps the section's introduction; replaces its summary table, the DataFrame / protocols /
GroupedDataFrame / daft.functions tables and the "Still missing" list (sections with nothing
missing are left out).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = [
    "`DataFrame` methods and properties",
    "`DataFrame` protocols",
    "`GroupedDataFrame` methods",
    "`daft.functions`",
]


def _section(coverage: str, title: str) -> str:
    start = coverage.index(f"### {title}")
    end = coverage.index("\n#", start + 4)
    return coverage[start:end].replace("### ", "#### ", 1).rstrip() + "\n\n"


def main() -> None:
    script = str(Path(__file__).with_name("coverage.py"))
    coverage = subprocess.run([sys.executable, script], check=True, capture_output=True, text=True).stdout
    readme_path = ROOT / "README.md"
    readme = readme_path.read_text()
    start = readme.index("## Reference: Daft's API in Ketch")
    end = readme.index("## Where to read more")
    intro = readme[start : readme.index("| Section | Ketch has |", start)]
    table_start = coverage.index("| Section | Ketch has |")
    body = intro + coverage[table_start : coverage.index("\n\n", table_start)] + "\n\n"
    body += "".join(_section(coverage, title) for title in TABLES)
    missing_start = coverage.index("## Missing in Ketch, per section")
    missing = coverage[missing_start : coverage.index("## Ketch names that Daft")]
    lines = [line for line in missing.splitlines() if line.startswith("- **") and "(0 missing)" not in line]
    body += "#### Still missing\n\n" + "\n".join(lines) + "\n\n"
    readme_path.write_text(readme[:start] + body + readme[end:])


if __name__ == "__main__":
    main()
