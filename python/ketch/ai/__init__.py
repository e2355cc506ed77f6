"""AI providers behind ``ketch.functions.ai`` (Daft's ``daft.ai``): a provider turns a model name
and options into a picklable descriptor, which the engine instantiates once per UDF instance.

Providers: ``"transformers"`` / ``"sentence_transformers"`` run a model from a local directory
(no model hub is ever reached: ``model`` is a path), ``"openai"`` speaks the OpenAI-compatible HTTP
API (``base_url``, ``api_key`` from the options or ``OPENAI_API_KEY``)."""

from ketch.ai.provider import Provider, load_provider
from ketch.errors import RetryAfterError

__all__ = ["Provider", "RetryAfterError", "load_provider"]
