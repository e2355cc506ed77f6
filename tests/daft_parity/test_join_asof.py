"""DataFrame.join_asof against a brute-force oracle and Daft 0.7.26's own output (issue 28; the
Daft values were printed by Daft 0.7.26 in benchmarks/.venv-peers on the same frames)."""

from __future__ import annotations

import random

import pytest

import ketch


def _oracle(left: dict, right: dict, strategy: str, by: bool) -> list[tuple]:
    """(entity, t, v) -> matched right value, by scanning every right row."""
    out = []
    for e, t, v in zip(left["entity"], left["t"], left["v"], strict=True):
        rows = [
            (rt, i)
            for i, (re_, rt) in enumerate(zip(right["entity"], right["t"], strict=True))
            if rt is not None and t is not None and (not by or (re_ is not None and re_ == e))
        ]
        back = [r for r in rows if r[0] <= t]
        fwd = [r for r in rows if r[0] >= t]
        # Among equal keys the first right row (input order) wins.
        b = min(back, key=lambda r: (-r[0], r[1])) if back else None
        f = min(fwd, key=lambda r: (r[0], r[1])) if fwd else None
        if strategy == "backward":
            pick = b
        elif strategy == "forward":
            pick = f
        else:
            pick = f if f is not None and (b is None or f[0] - t <= t - b[0]) else b
        out.append((e, t, v, None if pick is None else right["value"][pick[1]]))
    return sorted(out, key=repr)


@pytest.mark.parametrize("strategy", ["backward", "forward", "nearest"])
@pytest.mark.parametrize("by", [True, False], ids=["by", "no-by"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_a_brute_force_oracle(strategy: str, by: bool, seed: int) -> None:
    rng = random.Random(seed)

    def maybe(x):  # type: ignore[no-untyped-def]
        return None if rng.random() < 0.1 else x

    left = {
        "entity": [maybe(rng.choice("ABC")) for _ in range(60)],
        "t": [maybe(rng.randint(0, 40)) for _ in range(60)],
        "v": list(range(60)),
    }
    right = {
        "entity": [maybe(rng.choice("ABCD")) for _ in range(80)],
        "t": [maybe(rng.randint(0, 40)) for _ in range(80)],
        "value": [float(i) for i in range(80)],
    }
    out = ketch.from_pydict(left).join_asof(
        ketch.from_pydict(right), on="t", by="entity" if by else None, strategy=strategy
    )
    got = out.to_pydict()
    assert out.column_names == (
        ["entity", "t", "v", "value"] if by else ["entity", "t", "v", "right.entity", "value"]
    )
    rows = sorted(zip(got["entity"], got["t"], got["v"], got["value"], strict=True), key=repr)
    assert rows == _oracle(left, right, strategy, by)


def test_daft_s_example_and_names() -> None:
    left = ketch.from_pydict(
        {"entity": ["A", "A", "B", "C", "A"], "t": [10, 11, 10, 5, None], "v": [0, 1, 2, 3, 4]}
    )
    right = ketch.from_pydict(
        {
            "entity": ["A", "A", "A", "B", "B", None],
            "ts": [9, 10, 12, 9, 11, 10],
            "value": [1.0, 2.0, 3.0, 5.0, 6.0, 7.0],
            "v": [10, 20, 30, 40, 50, 60],
        }
    )
    out = left.join_asof(right, left_on="t", right_on="ts", by="entity", strategy="nearest").sort(
        ["entity", "t"]
    )
    assert out.to_pydict() == {  # Daft 0.7.26
        "entity": ["A", "A", "A", "B", "C"],
        "t": [10, 11, None, 10, 5],
        "v": [0, 1, 4, 2, 3],
        "ts": [10, 12, None, 11, None],
        "value": [2.0, 3.0, None, 6.0, None],
        "right.v": [20, 30, None, 50, None],
    }
    renamed = right.with_column_renamed("ts", "t")
    assert left.join_asof(renamed, on="t", by="entity", prefix="r_").column_names == [
        "entity",
        "t",
        "v",
        "value",
        "r_v",
    ]
    assert left.join_asof(renamed, on="t", by="entity", suffix="_r").column_names == [
        "entity",
        "t",
        "v",
        "value",
        "v_r",
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"on": "t", "left_on": "t"}, "either `on`"),
        ({"left_on": "t"}, "both `left_on`"),
        ({"on": "t", "by": "e", "left_by": "e"}, "either `by`"),
        ({"on": "t", "left_by": "e"}, "go together"),
        ({"on": "t", "left_by": ["e"], "right_by": ["e", "t"]}, "same length"),
        ({"on": "t", "strategy": "closest"}, "strategy"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs: dict, message: str) -> None:
    df = ketch.from_pydict({"e": ["a"], "t": [1]})
    with pytest.raises(ValueError, match=message):
        df.join_asof(df, **kwargs)
