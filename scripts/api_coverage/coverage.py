"""Which of Daft's public API names Ketch has: Markdown tables for the README.

Run with a Python that can `import ketch`, e.g.

    .venv/bin/python scripts/api_coverage/coverage.py > /tmp/coverage.md

Daft's names come from daft_api.py next to this file (Daft 0.7.26; the Expression namespaces from
Daft 0.6.14, the last release that had them). Presence is checked by introspection only (hasattr /
the class's own attributes); nothing is executed beyond `ketch.col("x").<namespace>`. A module,
class or namespace that Ketch lacks counts as all of its names missing; nothing here raises.
"""

from __future__ import annotations

import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daft_api  # noqa: E402

YES, NO = "✓", "—"
PAIRS_PER_ROW = 4  # name/mark pairs per table row


def _safe_hasattr(obj, name: str) -> bool:
    if obj is None:
        return False
    try:
        return hasattr(obj, name)
    except Exception:
        return False


def _has_own_dunder(cls, name: str) -> bool:
    """True when `cls` (or a base other than `object`) defines `name` itself: object's default
    __eq__ / __iter__ etc. don't count as Ketch supporting the operator."""
    if not isinstance(cls, type):
        return False
    for klass in cls.__mro__:
        if klass is object:
            continue
        if name in vars(klass) and vars(klass)[name] is not None:
            return True
    return False


def _import(modname: str):
    try:
        return importlib.import_module(modname)
    except Exception:
        return None


def _grouped_class(ketch, dataframe_mod):
    cls = getattr(dataframe_mod, "GroupedDataFrame", None) if dataframe_mod else None
    if isinstance(cls, type):
        return cls
    if dataframe_mod is not None:  # renamed?
        for name, obj in vars(dataframe_mod).items():
            if isinstance(obj, type) and "group" in name.lower():
                return obj
    try:  # last resort: ask a DataFrame for its groupby result type
        return type(ketch.from_pydict({"x": [1]}).groupby("x"))
    except Exception:
        return None


def _namespace_obj(ketch, ns: str):
    try:
        expr = ketch.col("x")
    except Exception:
        return None
    try:
        obj = getattr(expr, ns)
    except Exception:
        return None
    if callable(obj):  # a method of that name, not a namespace
        return None
    return obj


