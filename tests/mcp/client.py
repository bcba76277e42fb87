#!/usr/bin/env python3
"""Drives `memlog mcp` with the reference MCP client (the `mcp` package from
PyPI), for memlog's end-to-end tests and benchmark.

Reads one JSON request on stdin:

    {"memlog": "/path/to/memlog", "repo": "/path/to/repo",
     "calls": [{"tool": "memory_search", "args": {...}}, ...],
     "concurrent": false,
     "bench": {"tool": "memory_search", "args": {...}, "runs": 200}}

starts `memlog -C <repo> mcp` over stdio, initializes, lists the tools, makes
the calls (all in flight at once when "concurrent" is true), optionally
times a bench loop, and prints one JSON object on stdout:

    {"protocol": "...", "server": {...}, "instructions": "...",
     "tools": [...], "results": [...], "bench": {...}}

Each result is {"is_error", "structured", "text"} for a tool result, or
{"rpc_error": {"code", "message"}} when the server answered with a JSON-RPC
error. GIT_* and MEMLOG_* variables are passed on to the server (the client
otherwise gives it a minimal environment).
"""

import json
import os
import sys
import time

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client


def server_env():
    return {k: v for k, v in os.environ.items() if k.startswith(("GIT_", "MEMLOG_"))}


def tool_result(result):
    text = "".join(c.text for c in result.content if getattr(c, "type", None) == "text")
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": text,
    }


async def call(session, tool, args):
    try:
        result = await session.call_tool(tool, args)
    except MCPError as e:
        return {"rpc_error": {"code": e.code, "message": e.message}}
    return tool_result(result)


def server_pid():
    """The memlog process this client started (a child of this process)."""
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                for pid in f.read().split():
                    with open(f"/proc/{pid}/comm") as c:
                        if c.read().strip() == "memlog":
                            return int(pid)
        except OSError:
            continue
    return None


def rss_kib(pid):
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    k = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[k]


async def main():
    request = json.load(sys.stdin)
    params = StdioServerParameters(
        command=request["memlog"],
        args=["-C", request["repo"], "mcp"],
        env=server_env(),
    )
    out = {}
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["protocol"] = init.protocol_version
            out["server"] = init.server_info.model_dump(mode="json", exclude_none=True)
            out["instructions"] = init.instructions
            listed = await session.list_tools()
            out["tools"] = [
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools
            ]

            calls = request.get("calls", [])
            results = [None] * len(calls)
            if request.get("concurrent"):

                async def one(i, c):
                    results[i] = await call(session, c["tool"], c.get("args", {}))

                async with anyio.create_task_group() as tg:
                    for i, c in enumerate(calls):
                        tg.start_soon(one, i, c)
            else:
                for i, c in enumerate(calls):
                    results[i] = await call(session, c["tool"], c.get("args", {}))
            out["results"] = results

            bench = request.get("bench")
            if bench:
                pid = server_pid()
                # Idle: initialized, tools listed, nothing searched yet
                # beyond the calls above (none in a bench run).
                await anyio.sleep(0.5)
                idle_rss = rss_kib(pid)
                for _ in range(bench.get("warmup", 5)):
                    await session.call_tool(bench["tool"], bench.get("args", {}))
                times = []
                queries = bench.get("queries") or [bench.get("args", {}).get("query", "")]
                for i in range(bench.get("runs", 100)):
                    args = dict(bench.get("args", {}))
                    if "query" in args:
                        args["query"] = queries[i % len(queries)]
                    start = time.perf_counter()
                    result = await session.call_tool(bench["tool"], args)
                    times.append((time.perf_counter() - start) * 1000.0)
                    if result.is_error:
                        raise SystemExit(f"bench call failed: {tool_result(result)['text']}")
                times.sort()
                out["bench"] = {
                    "runs": len(times),
                    "p50_ms": percentile(times, 50),
                    "p95_ms": percentile(times, 95),
                    "max_ms": times[-1] if times else None,
                    "idle_rss_kib": idle_rss,
                    "rss_after_kib": rss_kib(pid),
                }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    anyio.run(main)
