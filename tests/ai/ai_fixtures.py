"""Fixtures of the AI tests, imported by the test modules (not a conftest: a second ``conftest``
module would shadow the suite's own in ``sys.modules``). Tiny local models (built once per session
from configs with seeded random weights: no hub) and a real OpenAI-compatible server on loopback
that serves the same models."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "ai"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiny_models  # noqa: E402
from openai_server import API_KEY, Models, Server  # noqa: E402

__all__ = ["API_KEY", "models", "served_models", "server"]


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tiny_models")
    return {
        "embedder": str(tiny_models.build_text_embedder(root)),
        "nli": str(tiny_models.build_nli_classifier(root)),
        "lm": str(tiny_models.build_chat_lm(root)),
        "clip": str(tiny_models.build_clip(root)),
    }


@pytest.fixture(scope="session")
def served_models(models) -> Models:
    return Models(models["embedder"], models["lm"])


@pytest.fixture
def server(served_models) -> Iterator[Server]:
    """A fresh server (clean faults and log) that requires API_KEY."""
    with Server(served_models, api_key=API_KEY) as s:
        yield s
