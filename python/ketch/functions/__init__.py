"""Daft's ``daft.functions``: free functions over expressions. Each family lives in its own
module and is re-exported here; each function is the Expression method of the same name (one
implementation behind both spellings, ``count_distinct(col("x"))`` and ``col("x").count_distinct()``)."""

from ketch.expressions.image_hash import image_hash  # noqa: F401
from ketch.functions.aggregation import *  # noqa: F403
from ketch.functions.ai import *  # noqa: F403
from ketch.functions.audio import *  # noqa: F403
from ketch.functions.codecs import *  # noqa: F403
from ketch.functions.columnar import *  # noqa: F403
from ketch.functions.documents import *  # noqa: F403
from ketch.functions.general import *  # noqa: F403
from ketch.functions.json_text import *  # noqa: F403
from ketch.functions.math import *  # noqa: F403
from ketch.functions.media import *  # noqa: F403
from ketch.functions.multimodal import *  # noqa: F403
from ketch.functions.nested import *  # noqa: F403
from ketch.functions.partitioning import *  # noqa: F403
from ketch.functions.random_values import random_int  # noqa: F401
from ketch.functions.row_ids import monotonically_increasing_id  # noqa: F401
from ketch.functions.spark_datetime import *  # noqa: F403
from ketch.functions.strings import *  # noqa: F403
from ketch.functions.strings_extra import *  # noqa: F403
from ketch.functions.temporal import *  # noqa: F403
from ketch.functions.tokenize import tokenize_decode, tokenize_encode  # noqa: F401
from ketch.functions.video import *  # noqa: F403
from ketch.functions.window import dense_rank, first_value, lag, last_value, lead, over, rank, row_number  # noqa: F401
