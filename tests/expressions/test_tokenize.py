"""tokenize_encode / tokenize_decode (Daft's byte-pair encoding functions) against a reference.

The vocabulary is trained in the test (classic BPE training on a small mixed-script corpus: all
256 bytes, then the most frequent adjacent pair merged, again and again) and written as a tiktoken
file. The reference encoder is tiktoken's documented algorithm in pure Python (split the text with
the pattern; a piece that is a token is that token; otherwise merge the adjacent pair of lowest
rank, leftmost on ties, until none is a token), with the ``regex`` module for ``\\p{L}`` and
lookaheads; where the ``tiktoken`` package is installed it is checked too."""

from __future__ import annotations

import base64
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import regex  # noqa: E402

import ketch
from ketch import col
from ketch.errors import KetchError, KetchNotImplementedError, KetchTypeError, KetchValueError
from ketch.functions import tokenize_decode, tokenize_encode

# tiktoken's patterns (tiktoken_ext/openai_public.py; the forms the tiktoken-rs crate uses).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

CORPUS = (
    "The quick brown fox jumps over the lazy dog. It's the dog's day; they'll say they've won.\n"
    "Les élèves étudient l'économie à l'université. Über große Straßen fahren Autos.\n"
    "東京は日本の首都です。東京タワーは有名です。 Привет, как дела? Всё хорошо!\n"
    "def tokenize(text):\n    return [t for t in text.split()]  # 12345 67890\n"
    "emoji 😀😀 party 🎉🎉 and numbers 2024-12-02 3.14159 1000000\n"
) * 3


def train_ranks(corpus: str, num_merges: int) -> dict[bytes, int]:
    """Byte-level BPE training: all 256 bytes, then merges of the most frequent adjacent pair
    (ties: the first pair seen), each merged token ranked after the last."""
    ranks = {bytes([b]): b for b in range(256)}
    words = [[bytes([b]) for b in m.group().encode()] for m in regex.finditer(GPT2_PATTERN, corpus)]
    for _ in range(num_merges):
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for word in words:
            pairs.update(zip(word, word[1:], strict=False))
        if not pairs:
            break
        best = max(pairs, key=lambda p: pairs[p])  # max keeps the first of equal counts
        merged = best[0] + best[1]
        ranks[merged] = len(ranks)
        for i, word in enumerate(words):
            out, j = [], 0
            while j < len(word):
                if j + 1 < len(word) and (word[j], word[j + 1]) == best:
                    out.append(merged)
                    j += 2
                else:
                    out.append(word[j])
                    j += 1
            words[i] = out
    return ranks


def reference_encode(text: str, ranks: dict[bytes, int], pattern: str, specials: dict[str, int]) -> list[int]:
    """tiktoken's encode with every special token allowed (encode_ordinary when none)."""
    out: list[int] = []
    spans = regex.split("(" + "|".join(regex.escape(s) for s in specials) + ")", text) if specials else [text]
    for k, span in enumerate(spans):
        if k % 2 == 1:
            out.append(specials[span])
            continue
        for match in regex.finditer(pattern, span):
            piece = match.group().encode()
            if piece in ranks:
                out.append(ranks[piece])
                continue
            parts = [piece[i : i + 1] for i in range(len(piece))]
            while True:
                best = None
                for i in range(len(parts) - 1):
                    rank = ranks.get(parts[i] + parts[i + 1])
                    if rank is not None and (best is None or rank < best[0]):
                        best = (rank, i)
                if best is None:
                    break
                i = best[1]
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
            out.extend(ranks[p] for p in parts)
    return out


def write_tiktoken(path: Path, ranks: dict[bytes, int]) -> str:
    lines = [f"{base64.b64encode(token).decode()} {rank}" for token, rank in ranks.items()]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def random_text(rng: random.Random, length: int) -> str:
    alphabet = (
        list("abcdefghijklmnopqrstuvwxyz ABCDEFXYZ0123456789.,;:'!?-_()[]{}\"\n\t")
        + list("      the ")  # spaces weigh more: runs of whitespace exercise \s+(?!\S)
        + list("éèàüößÉçñ東京日本語ДаПриветё😀🎉")
        + ["'s", "'LL", "\r\n", "\u3000", "<|", "|>"]
    )
    return "".join(rng.choice(alphabet) for _ in range(length))


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[bytes, int], str, str]:
    """(ranks, path of a file named like no built-in set, path of one named cl100k_base.tiktoken)."""
    ranks = train_ranks(CORPUS, 300)
    folder = tmp_path_factory.mktemp("tokens")
    plain = write_tiktoken(folder / "tiny.tiktoken", ranks)
    named = write_tiktoken(folder / "cl100k_base.tiktoken", ranks)
    return ranks, plain, named


def texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    fixed = ["", " ", "hello world", "  leading and trailing  ", "a\n\n  b", "It's DON'T they'll", "12345678"]
    return fixed + [random_text(rng, rng.randint(0, 60)) for _ in range(count)]


def test_encode_matches_reference_bpe(vocab: Any) -> None:
    ranks, plain, _ = vocab
    data = texts(1, 200)
    df = ketch.from_pydict({"text": data})
    got = df.select(tokenize_encode(col("text"), plain, pattern=GPT2_PATTERN)).to_pydict()["text"]
    assert got == [reference_encode(t, ranks, GPT2_PATTERN, {}) for t in data]
    # Merges do happen: the trained vocabulary turns the corpus' words into few tokens.
    assert len(reference_encode("The quick brown fox", ranks, GPT2_PATTERN, {})) < len("The quick brown fox")


def test_file_named_after_a_set_gets_its_pattern_and_specials(vocab: Any) -> None:
    ranks, _, named = vocab
    data = texts(2, 200) + ["x<|endoftext|>y"]
    df = ketch.from_pydict({"text": data})
    out = df.select(
        col("text").tokenize_encode(named).alias("plain"),
        col("text").str.tokenize_encode(named, use_special_tokens=True).alias("special"),
    ).to_pydict()
    assert out["plain"] == [reference_encode(t, ranks, CL100K_PATTERN, {}) for t in data]
    specials = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}  # fmt: skip
    assert out["special"] == [reference_encode(t, ranks, CL100K_PATTERN, specials) for t in data]
    assert 100257 in out["special"][-1]


def test_round_trip_on_random_unicode(vocab: Any) -> None:
    _, plain, _ = vocab
    data = texts(3, 300) + [None]
    df = ketch.from_pydict({"text": data})
    with ketch.execution_config_ctx(morsel_size_rows=37):
        ids = df.select(tokenize_encode(col("text"), plain, pattern=GPT2_PATTERN).alias("ids"))
        back = ids.select(tokenize_decode(col("ids"), plain, pattern=GPT2_PATTERN).alias("text"))
        result = back.to_pydict()["text"]
    assert result == data


def test_llama3_special_tokens(vocab: Any) -> None:
    ranks, plain, _ = vocab
    top = max(ranks.values())
    text = "<|begin_of_text|>hello<|eot_id|> <|reserved_special_token_250|>"
    df = ketch.from_pydict({"text": [text]})
    encoded = df.select(
        tokenize_encode(col("text"), plain, pattern=GPT2_PATTERN, special_tokens="llama3").alias("on"),
        tokenize_encode(
            col("text"), plain, pattern=GPT2_PATTERN, special_tokens="llama3", use_special_tokens=False
        ).alias("off"),
    ).to_pydict()
    # Daft's llama3 list: begin_of_text, end_of_text, reserved 0-3, start/end_header_id, reserved 4,
    # eot_id, then reserved 5..255 (reserved_special_token_k at index k + 5 from k = 5 on).
    llama3 = {
        "<|begin_of_text|>": top + 1,
        "<|eot_id|>": top + 10,
        "<|reserved_special_token_250|>": top + 256,
    }
    assert encoded["on"][0] == reference_encode(text, ranks, GPT2_PATTERN, llama3)
    assert encoded["off"][0] == reference_encode(text, ranks, GPT2_PATTERN, {})
    decoded = ketch.from_pydict({"ids": encoded["on"]}).select(
        tokenize_decode(col("ids"), plain, pattern=GPT2_PATTERN, special_tokens="llama3")
    )
    assert decoded.to_pydict()["ids"] == [text]


def test_matches_tiktoken_package(vocab: Any) -> None:
    import tiktoken

    ranks, _, named = vocab
    specials = {"<|endoftext|>": 100257, "<|endofprompt|>": 100276}
    encoding = tiktoken.Encoding(
        "tiny", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=specials
    )
    data = texts(4, 300)
    df = ketch.from_pydict({"text": data})
    got = df.select(col("text").tokenize_encode(named)).to_pydict()["text"]
    assert got == [encoding.encode_ordinary(t) for t in data]


def test_long_pieces_use_the_same_merges(vocab: Any) -> None:
    ranks, plain, _ = vocab
    # One piece of 3,000 letters (past the linear-merge limit: the heap merge runs).
    rng = random.Random(5)
    data = ["".join(rng.choice("thequickbrownfox") for _ in range(3000)), "é" * 400 + "x"]
    got = ketch.from_pydict({"t": data}).select(tokenize_encode(col("t"), plain, pattern=GPT2_PATTERN))
    assert got.to_pydict()["t"] == [reference_encode(t, ranks, GPT2_PATTERN, {}) for t in data]


