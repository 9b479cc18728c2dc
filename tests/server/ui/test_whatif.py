"""The dashboard's "what if I submit this?" form in a real headless Chromium:
a pasted Job is answered (admitted now and its flavor; or its reason,
positions and "never" behind a held queue) from the served prediction,
nothing is submitted, what was typed survives the live re-renders, the form
is reached and used by keyboard, works offline with no console errors, and
a batch user's form offers only their namespace."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.server.conftest import Served, needs_kubectl
from tests.server.ui.browser import CHROMIUM, Browser
from tests.server.ui.conftest import admin_login
from tests.server.ui.test_dashboard import _JOB, _QUEUE, _job, _origin, _queue

pytestmark = [
    needs_kubectl,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="Debian's chromium is not installed (apt-get install chromium): no browser test",
    ),
]


def _manifest(name: str, ns: str, cq: str) -> str:
    return (
        _JOB.replace("NAME", name).replace("NS", ns).replace("CQ", cq).replace("PRIO", "research")
    )


async def _ask(b: Browser, ns: str, text: str) -> None:
    """Type into the form as a user would and press Predict."""
    await b.js(
        "(() => { const f = document.getElementById('whatif-form');"
        f" f.elements.ns.value = {json.dumps(ns)};"
        f" f.elements.manifest.value = {json.dumps(text)};"
        " document.getElementById('whatif-answer').replaceChildren(); })()"
    )
    await b.js("document.querySelector('#whatif-form button[type=submit]').click()")
    await b.wait_for(
        "document.querySelector('#whatif-answer table, #whatif-answer [role=alert]')", 30
    )


def _answer() -> str:
    return "document.getElementById('whatif-answer').innerText"


def test_whatif_form_answers_from_the_served_prediction(srv: Served, artifacts: Path) -> None:
    open_queue = "whatif-open"
    srv.ok("apply", "-f", "-", input=_open_queue(open_queue, "team-b"))
    _queue(srv, "whatif-held", "team-b")  # stopPolicy Hold: nothing is admitted from it
    _job(srv, "held-1", "team-b", "whatif-held")

    async def go() -> None:
        async with Browser() as b:
            await b.width(1280)
            await b.goto(admin_login(srv))
            await b.wait_for("document.querySelector('[data-queue]')")
            # By keyboard: the nav link is focusable and opens the form.
            link = "[...document.querySelectorAll('nav a')].find(a => a.textContent === 'What if?')"
            await b.js(f"{link}.focus()")
            assert await b.js("document.activeElement.textContent") == "What if?"
            await b.js(f"{link}.click()")
            await b.wait_for("document.getElementById('whatif-form')")
            labels = await b.js(
                "[...document.querySelectorAll('#whatif-form label')].map(l => document.getElementById(l.htmlFor) !== null)"
            )
            assert labels == [True, True]

            await _ask(b, "team-b", _manifest("try-open", "team-b", open_queue))
            text = await b.js(_answer())
            assert "admitted now\tyes" in text and "flavor\ta100" in text, text

            await _ask(b, "team-b", _manifest("try-held", "team-b", "whatif-held"))
            text = await b.js(_answer())
            assert "admitted now\tno" in text, text
            assert "inactive" in text and "never" in text, text
            # Behind held-1 in its ClusterQueue and its LocalQueue (0-based).
            assert "position in ClusterQueue whatif-held\t1" in text, text
            assert "position in LocalQueue whatif-held\t1" in text, text

            # What was typed survives a live update (a Job applied elsewhere).
            typed = await b.js("document.getElementById('whatif-manifest').value")
            await asyncio.to_thread(_job, srv, "held-2", "team-b", "whatif-held")
            await b.wait_for("document.getElementById('status').textContent.includes('Live')")
            await asyncio.sleep(0.5)
            assert await b.js("document.getElementById('whatif-manifest').value") == typed
            assert "admitted now\tno" in await b.js(_answer())

            # A bad manifest: the server's message, as an alert.
            await _ask(b, "team-b", "apiVersion: batch/v1\nkind: Jobz\n")
            alert = await b.js("document.querySelector('#whatif-answer [role=alert]').textContent")
            assert alert.startswith("400") and "Jobz" in alert, alert

            smallest = await b.js(
                "Math.min(...[...document.querySelectorAll('#whatif *')]"
                ".filter(e => e.offsetParent !== null && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))"
                ".map(e => parseFloat(getComputedStyle(e).fontSize)))"
            )
            assert smallest >= 12, smallest
            await b.screenshot(artifacts / "whatif-1280.png")
            await b.width(390, 844, mobile=True)
            await asyncio.sleep(0.3)
            overflow = await b.js("document.documentElement.scrollWidth")
            assert overflow <= 390, f"the what-if page is {overflow} px wide on a 390 px phone"
            # The one error logged is the network log's line for the 400 asked for.
            unexpected = [
                e for e in b.errors if not ("status of 400" in e and e.endswith("/predictions"))
            ]
            assert unexpected == [] and len(b.errors) == 1, b.errors
            foreign = [u for u in b.requests if not u.startswith(_origin(srv))]
            assert foreign == [], foreign

    asyncio.run(go())
    # Only forks were written to: the jobs asked about do not exist.
    names = {j["metadata"]["name"] for j in srv.json("get", "jobs", "-n", "team-b")["items"]}
    assert "try-open" not in names and "try-held" not in names


def test_whatif_form_offers_a_batch_user_their_namespace(srv: Served) -> None:
    async def go() -> None:
        async with Browser() as b:
            await b.width(1280)
            await b.goto(f"{srv.url}/ui/login?token=alice-token&next=/ui/%23/predict")
            await b.wait_for("document.getElementById('whatif-form')")
            options = await b.js(
                "[...document.querySelectorAll('#whatif-ns option')].map(o => o.value)"
            )
            assert options == ["team-a"], options
            assert b.errors == [], b.errors

    asyncio.run(go())


def _open_queue(cq: str, ns: str) -> str:
    return (
        _QUEUE.replace("stopPolicy: Hold", "stopPolicy: None").replace("CQ", cq).replace("NS", ns)
    )
