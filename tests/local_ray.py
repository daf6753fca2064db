"""One local Ray for a test file: what the Ray test files share (test_batch_ray, test_otel_ray,
test_batch_score_ray, test_batch_row_output).

Ray is imported here only inside `ray_for_tests`, after the file asking for it has skipped itself
when the Ray extra is missing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def ray_for_tests(variables: dict[str, str] | None = None, keep_credentials: bool = True) -> Iterator[str]:
    """A local Ray of 2 CPUs, started by the product's start_local_ray, for as long as the block
    runs; its GCS address (for the `sexp` processes that join it). Its processes get this checkout
    and tests/ on their path, token authentication off (the `sexp` processes joining it have homes
    of their own, without ~/.ray's token) and `variables` in their environment (a fake provider
    key, an OTLP endpoint...), all put back afterwards. keep_credentials=False keeps this
    process's keys out of Ray's processes, as a cluster whose machines lack them."""
    import ray
    from ray._private.authentication_test_utils import reset_auth_token_state

    from sexp_tasks.batching.ray_executor import start_local_ray

    path = [str(ROOT), str(ROOT / "tests"), *filter(None, [os.environ.get("PYTHONPATH")])]
    wanted = {
        "PYTHONPATH": os.pathsep.join(path),
        "RAY_AUTH_MODE": "disabled",
        **(variables or {}),
    }
    saved = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    # Ray (2.60) keeps its authentication state from this process's first local Ray: a second one
    # (an earlier test file's) started without resetting it had its raylet's calls to this driver
    # refused ("Missing authorization header"), and every actor died as it was created. Ray's own
    # tests reset it this way between clusters.
    reset_auth_token_state()
    start_local_ray(2, keep_credentials=keep_credentials)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
