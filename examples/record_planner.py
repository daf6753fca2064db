"""Re-record examples/planner/planner.cassette.jsonl, offline.

The scripted planner calls spawn_subtask twice — research, then an outline built on the research —
and then writes the plan from both; each subtask's request is answered by its own template's reply.
Run from the checkout root:  .venv/bin/python examples/record_planner.py
"""

from __future__ import annotations

import sys
from typing import Any

from recording import Scripted, answer, record, spawn, user_message

GOAL = "Move the team's CI from Jenkins to GitHub Actions within one quarter"

FACTS = """- 38 Jenkins jobs: 22 build-and-test pipelines, 9 deploy jobs, 7 nightly maintenance jobs.
- Deploy jobs use credentials stored in Jenkins; they must move to GitHub environments with
  required reviewers before any deploy runs on Actions.
- The integration suite needs Postgres and Redis; Actions service containers cover both.
- Builds average 24 minutes on Jenkins; hosted runners have 4 vCPUs, so the suite needs splitting
  to stay under 15 minutes.
- Self-hosted runners are needed for the 3 jobs that reach the private network.
- Assumption: the team's GitHub plan includes 50,000 Actions minutes a month; current usage would
  be about 31,000.
- The Jenkins server's licence renews on 30 June, which sets the deadline."""

OUTLINE = """1. Goal and deadline: what moves, and why 30 June.
2. Inventory: the 38 jobs grouped by kind, with an owner each.
3. Phases: pilot, build-and-test, deploys, nightly jobs, switch-off.
4. Secrets and environments: how credentials move and who approves deploys.
5. Runners and cost: hosted versus self-hosted, minutes budget.
6. Risks and fallbacks: what can go wrong and how to roll back.
7. Done when: the checks that let us switch Jenkins off."""

PLAN = """# Plan: CI from Jenkins to GitHub Actions (by 30 June)

## Phases
1. **Weeks 1–2, pilot** — port two build-and-test pipelines, with Postgres and Redis as service
   containers; split the integration suite so it runs under 15 minutes. *Owner: CI lead.*
2. **Weeks 3–6, build and test** — port the other 20 pipelines; run Jenkins and Actions side by
   side and compare results for a week. *Owner: each service's team, CI lead reviews.*
3. **Weeks 7–9, deploys** — move credentials to GitHub environments with required reviewers,
   set up self-hosted runners for the 3 private-network jobs, then port the 9 deploy jobs.
   *Owner: platform on-call.*
4. **Weeks 10–11, nightly jobs** — port the 7 maintenance jobs as scheduled workflows.
   *Owner: platform team.*
5. **Week 12, switch-off** — make Jenkins read-only, archive its history, cancel the licence.

## Risks
- Minutes budget: about 31,000 of 50,000 a month; alert at 40,000 and move the heaviest jobs to
  self-hosted runners if needed.
- Deploy credentials: no deploy runs on Actions until environments and reviewers are in place.
- Slower builds: keep Jenkins as the fallback until week 12.

## Done when
Every job has run green on Actions for two weeks, no pipeline is triggered on Jenkins, and the
licence is cancelled before 30 June."""


def route(body: dict[str, Any]) -> Scripted | str:
    """Research and outline for the subtasks; for the planner, the step after its last tool answer."""
    text = user_message(body)
    if text.startswith("List the facts"):
        return answer(FACTS, "general knowledge of Jenkins and GitHub Actions; assumptions marked")
    if text.startswith("Outline a project plan"):
        return answer(OUTLINE, "the goal and the facts")
    answered = sum(1 for m in body["messages"] if m["role"] == "tool")
    if answered == 0:
        topic = "Moving a team's 38 Jenkins jobs to GitHub Actions: jobs, secrets, runners, cost, deadline"
        return spawn("Collect the facts the migration plan depends on", ["research-topic"], {"topic": topic})
    if answered == 1:
        inputs = {"goal": GOAL, "facts": FACTS}
        return spawn("Outline the sections of the CI migration plan", ["outline-plan"], inputs)
    return answer(PLAN, "the research and the outline from the two subtasks")


if __name__ == "__main__":
    sys.exit(
        record(
            "examples/planner/planner.sexp",
            "examples/planner/tasks",
            "examples/planner/planner.cassette.jsonl",
            route,
        )
    )
