"""textual-serve with the guards a served TUI needs against hostile browser clients.

textual-serve (1.1.3) starts one app process per websocket and relays its terminal. As it
comes, a client can ask for a 20,000 × 20,000 terminal (the app grows past 3 GB), send frames
of any size or shape, open any number of sessions, and leave a busy app running for a minute
after its socket closed. Here (hooks: `handle_websocket`, `_process_messages`, the app
process's start and stop):

- sizes are clamped to what a screen can be (`COLUMNS`, `ROWS`), in the URL and in resizes;
- a frame over `FRAME_BYTES` ends the socket (aiohttp's own limit); one that is not a JSON list
  of a known kind with fields of the right type is dropped;
- at most `sessions` apps run at once (`--max sessions=N`): another client gets 503;
- each app process runs without a shell, its data segment bounded (`--max session-mib=N`), so a
  runaway session ends with a MemoryError in its own process, not the machine's memory;
- when its socket closes, an app is asked to quit, then terminated, then killed, seconds apart;
  when the server stops, every app still running is too;
- what is logged is one line per record, on stderr: a refused request (a bad upgrade, a request
  line or header past aiohttp's 8 KiB, a session past the cap) names its client, method, path
  and status, never its headers; an exception is its type (and, for a bug, its message), never
  a traceback. textual-serve's own logging is Rich's traceback with every frame's locals, the
  request's headers (an API key in `Authorization` included) among them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import resource
import shlex
import signal
import socket
from collections.abc import Callable
from typing import Any

from aiohttp import WSMsgType, web, web_protocol
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from ari_mem_tui.model.secrets import mask
from ari_mem_tui.render.text import clean

log = logging.getLogger("ari-mem-tui.serve")

COLUMNS = (20, 500)  # a terminal's width in cells: a 4K screen in a small font is ~500
ROWS = (5, 200)
FONT_SIZE = (6, 64)
FRAME_BYTES = 64 * 1024  # a pasted text is typed as one stdin frame; far more is no typing
STDIN_CHARS = 32 * 1024
QUIT_WAIT_S = 2.0  # asked to quit, an app has this long before SIGTERM, then as long to SIGKILL
LOGGED_CHARS = 120  # of a request's path (with its query) or an error's message, in a log line


def clamp(value: Any, bounds: tuple[int, int], default: int) -> int:
    """An int within `bounds` from whatever a client sent (`default` when it is no int)."""
    number = to_int(value, default) if isinstance(value, str) else value
    if not isinstance(number, int) or isinstance(number, bool):
        number = default
    return max(bounds[0], min(bounds[1], number))


def data_limit(mib: int) -> Callable[[], None]:
    """A child-process hook bounding its data segment (heap and private mappings) to `mib`."""

    size = mib * 1024 * 1024
    if size >= 1 << 63:  # past what the kernel holds (`--max session-mib=1e20`): no bound
        size = resource.RLIM_INFINITY

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (size, size))

    return limit


def _cut(text: object, limit: int = LOGGED_CHARS) -> str:
    """A client's or an error's text as a log line may hold it: one line, no escapes, no
    credential, short."""
    line = mask(clean(text, multiline=False))
    return line if len(line) <= limit else line[: limit - 1] + "…"


def describe(error: BaseException) -> str:
    """An exception in a few words. A request HTTP cannot read (aiohttp's parser errors) by
    its kind and status alone: their messages quote the offending bytes, a header's value
    among them. Our own errors keep their message, cut short."""
    name = type(error).__name__
    if isinstance(error, HttpProcessingError):
        return f"{name} (HTTP {error.code})"
    if isinstance(error, web.HTTPException):
        return f"{name} (HTTP {error.status})"
    return f"{name}: {_cut(error)}" if str(error) else name


class OneLine(logging.Formatter):
    """Every record on one line: its message and, for an exception, `describe`; never the
    traceback (textual-serve's handler printed each frame's locals, request headers included)."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.name == "aiohttp.server" and message.startswith("Error handling request"):
            message = "refused a request" + message.removeprefix("Error handling request")
        if record.exc_info and record.exc_info[1] is not None:
            message = f"{message}: {describe(record.exc_info[1])}"
        return f"ari-mem-tui: serve: {_cut(message, 4 * LOGGED_CHARS)}"


class RefusedRequests(AbstractAccessLogger):
    """aiohttp's access log, kept to the requests the server refused (status 400 and up), one
    line each: client, method, path, status; no header (its format logs User-Agent and
    Referer). A request HTTP could not read, and a handler's failure (500), are said by the
    server's own error line: logged here too, they would be two lines for one request."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, _took: float) -> None:
        if response.status < 400 or response.status == 500:
            return
        if request.message is web_protocol.ERROR:
            return
        self.logger.info(
            "refused %s %s from %s: HTTP %s %s",
            _cut(request.method),
            _cut(request.raw_path),
            request.remote,
            response.status,
            response.reason,
        )


def quiet_logging() -> None:
    """One line per record on stderr, in place of textual-serve's Rich tracebacks with locals."""
    handler = logging.StreamHandler()
    handler.setFormatter(OneLine())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)


