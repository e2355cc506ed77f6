"""Execution config as Daft takes it (issue 28)."""

from __future__ import annotations

import ketch


def test_a_config_field_given_as_none_is_left_unchanged() -> None:
    before = ketch.context.get_execution_config()
    with ketch.execution_config_ctx(default_morsel_size=None, num_preview_rows=None) as config:
        assert config.morsel_size_rows == before.morsel_size_rows
        assert ketch.from_pydict({"a": [1, 2]}).to_pydict() == {"a": [1, 2]}
    with ketch.execution_config_ctx(default_morsel_size=7) as config:
        assert config.morsel_size_rows == 7
    assert ketch.context.get_execution_config().morsel_size_rows == before.morsel_size_rows


def test_a_ketch_field_whose_none_is_a_value_takes_it() -> None:
    with ketch.execution_config_ctx(flight_shuffle_compression=None) as config:
        assert config.flight_shuffle_compression is None
    assert ketch.context.get_execution_config().flight_shuffle_compression == "lz4"