def test_types_and_nulls(vocab: Any) -> None:
    _, plain, _ = vocab
    df = ketch.from_pydict({"text": ["ab", None]})
    out = df.select(tokenize_encode(col("text"), plain, pattern=GPT2_PATTERN).alias("ids"))
    assert str(out.schema()["ids"].dtype) in (
        "List[UInt32]",
        "list<item: uint32>",
        "large_list<item: uint32>",
    )
    table = out.to_arrow()
    assert str(table.schema.field("ids").type) == "large_list<item: uint32>"
    assert table.column("ids").to_pylist()[1] is None
    # Decode takes any integer list type.
    ids = ketch.from_pydict({"ids": [[104, 105], None, []]}).select(
        col("ids").cast(ketch.DataType.list(ketch.DataType.int16())).alias("ids")
    )
    decoded = ids.select(tokenize_decode(col("ids"), plain, pattern=GPT2_PATTERN)).to_arrow()
    assert str(decoded.schema.field("ids").type) == "large_string"
    assert decoded.column("ids").to_pylist() == ["hi", None, ""]
    fixed = ketch.from_arrow(pa.table({"ids": pa.array([[104, 105], None], pa.list_(pa.uint8(), 2))}))
    decoded = fixed.select(tokenize_decode(col("ids"), plain, pattern=GPT2_PATTERN)).to_pydict()
    assert decoded["ids"] == ["hi", None]


def test_errors_name_what_is_wrong(vocab: Any, tmp_path: Path) -> None:
    _, plain, _ = vocab
    df = ketch.from_pydict({"text": ["hello"], "n": [1], "ids": [[104, 99999]], "neg": [[-3]]})
    with pytest.raises(KetchNotImplementedError, match="cl100k_base.*path or URL"):
        df.select(tokenize_encode(col("text"), "cl100k_base")).collect()
    with pytest.raises(KetchValueError, match="pattern must be provided"):
        df.select(tokenize_encode(col("text"), plain)).collect()
    with pytest.raises(KetchValueError, match="special token set 'gpt5' is not supported"):
        df.select(tokenize_encode(col("text"), plain, pattern="\\S+", special_tokens="gpt5")).collect()
    with pytest.raises(KetchValueError, match="invalid tokenizer pattern"):
        df.select(tokenize_encode(col("text"), plain, pattern="(unclosed")).collect()
    with pytest.raises(KetchTypeError, match="tokenize_encode.*col\\(n\\)"):
        df.select(tokenize_encode(col("n"), plain, pattern="\\S+")).collect()
    with pytest.raises(KetchTypeError, match="tokenize_decode expects a list of integer"):
        df.select(tokenize_decode(col("text"), plain, pattern="\\S+")).collect()
    with pytest.raises(KetchValueError, match="token id 99999 is not in the vocabulary.*source row 0"):
        df.select(tokenize_decode(col("ids"), plain, pattern="\\S+")).collect()
    with pytest.raises(KetchValueError, match="token id -3 at source row 0 is out of range"):
        df.select(tokenize_decode(col("neg"), plain, pattern="\\S+")).collect()
    with pytest.raises(KetchValueError, match="not valid UTF-8"):  # half of "é" (0xC3 0xA9)
        ketch.from_pydict({"ids": [[0xC3]]}).select(
            tokenize_decode(col("ids"), plain, pattern="\\S+")
        ).collect()
    missing = str(tmp_path / "missing.tiktoken")
    with pytest.raises(KetchError, match="cannot load token file.*missing.tiktoken"):
        df.select(tokenize_encode(col("text"), missing, pattern="\\S+")).collect()
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("YQ== 0\nnot-base64! 1\n")
    with pytest.raises(KetchValueError, match="invalid base64 .* line 2"):
        df.select(tokenize_encode(col("text"), str(bad), pattern="\\S+")).collect()