class Session(AppService):
    """One app process: started without a shell under a memory bound, always ended."""

    def __init__(self, *args: Any, memory_mib: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.memory_mib = memory_mib

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *shlex.split(self.command),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            preexec_fn=data_limit(self.memory_mib),  # setrlimit only: safe before exec
        )
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        """Relay the app until its output ends, then close the socket: an app that died (past
        its memory bound, say) sends no exit message, and its socket would stay open."""
        try:
            await super().run()
        finally:
            with contextlib.suppress(Exception):  # the client may be gone already
                await self.remote_close()
            self._release()

    def _release(self) -> None:
        """Close the app's pipes while the loop runs, once the app has ended. Left open (stdin
        always; stdout while a child of the app still holds it), they are closed by the
        transport's finaliser, which may run after the loop has closed and then prints
        "Exception ignored … Event loop is closed" on the server's stderr. asyncio's Process
        has no public close: its transport is the one handle on the pipes."""
        process = self._process
        if process is None or process.returncode is None:
            return
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()

    async def stop(self) -> None:
        """Ask the app to quit; terminate it, then kill it, when it does not."""
        process = self._process
        if process is not None and process.returncode is None:
            await self.send_meta({"type": "quit"})
            for end in (None, process.terminate, process.kill):
                if end is not None and process.returncode is None:
                    try:
                        end()
                    except ProcessLookupError:
                        break
                try:
                    await asyncio.wait_for(process.wait(), QUIT_WAIT_S)
                    break
                except TimeoutError:
                    continue
        self._release()
        if self._task is not None:
            await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
            task, self._task = self._task, None
            try:
                await asyncio.wait_for(task, QUIT_WAIT_S)
            except TimeoutError:
                task.cancel()


class GuardedServer(Server):
    """textual-serve's Server with the module's guards, serving on a socket bound beforehand."""

    def __init__(
        self, command: str, sock: socket.socket, sessions: int, memory_mib: int, **kwargs: Any
    ) -> None:
        host, port = sock.getsockname()[:2]
        super().__init__(command, host=host, port=port, **kwargs)
        self.sock = sock
        self.max_sessions = sessions
        self.memory_mib = memory_mib
        self.live: set[Session] = set()

    def initialize_logging(self) -> None:
        quiet_logging()

    def serve(self, debug: bool = False) -> None:
        """textual-serve's `serve`, on the socket bound already (a busy port or a bad host was
        refused before any banner) and without its banner, which prints the command as markup."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        web.run_app(
            self._make_app(),
            sock=self.sock,
            handle_signals=False,
            loop=loop,
            print=lambda *_args: None,
            access_log_class=RefusedRequests,
        )

    async def on_startup(self, app: web.Application) -> None:
        pass  # the CLI has said where it serves

    async def on_shutdown(self, _app: web.Application) -> None:
        """Every app still running ends with the server."""
        await asyncio.gather(*(session.stop() for session in list(self.live)))

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        if len(self.live) >= self.max_sessions:
            raise web.HTTPServiceUnavailable(
                text=f"ari-mem-tui serves at most {self.max_sessions} sessions at once"
                " (--max sessions=N)"
            )
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=FRAME_BYTES)
        if not websocket.can_prepare(request).ok:  # no Upgrade: a plain 400, said in one line
            raise web.HTTPBadRequest(text="a websocket needs an Upgrade request")
        width = clamp(request.query.get("width", "80"), COLUMNS, 80)
        height = clamp(request.query.get("height", "24"), ROWS, 24)
        session: Session | None = None
        try:
            await websocket.prepare(request)
            session = Session(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
                memory_mib=self.memory_mib,
            )
            self.live.add(session)
            await session.start(width, height)
            await self._process_messages(websocket, session)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # noqa: BLE001 - one session's failure is logged, not fatal
            log.warning("session ended: %s: %s", type(error).__name__, error)
        finally:
            if session is not None:
                self.live.discard(session)
                await session.stop()
        return websocket

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: Any) -> None:
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
            except ValueError:
                continue  # a malformed frame is dropped
            if not isinstance(envelope, list) or not envelope:
                continue
            await self._one_message(websocket, app_service, envelope[0], envelope[1:2])

    async def _one_message(
        self, websocket: web.WebSocketResponse, session: Any, kind: Any, rest: list[Any]
    ) -> None:
        data = rest[0] if rest else None
        if kind == "stdin" and isinstance(data, str) and len(data) <= STDIN_CHARS:
            await session.send_bytes(data.encode("utf-8", "replace"))  # a lone surrogate: '?'
        elif kind == "resize" and isinstance(data, dict):
            width = clamp(data.get("width"), COLUMNS, 80)
            height = clamp(data.get("height"), ROWS, 24)
            await session.set_terminal_size(width, height)
        elif kind == "ping" and isinstance(data, str) and len(data) <= 64:
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await session.blur()
        elif kind == "focus":
            await session.focus()
