"""Helpers of the Ray tests (imported by them; not a test module): run a query on both runners."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ketch
from ketch.runners import get_runner


def native_then_ray(build: Callable[[], Any]) -> tuple[Any, Any]:
    """``build()``'s DataFrame collected on the native runner, then on the Ray runner (already set)."""
    ray_runner = get_runner()
    ketch.set_runner_native()
    try:
        native = build().collect()
    finally:
        ketch.runners._runner = ray_runner
    return native, build().collect()