def test_s3_token_file_is_read_once_per_query(vocab: Any, moto_s3: Any) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parent.parent / "io"))
    from s3_request_log import S3RequestLog

    from ketch.io import IOConfig, S3Config

    ranks, plain, _ = vocab
    config, client = moto_s3
    client.create_bucket(Bucket="tokens")
    client.put_object(Bucket="tokens", Key="tiny.tiktoken", Body=Path(plain).read_bytes())
    data = texts(6, 200)
    with S3RequestLog(config.s3.endpoint_url) as log:
        logged = IOConfig(
            s3=S3Config(
                region_name="us-east-1", endpoint_url=log.endpoint, key_id="testing", access_key="testing"
            )
        )
        expr = tokenize_encode(
            col("text"), "s3://tokens/tiny.tiktoken", io_config=logged, pattern=GPT2_PATTERN
        )
        with ketch.execution_config_ctx(morsel_size_rows=10):  # 21 morsels
            for query in range(2):
                got = ketch.from_pydict({"text": data}).select(expr).to_pydict()["text"]
                assert got == [reference_encode(t, ranks, GPT2_PATTERN, {}) for t in data]
                gets = [r for r in log.requests if r.method == "GET" and r.path.endswith("tiny.tiktoken")]
                assert len(gets) == query + 1  # once per query, not once per morsel


def test_plan_round_trips_and_explain_hides_keys(vocab: Any) -> None:
    from ketch import _core
    from ketch.context import get_execution_config
    from ketch.io import IOConfig, S3Config

    _, plain, _ = vocab
    secret = IOConfig(
        s3=S3Config(region_name="us-east-1", key_id="AKIDTOKENIZE", access_key="SECRETTOKENIZE")
    )
    df = ketch.from_pydict({"text": ["hello world", None]}).select(
        tokenize_encode(col("text"), plain, pattern=GPT2_PATTERN, io_config=secret).alias("ids"),
        col("text").tokenize_encode(plain, pattern=GPT2_PATTERN, special_tokens="llama3").alias("sp"),
    )
    config = get_execution_config().to_native()
    optimized = df._plan.optimize(config=config)
    copy = _core.PyPlan.from_bytes(optimized.to_bytes())
    assert repr(copy) == repr(optimized)
    assert copy.schema() == optimized.schema()
    shown = repr(optimized)
    assert "tokenize_encode" in shown
    assert "SECRETTOKENIZE" not in shown and "AKIDTOKENIZE" not in shown


def test_unicode_classes_match_the_reference(vocab: Any) -> None:
    """Every 11th code point between letters, digits and runs of spaces: PCRE2's \\p{L}, \\p{N},
    \\s agree with the regex module's (and tiktoken's) except U+180E MONGOLIAN VOWEL SEPARATOR,
    which PCRE2 still counts as horizontal space (\\s) and Unicode no longer does since 6.3."""
    ranks, _, named = vocab
    points = [c for c in range(0x09, 0x30000, 11) if not 0xD800 <= c < 0xE000 and c != 0x180E]
    data = [f"a{chr(c)}  {chr(c)}b1{chr(c)}" for c in points]
    got = ketch.from_pydict({"t": data}).select(col("t").tokenize_encode(named)).to_pydict()["t"]
    mismatched = [hex(c) for c, text, ids in zip(points, data, got, strict=True)
                  if ids != reference_encode(text, ranks, CL100K_PATTERN, {})]  # fmt: skip
    assert mismatched == []


def test_http_token_file(vocab: Any) -> None:
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

    ranks, _, named = vocab
    handler = functools.partial(Quiet, directory=str(Path(named).parent))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/cl100k_base.tiktoken"
        data = texts(8, 50)
        got = ketch.from_pydict({"t": data}).select(col("t").tokenize_encode(url)).to_pydict()["t"]
        assert got == [reference_encode(t, ranks, CL100K_PATTERN, {}) for t in data]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_damaged_token_files_fail_cleanly(vocab: Any, tmp_path: Path) -> None:
    """Random damage to a good file (bytes flipped, lines cut, duplicated or dropped) either still
    encodes or raises a KetchError; never a crash."""
    _, plain, _ = vocab
    good = Path(plain).read_bytes()
    rng = random.Random(11)
    df = ketch.from_pydict({"text": ["hello world, it's 2024"]})
    outcomes = Counter()
    for trial in range(40):
        data = bytearray(good)
        for _ in range(rng.randint(1, 5)):
            kind = rng.randrange(3)
            at = rng.randrange(len(data))
            if kind == 0:
                data[at] = rng.randrange(256)
            elif kind == 1:
                del data[at : at + rng.randint(1, 40)]
            else:
                data[at:at] = data[max(0, at - 30) : at]
        path = tmp_path / f"damaged{trial}.tiktoken"
        path.write_bytes(bytes(data))
        try:
            df.select(tokenize_encode(col("text"), str(path), pattern=GPT2_PATTERN)).collect()
            outcomes["ok"] += 1
        except KetchError as error:
            # The file's own faults name it; a byte left without a token names the vocabulary.
            assert "token file" in str(error) or "vocabulary" in str(error), str(error)
            outcomes["error"] += 1
    assert outcomes["error"] > 0
