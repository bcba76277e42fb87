#!/usr/bin/env python3
"""A scripted model API on 127.0.0.1 for driving real agent CLIs offline.

Usage: scripted_api.py SCRIPT.json REQUEST_LOG_DIR [--idle SECONDS]

Prints the port it listens on (one line), then answers the agent's requests
from the script, in order, until it has been idle for --idle seconds
(default 60) or its parent goes away. Python standard library only.

The script (JSON):

    {
      "protocol": "anthropic",          # Messages API, or "responses"
      "turns": [
        {"when_contains": "optional substring of the latest user message",
         "text": "optional text block",
         "tool_use": {"name": "Read", "input": {"file_path": "/x"}}},
        ...
      ],
      "side_text": "answer to side requests (titles, summaries)"
    }

With "responses" (OpenAI's Responses API, as Codex CLI speaks it at
`POST …/responses`, always streamed), text becomes an assistant message and
`tool_use` a `function_call` (its `id` the `call_id`); a
`{"type": "custom_tool_use", "name", "input": "<text>"}` content block is a
freeform tool's `custom_tool_call` (Codex's `apply_patch`).

A turn may also give `content`: a list of Messages API content blocks
(`{"type": "text", "text": ...}`, `{"type": "tool_use", "name", "input"}`)
instead of `text` / `tool_use`. The stop reason is `tool_use` when a turn
calls a tool, else `end_turn`.

Which turn answers a request: only requests of the agent's main loop (those
that offer `tools`) consume turns; the first turn not yet used whose
`when_contains` (if any) occurs in the latest user message answers it.
Side requests (no `tools`), and main-loop requests when no turn matches,
get `side_text` and consume nothing.

Every request is logged to REQUEST_LOG_DIR/NNNN.json as
{"method", "path", "body", "answered_by"} (answered_by: the turn's index, or
null for a side answer), so that tests can read what reached the model.
"""

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    """The scripted turns and the request log, shared by the handlers."""

    def __init__(self, path, log_dir):
        with open(path, encoding="utf-8") as f:
            script = json.load(f)
        self.protocol = script.get("protocol", "anthropic")
        if self.protocol not in ("anthropic", "responses", "gemini"):
            raise SystemExit(f"scripted_api: unknown protocol {self.protocol!r} in {path}")
        self.turns = script.get("turns", [])
        self.side_text = script.get("side_text", "OK.")
        self.used = [False] * len(self.turns)
        self.log_dir = log_dir
        self.count = 0
        self.lock = threading.Lock()
        self.last_activity = time.monotonic()

    def touch(self):
        self.last_activity = time.monotonic()

    def pick(self, body):
        """The index of the turn answering `body`, marked used, or None."""
        if not isinstance(body, dict) or not body.get("tools"):
            return None
        if self.protocol == "gemini" and body.get("generationConfig", {}).get("responseMimeType"):
            # Gemini CLI's side requests (routing, summaries) ask for JSON.
            return None
        if self.protocol == "responses":
            latest = latest_input_text(body.get("input", []))
        elif self.protocol == "gemini":
            latest = json.dumps((body.get("contents") or [{}])[-1], ensure_ascii=False)
        else:
            latest = latest_user_text(body.get("messages", []))
        with self.lock:
            for i, turn in enumerate(self.turns):
                if self.used[i]:
                    continue
                needle = turn.get("when_contains")
                if needle is None or needle in latest:
                    self.used[i] = True
                    return i
        return None

    def log(self, method, path, body, answered_by):
        with self.lock:
            self.count += 1
            name = os.path.join(self.log_dir, f"{self.count:04}.json")
        record = {"method": method, "path": path, "body": body, "answered_by": answered_by}
        with open(name + ".part", "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(name + ".part", name)

    def content(self, index):
        """The content blocks of turn `index` (None: the side answer)."""
        if index is None:
            return [{"type": "text", "text": self.side_text}]
        turn = self.turns[index]
        if "content" in turn:
            blocks = turn["content"]
        else:
            blocks = []
            if "text" in turn:
                blocks.append({"type": "text", "text": turn["text"]})
            if "tool_use" in turn:
                blocks.append(dict(turn["tool_use"], type="tool_use"))
        out = []
        for n, block in enumerate(blocks):
            block = dict(block)
            if block.get("type") in ("tool_use", "custom_tool_use"):
                block.setdefault("id", f"toolu_scripted_{index:02}_{n:02}")
                block.setdefault("input", {} if block["type"] == "tool_use" else "")
            out.append(block)
        return out


def latest_user_text(messages):
    """All text of the last user message (tool results included)."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return json.dumps(content, ensure_ascii=False)
    return ""


def latest_input_text(items):
    """The last user message or tool output of a Responses API input."""
    if isinstance(items, str):
        return items
    for item in reversed(items):
        if item.get("type") in ("function_call_output", "custom_tool_call_output") or item.get("role") == "user":
            return json.dumps(item, ensure_ascii=False)
    return ""


def responses_events(blocks, model):
    """The Responses API SSE events answering with `blocks` (text becomes an
    assistant message, tool_use a function_call)."""
    rid = f"resp_scripted_{time.monotonic_ns()}"
    head = {"id": rid, "object": "response", "model": model, "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": head}
    output = []
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            item = {"type": "message", "id": f"msg_{rid}_{i}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}]}
            yield "response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                 "item": dict(item, content=[], status="in_progress")}
            yield "response.output_text.delta", {"type": "response.output_text.delta", "output_index": i,
                                                 "item_id": item["id"], "content_index": 0, "delta": block["text"]}
        elif block["type"] == "tool_use":
            item = {"type": "function_call", "id": f"fc_{rid}_{i}", "call_id": block["id"], "name": block["name"],
                    "arguments": json.dumps(block["input"]), "status": "completed"}
            if "namespace" in block:  # a namespaced tool (Codex's multi_agent_v1.spawn_agent)
                item["namespace"] = block["namespace"]
            yield "response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                 "item": dict(item, arguments="", status="in_progress")}
        elif block["type"] == "custom_tool_use":
            item = {"type": "custom_tool_call", "id": f"ctc_{rid}_{i}", "call_id": block["id"], "name": block["name"],
                    "input": block["input"], "status": "completed"}
            yield "response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                 "item": dict(item, input="", status="in_progress")}
        else:
            continue
        output.append(item)
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": item}
    done = dict(head, status="completed", output=output,
                usage={"input_tokens": 10, "output_tokens": 10, "total_tokens": 20,
                       "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens_details": {"reasoning_tokens": 0}})
    yield "response.completed", {"type": "response.completed", "response": done}


def gemini_chunks(blocks):
    """The streamGenerateContent chunks answering with `blocks`."""
    parts = []
    for block in blocks:
        if block["type"] == "text":
            parts.append({"text": block["text"]})
        elif block["type"] == "tool_use":
            parts.append({"functionCall": {"name": block["name"], "args": block["input"], "id": block["id"]}})
    yield None, {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
        "modelVersion": "scripted",
    }


def anthropic_message(blocks, model):
    stop = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": f"msg_scripted_{time.monotonic_ns()}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def anthropic_events(message):
    """The SSE events streaming `message`."""
    head = dict(message, content=[], stop_reason=None)
    yield "message_start", {"type": "message_start", "message": head}
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        elif block["type"] == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            continue
        yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": 10},
    }
    yield "message_stop", {"type": "message_stop"}


def handler_for(script):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet: the request log is the record
            pass

        def read_body(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return raw.decode("utf-8", "replace")

        def send_json(self, status, value):
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self):
            script.touch()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self):
            script.touch()
            script.log("GET", self.path, None, None)
            self.send_json(200, {"data": [], "has_more": False})

        def do_POST(self):
            script.touch()
            body = self.read_body()
            path = self.path.split("?", 1)[0]
            if path.endswith("/count_tokens"):
                script.log("POST", self.path, body, None)
                self.send_json(200, {"input_tokens": 100})
                return
            if script.protocol == "responses" and path.endswith("/responses"):
                index = script.pick(body)
                script.log("POST", self.path, body, index)
                model = body.get("model", "scripted") if isinstance(body, dict) else "scripted"
                self.stream(responses_events(script.content(index), model))
                return
            if script.protocol == "gemini" and (":streamGenerateContent" in path or ":generateContent" in path):
                index = script.pick(body)
                script.log("POST", self.path, body, index)
                chunks = gemini_chunks(script.content(index))
                if ":streamGenerateContent" in path:
                    self.stream(chunks)
                else:
                    self.send_json(200, next(chunks)[1])
                return
            if script.protocol == "gemini" and ":countTokens" in path:
                script.log("POST", self.path, body, None)
                self.send_json(200, {"totalTokens": 100})
                return
            if not path.endswith("/v1/messages"):
                script.log("POST", self.path, body, None)
                self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
                return
            index = script.pick(body)
            script.log("POST", self.path, body, index)
            model = body.get("model", "scripted") if isinstance(body, dict) else "scripted"
            message = anthropic_message(script.content(index), model)
            if isinstance(body, dict) and body.get("stream"):
                self.stream(anthropic_events(message))
            else:
                self.send_json(200, message)

        def stream(self, events):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for name, data in events:
                head = f"event: {name}\n" if name else ""
                chunk = f"{head}data: {json.dumps(data)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    script_path, log_dir = argv[1], argv[2]
    idle = 60.0
    if "--idle" in argv:
        idle = float(argv[argv.index("--idle") + 1])
    os.makedirs(log_dir, exist_ok=True)
    script = Script(script_path, log_dir)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(script))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    parent = os.getppid()

    def watchdog():
        # Never outlive the test: stop when idle too long or orphaned.
        while True:
            time.sleep(0.5)
            if time.monotonic() - script.last_activity > idle or os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv)
