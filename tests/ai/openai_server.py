"""A real OpenAI-compatible HTTP server on loopback for the tests: ``/v1/embeddings`` embeds with
the tiny sentence-transformers model, ``/v1/responses`` and ``/v1/chat/completions`` generate with
the tiny causal LM (greedy), a JSON schema in the request gets a JSON object of that schema with
the generated text in its string fields. Faults on demand: 429 with Retry-After, slow replies, a
connection closed mid-batch, wrong embedding counts or sizes."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The key the test server requires (distinctive, so a test can look for it in printed text).
API_KEY = "sk-ketch-test-0123456789abcdef"


@dataclass
class Faults:
    rate_limited: int = 0  # the next N requests answer 429 with Retry-After: retry_after
    retry_after: str = "1"
    delay_s: float = 0.0  # every reply waits this long
    drop: int = 0  # the next N requests get their connection closed without a reply
    missing_embeddings: int = 0  # embeddings replies leave out this many vectors
    extra_dims: int = 0  # embeddings replies append this many values to every vector


@dataclass
class Log:
    requests: list[dict[str, Any]] = field(default_factory=list)  # path, time, authorization, status
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **entry: Any) -> None:
        with self.lock:
            self.requests.append(entry)


class Models:
    def __init__(self, embedder_dir: str, lm_dir: str) -> None:
        from sentence_transformers import SentenceTransformer
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.embedder = SentenceTransformer(embedder_dir, device="cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(lm_dir)
        self.lm = AutoModelForCausalLM.from_pretrained(lm_dir)
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self.lock:
            return self.embedder.encode(texts, convert_to_numpy=True).astype("float32").tolist()

    def generate(self, turns: list[dict[str, str]], max_new_tokens: int = 8) -> str:
        import torch

        with self.lock, torch.inference_mode():
            inputs = self.tokenizer.apply_chat_template(
                turns, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            out = self.lm.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        return self.tokenizer.decode(out[0][inputs["input_ids"].shape[1] :], skip_special_tokens=True)


def _from_schema(schema: dict[str, Any], text: str, defs: dict[str, Any]) -> Any:
    if "$ref" in schema:
        return _from_schema(defs[schema["$ref"].split("/")[-1]], text, defs)
    kind = schema.get("type")
    if "anyOf" in schema:
        return _from_schema(next(s for s in schema["anyOf"] if s.get("type") != "null"), text, defs)
    if kind == "object":
        return {k: _from_schema(v, text, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_from_schema(schema.get("items", {"type": "string"}), text, defs)]
    if kind == "integer":
        return len(text)
    if kind == "number":
        return len(text) / 2
    if kind == "boolean":
        return len(text) % 2 == 0
    if "enum" in schema:
        return schema["enum"][0]
    return text


def _image_size(url: str) -> str:
    """'WxH' of a data: URI image (Pillow), or the URL itself."""
    if not url.startswith("data:"):
        return url
    from PIL import Image

    data = base64.b64decode(url.split(",", 1)[1])
    with Image.open(io.BytesIO(data)) as image:
        return f"{image.width}x{image.height}"


def _part_text(part: dict[str, Any]) -> str:
    """A content part as the text the served LM reads: text as is, an image as [image WxH], a
    file as [file N bytes]."""
    kind = part.get("type", "")
    if kind in ("text", "input_text"):
        return part.get("text", "")
    if kind in ("image_url", "input_image"):
        url = part["image_url"]["url"] if isinstance(part["image_url"], dict) else part["image_url"]
        return f"[image {_image_size(url)}]"
    if kind in ("file", "input_file"):
        data = (part.get("file") or part)["file_data"]
        return f"[file {len(base64.b64decode(data.split(',', 1)[1]))} bytes]"
    return f"[{kind}]"


def _turn_text(content: Any) -> str:
    """One turn's content as text: a string, or its parts joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(_part_text(part) for part in content if isinstance(part, dict))


class Server:
    """``with Server(models) as s: s.base_url``; ``s.faults`` and ``s.log`` are live."""

    def __init__(self, models: Models, api_key: str | None = None) -> None:
        self.models = models
        self.api_key = api_key
        self.faults = Faults()
        self.log = Log()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(
                self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                responses = self.path.endswith("/responses")
                turns = body.get("messages") or (body.get("input") if responses else [])
                entry = {
                    "path": self.path,
                    "time": time.monotonic(),
                    "auth": self.headers.get("Authorization"),
                    # The content part types of the last (user) turn, e.g. ["input_text", "input_image"].
                    "parts": [
                        p.get("type")
                        for p in (
                            turns[-1]["content"]
                            if turns and isinstance(turns[-1].get("content"), list)
                            else []
                        )
                    ],  # fmt: skip
                }
                f = server.faults
                with server.log.lock:
                    if f.drop > 0:
                        f.drop -= 1
                        entry["status"] = "dropped"
                        drop = True
                    else:
                        drop = False
                    limited = not drop and f.rate_limited > 0
                    if limited:
                        f.rate_limited -= 1
                if drop:
                    server.log.add(**entry)
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if server.api_key is not None and entry["auth"] != f"Bearer {server.api_key}":
                    server.log.add(**entry, status=401)
                    return self._reply(
                        401, {"error": {"message": "bad key", "type": "invalid_request_error"}}
                    )
                if limited:
                    server.log.add(**entry, status=429)
                    return self._reply(
                        429,
                        {"error": {"message": "slow down", "type": "rate_limit_error"}},
                        {"Retry-After": f.retry_after},
                    )
                if f.delay_s:
                    time.sleep(f.delay_s)
                server.log.add(**entry, status=200)
                if self.path.endswith("/embeddings"):
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    vectors = server.models.embed(texts)
                    vectors = [v + [0.0] * f.extra_dims for v in vectors][
                        : max(0, len(vectors) - f.missing_embeddings)
                    ]
                    return self._reply(200, {
                        "object": "list", "model": body["model"],
                        "data": [{"object": "embedding", "index": i, "embedding": v}
                                 for i, v in enumerate(vectors)],
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    })  # fmt: skip
                if self.path.endswith("/responses"):
                    turns = [{"role": t["role"], "content": _turn_text(t["content"])} for t in body["input"]]
                    text = server.models.generate(turns)
                    fmt = (body.get("text") or {}).get("format") or {}
                    if fmt.get("type") == "json_schema":
                        schema = fmt["schema"]
                        text = json.dumps(_from_schema(schema, text, schema.get("$defs", {})))
                    return self._reply(200, {
                        "id": "resp_1", "object": "response", "created_at": 0, "model": body["model"],
                        "status": "completed", "parallel_tool_calls": False, "tool_choice": "auto",
                        "tools": [],
                        "output": [{"type": "message", "id": "msg_1", "status": "completed",
                                    "role": "assistant",
                                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                    })  # fmt: skip
                if self.path.endswith("/chat/completions"):
                    turns = [
                        {"role": t["role"], "content": _turn_text(t["content"])} for t in body["messages"]
                    ]
                    text = server.models.generate(turns)
                    fmt = body.get("response_format") or {}
                    if fmt.get("type") == "json_schema":
                        schema = fmt["json_schema"]["schema"]
                        text = json.dumps(_from_schema(schema, text, schema.get("$defs", {})))
                    return self._reply(200, {
                        "id": "chat_1", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}],
                    })  # fmt: skip
                return self._reply(404, {"error": {"message": f"no route {self.path}"}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, path_end: str, status: Any = 200) -> int:
        return sum(1 for r in self.log.requests if r["path"].endswith(path_end) and r.get("status") == status)
