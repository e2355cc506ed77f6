"""``ketch.functions``: Daft's free functions, each the Expression method of the same name."""

from ketch.functions.nested import *  # noqa: F403
from ketch.functions.temporal import *  # noqa: F403
