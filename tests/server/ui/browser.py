"""Headless Chromium driven over the DevTools protocol with aiohttp's
websocket client (no new dependency, no browser download): a page, its
console errors and uncaught exceptions, every URL it requested,
JavaScript evaluation and screenshots at a given width."""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None
)


class Browser:
    """One Chromium process and one page; use ``async with``."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self.errors: list[str] = []
        self.requests: list[str] = []
        self._profile = tempfile.TemporaryDirectory(
            prefix="kuota-chromium-", ignore_cleanup_errors=True
        )

    async def __aenter__(self) -> Browser:
        assert CHROMIUM is not None
        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--ignore-certificate-errors",  # kuota serve's own CA
                # No network: every host but localhost fails to resolve.
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            await asyncio.sleep(0.05)
        port = port_file.read_text().split()[0]
        self.http = aiohttp.ClientSession()
        async with self.http.get(f"http://127.0.0.1:{port}/json/list") as r:
            pages = [t for t in await r.json() if t["type"] == "page"]
        self.ws = await self.http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        for domain in ("Page", "Runtime", "Log", "Network"):
            await self.send(f"{domain}.enable")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._reader.cancel()
        await self.ws.close()
        await self.http.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self._profile.cleanup()

    async def _read(self) -> None:
        async for msg in self.ws:
            data = msg.json()
            if "id" in data:
                fut = self._waiting.pop(data["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(data)
                continue
            method, p = data.get("method"), data.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") == "error":
                self.errors.append(" ".join(str(a.get("value", a)) for a in p.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                self.errors.append(str(p.get("exceptionDetails")))
            elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
                self.errors.append(f"{p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif method == "Network.requestWillBeSent":
                self.requests.append(p["request"]["url"])

    async def send(self, method: str, **params: Any) -> Any:
        i = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[i] = fut
        await self.ws.send_json({"id": i, "method": method, "params": params})
        reply = await asyncio.wait_for(fut, 30)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def width(self, px: int, height: int = 900, mobile: bool = False) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            width=px,
            height=height,
            deviceScaleFactor=1,
            mobile=mobile,
        )

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", url=url)
        await self.wait_for("document.readyState === 'complete'")

    async def js(self, expr: str) -> Any:
        out = await self.send(
            "Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expr}: {out['exceptionDetails']}")
        return out["result"].get("value")

    async def wait_for(self, expr: str, timeout: float = 10.0) -> float:
        """Wait until ``expr`` is truthy on the page; the seconds it took."""
        t0 = time.monotonic()
        while True:
            try:
                if await self.js(f"!!({expr})"):
                    return time.monotonic() - t0
            except RuntimeError:
                pass
            if time.monotonic() - t0 > timeout:
                raise AssertionError(f"not true within {timeout}s: {expr}")
            await asyncio.sleep(0.02)

    async def screenshot(self, path: Path) -> None:
        """The whole page (not only the viewport) as a PNG."""
        h = await self.js("document.documentElement.scrollHeight")
        w = await self.js("document.documentElement.clientWidth")
        shot = await self.send(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": w, "height": h, "scale": 1},
        )
        path.write_bytes(base64.b64decode(shot["data"]))
