"""A small stdio server, written without mcpgen, with the 2025-11-25 revision's core tasks
(mcpgen's own Server offers none): it offers task-augmented `tools/call` and lists

* `slow` (`taskSupport: "required"`): done 0.3 s after it starts, reporting progress
  under the call's progress token on each `tasks/get` meanwhile;
* `boom` (required): fails; `tasks/result` answers the JSON-RPC error -32603 "boom";
* `ask` (required): input_required at once; `tasks/result` sends `elicitation/create`
  (tagged with the task) and completes with the answer;
* `maybe` (`"optional"`) and `plain` (no `execution`): ordinary unless task-augmented
  (`plain` refuses a task with -32601, as `slow` refuses an ordinary call).

Run: `python tests/client/legacy_task_server.py`.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

OBJECT = {"type": "object", "properties": {}}
RELATED = "io.modelcontextprotocol/related-task"
TOOLS: list[dict[str, Any]] = [
    {"name": "slow", "inputSchema": OBJECT, "execution": {"taskSupport": "required"}},
    {"name": "boom", "inputSchema": OBJECT, "execution": {"taskSupport": "required"}},
    {"name": "ask", "inputSchema": OBJECT, "execution": {"taskSupport": "required"}},
    {"name": "maybe", "inputSchema": OBJECT, "execution": {"taskSupport": "optional"}},
    {"name": "plain", "inputSchema": OBJECT},
]
tasks: dict[str, dict[str, Any]] = {}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def receive() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def public(task: dict[str, Any]) -> dict[str, Any]:
    """The task as the wire shows it, its status brought up to date."""
    due = 0.1 if task["tool"] == "boom" else 0.3
    running = task["status"] == "working" and task["tool"] != "ask"
    if running and time.monotonic() - task["started"] > due:
        task["status"] = "failed" if task["tool"] == "boom" else "completed"
    keys = ("taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval")
    return {key: task[key] for key in keys}


def create(name: str, params: dict[str, Any]) -> dict[str, Any]:
    task_id = f"task-{len(tasks) + 1}"
    now = "2026-01-01T00:00:00Z"
    tasks[task_id] = {
        "taskId": task_id,
        "status": "input_required" if name == "ask" else "working",
        "createdAt": now,
        "lastUpdatedAt": now,
        "ttl": params["task"].get("ttl"),
        "pollInterval": 50,
        "tool": name,
        "started": time.monotonic(),
        "token": (params.get("_meta") or {}).get("progressToken"),
    }
    return {"task": public(tasks[task_id])}


def call(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name", "")
    support = next((t.get("execution", {}) for t in TOOLS if t["name"] == name), None)
    if support is None:
        raise LookupError(-32602, f"unknown tool {name}")
    wanted = support.get("taskSupport", "forbidden")
    if "task" in params:
        if wanted == "forbidden":
            raise LookupError(-32601, f"{name} does not run as a task")
        return create(name, params)
    if wanted == "required":
        raise LookupError(-32601, f"{name} requires task augmentation")
    return text(f"{name} ran")


def result(task: dict[str, Any]) -> dict[str, Any]:
    """`tasks/result`: the task's outcome once it ends (the `ask` task asks first)."""
    while public(task)["status"] == "working":
        time.sleep(0.02)
    if task["status"] == "failed":
        raise LookupError(-32603, "boom")
    if task["tool"] == "ask":
        meta = {RELATED: {"taskId": task["taskId"]}}
        question = {"message": "Who?", "requestedSchema": OBJECT, "_meta": meta}
        send({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create", "params": question})
        answer = receive()
        while answer is not None and answer.get("id") != "q1":
            answer = receive()
        who = ((answer or {}).get("result") or {}).get("content", {}).get("who", "nobody")
        task["status"] = "completed"
        return {**text(f"hello {who}"), "_meta": {RELATED: {"taskId": task["taskId"]}}}
    return {**text(f"{task['tool']} done"), "_meta": {RELATED: {"taskId": task["taskId"]}}}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        capabilities: dict[str, Any] = {
            "tools": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        }
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "serverInfo": {"name": "legacy-tasks", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call(params)
    if method == "ping":
        return {}
    task = tasks.get(params.get("taskId", ""))
    if method.startswith("tasks/") and task is None:
        raise LookupError(-32602, "unknown task")
    if method == "tasks/get" and task is not None:
        shown = public(task)
        if shown["status"] == "working" and task["token"] is not None:
            progress = {"progressToken": task["token"], "progress": 1, "total": 2}
            send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
        return shown
    if method == "tasks/result" and task is not None:
        return result(task)
    if method == "tasks/cancel" and task is not None:
        task["status"] = "cancelled"
        return public(task)
    raise LookupError(-32601, f"method not found: {method}")


def main() -> None:
    while (message := receive()) is not None:
        if "id" not in message or "method" not in message:
            continue
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = answer(message["method"], message.get("params") or {})
        except LookupError as exc:
            code, said = exc.args
            reply["error"] = {"code": code, "message": said}
        send(reply)


if __name__ == "__main__":
    main()
