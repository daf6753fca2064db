"""Calls cancelled while litellm is first being imported leave it whole for the next call.

The first model call of a process imports litellm (seconds). Cancelling an `acall` raises
KeyboardInterrupt in its thread; landing inside that import, it used to leave a half-built
`litellm` in sys.modules (the concurrent call failed with `module 'litellm' has no attribute
'completion'`) or the import system's module lock held (the concurrent calls stalled). Found by
examples/async_service/service.py, whose requests time out and are cancelled while others run.

Each case runs in a fresh interpreter, where litellm is not imported yet.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import scaled
from llm_server import LLMServer

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = """
import asyncio, sys
import sexp_tasks

session = sexp_tasks.Session(model="openai/test-model", quiet=True)
session.eval('(defatom greet (params (name string)) (instructions "Greet {{name}}"))')


def importing() -> bool:
    module = sys.modules.get("litellm")
    return module is not None and not hasattr(module, "completion")


async def main() -> None:
    calls = [asyncio.create_task(session.acall("greet", name=f"n{i}")) for i in range(3)]
    while not importing():  # cancel every call while the import runs: the importing one too
        await asyncio.sleep(0.001)
    for call in calls:
        call.cancel()
        try:
            await call
        except asyncio.CancelledError:
            print("cancelled")
    later = await asyncio.wait_for(session.acall("greet", name="later"), TIMEOUT)
    print(later.status, later.content)


asyncio.run(main())
"""


def test_cancelling_calls_during_litellm_s_import_leaves_it_whole_for_the_next(
    workspace: Path, server: LLMServer
) -> None:
    server.answer = lambda body: "hello"
    script = workspace / "cancel_during_import.py"
    script.write_text(PROGRAM.replace("TIMEOUT", repr(scaled(30))))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SEXP_API_BASE": server.base_url,
        "OPENAI_API_KEY": "sk-fake-import",
    }
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["cancelled", "cancelled", "cancelled", "COMPLETE hello"]