def _table(rows: list[tuple[str, bool]]) -> str:
    """Sorted names, laid out column-major in PAIRS_PER_ROW name/mark pairs per row."""
    rows = sorted(rows, key=lambda r: r[0].lower())
    if not rows:
        return "_(none)_\n"
    nrows = -(-len(rows) // PAIRS_PER_ROW)
    head = "| " + " | ".join(["Daft", "Ketch"] * PAIRS_PER_ROW) + " |"
    sep = "|" + "|".join(["---", ":-:"] * PAIRS_PER_ROW) + "|"
    lines = [head, sep]
    for r in range(nrows):
        cells = []
        for c in range(PAIRS_PER_ROW):
            i = c * nrows + r
            if i < len(rows):
                name, ok = rows[i]
                cells += [f"`{name}`", YES if ok else NO]
            else:
                cells += ["", ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _summary(rows) -> str:
    have = sum(1 for _, ok in rows if ok)
    return f"{have} of {len(rows)}"


def main() -> int:
    notes: list[str] = []
    ketch = _import("ketch")
    if ketch is None:
        notes.append("`import ketch` failed: everything counts as missing.")
    dataframe_mod = _import("ketch.dataframe")
    functions_mod = _import("ketch.functions")
    if functions_mod is None:
        notes.append("`ketch.functions` is not importable: all of `daft.functions` counts as missing.")

    DataFrame = getattr(ketch, "DataFrame", None) if ketch else None
    Expression = getattr(ketch, "Expression", None) if ketch else None
    Grouped = _grouped_class(ketch, dataframe_mod) if ketch else None
    if Grouped is None:
        notes.append(
            "No GroupedDataFrame class found in ketch.dataframe: all grouped methods count as missing."
        )

    # (key, title, rows)
    sections: list[tuple[str, str, list[tuple[str, bool]]]] = []

    def add(key, title, names, check):
        rows = []
        for n in dict.fromkeys(names):  # dedupe, keep order
            try:
                ok = bool(check(n))
            except Exception:
                ok = False
            rows.append((n, ok))
        sections.append((key, title, rows))

    add(
        "DataFrame",
        "`DataFrame` methods and properties",
        daft_api.DATAFRAME_METHODS,
        lambda n: _safe_hasattr(DataFrame, n),
    )
    add(
        "DataFrame operators",
        "`DataFrame` protocols (`df[...]`, `len(df)`, `for row in df`, ...)",
        daft_api.DATAFRAME_DUNDERS,
        lambda n: _has_own_dunder(DataFrame, n),
    )
    add(
        "GroupedDataFrame",
        "`GroupedDataFrame` methods (`df.groupby(...)`)",
        daft_api.GROUPED_METHODS,
        lambda n: _safe_hasattr(Grouped, n),
    )
    add(
        "Expression",
        "`Expression` methods",
        daft_api.EXPRESSION_METHODS,
        lambda n: _safe_hasattr(Expression, n),
    )
    add(
        "Expression operators",
        "`Expression` operators",
        daft_api.EXPRESSION_DUNDERS,
        lambda n: _has_own_dunder(Expression, n),
    )

    ns_rows_all: list[tuple[str, bool]] = []
    ns_summaries: list[str] = []
    ns_missing_whole: list[str] = []
    for ns, methods in daft_api.NAMESPACES.items():
        obj = _namespace_obj(ketch, ns) if ketch else None
        if obj is None:
            ns_missing_whole.append(f"`.{ns}`")
        rows = [(f"{ns}.{m}", _safe_hasattr(obj, m)) for m in methods]
        ns_rows_all += rows
        ns_summaries.append(f"`.{ns}` {_summary(rows)}")
    sections.append(
        (
            "Expression namespaces",
            f"`Expression` namespaces (Daft {daft_api.NAMESPACES_DAFT_VERSION}; deprecated in Daft 0.6.2, "
            "removed in 0.7)",
            ns_rows_all,
        )
    )

    add("daft.functions", "`daft.functions`", daft_api.FUNCTIONS, lambda n: _safe_hasattr(functions_mod, n))
    add("daft (top level)", "Top-level `daft` names", daft_api.TOP_LEVEL, lambda n: _safe_hasattr(ketch, n))

    out = []
    out.append(
        f"<!-- generated by scripts/api_coverage/coverage.py against Daft {daft_api.DAFT_VERSION} -->\n"
    )
    out.append("## Coverage summary\n")
    out.append("| Section | Ketch has |")
    out.append("|---|---|")
    for key, _title, rows in sections:
        out.append(f"| {key} | {_summary(rows)} |")
    out.append("")
    for key, title, rows in sections:
        out.append(f"### {title}\n")
        out.append(f"**{key}: {_summary(rows)}**")
        if key == "Expression namespaces":
            out.append("")
            out.append("Per namespace: " + "; ".join(ns_summaries) + ".")
            if ns_missing_whole:
                out.append("Namespaces Ketch lacks entirely: " + ", ".join(ns_missing_whole) + ".")
        out.append("")
        out.append(_table(rows))
    if notes:
        out.append("Notes: " + " ".join(notes) + "\n")

    # -- missing lists ----------------------------------------------------------------------------
    out.append("## Missing in Ketch, per section\n")
    for key, _title, rows in sections:
        missing = sorted((n for n, ok in rows if not ok), key=str.lower)
        out.append(f"- **{key}** ({len(missing)} missing): " + (", ".join(missing) if missing else "none"))
    out.append("")

    # -- Ketch-only names (public names Ketch has that Daft lacks), for reference ------------------
    def public(obj):
        try:
            return {n for n in dir(obj) if not n.startswith("_")}
        except Exception:
            return set()

    extra = [
        ("DataFrame", public(DataFrame) - set(daft_api.DATAFRAME_METHODS)),
        ("GroupedDataFrame", public(Grouped) - set(daft_api.GROUPED_METHODS) if Grouped else set()),
        (
            "Expression",
            public(Expression) - set(daft_api.EXPRESSION_METHODS) - set(daft_api.NAMESPACES)
            if Expression
            else set(),
        ),
    ]
    for ns, methods in daft_api.NAMESPACES.items():
        obj = _namespace_obj(ketch, ns) if ketch else None
        if obj is not None:
            extra.append((f".{ns}", public(obj) - set(methods)))
    if Expression is not None:  # Ketch namespaces Daft never had
        for name in sorted(public(Expression) - set(daft_api.EXPRESSION_METHODS) - set(daft_api.NAMESPACES)):
            try:
                obj = getattr(ketch.col("x"), name)
            except Exception:
                continue
            if not callable(obj) and type(obj).__module__.startswith("ketch"):
                extra.append((f".{name} (namespace, not in Daft)", public(obj)))
    if ketch is not None:  # exported names, not submodules / imports
        exported = set(getattr(ketch, "__all__", None) or public(ketch))
        exported = {
            n for n in exported if _safe_hasattr(ketch, n) and type(getattr(ketch, n)).__name__ != "module"
        }
        extra.append(("ketch (top level)", exported - set(daft_api.TOP_LEVEL)))
    out.append("## Ketch names that Daft does not have (for reference)\n")
    for key, names in extra:
        if names:
            out.append(f"- **{key}**: " + ", ".join(sorted(names, key=str.lower)))
    out.append("")

    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # never crash the README build
        print(f"coverage.py failed: {type(e).__name__}: {e}")
        sys.exit(0)
