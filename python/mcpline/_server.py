"""``Server``: register Python callables as MCP tools and serve them over stdio."""

from __future__ import annotations

import sys

from mcpline import _core
from mcpline._introspect import is_plain_json
from mcpline._results import SetupError
from mcpline._startup import TYPE_CHECKING, signal
from mcpline._tool import ToolOptions, describe, icon_list, runner_options

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar, overload

    from mcpline._http import McpHttpApp
    from mcpline._lifespan import Lifespan
    from mcpline._tool import OutputMode, ToolShape

    F = TypeVar("F", bound=Callable[..., Any])


class Server:
    """An MCP server made of Python tools.

    ```python
    server = Server("files", version="1.2.0", instructions="Read-only access to a folder.")

    @server.tool(read_only=True)
    def count_words(path: str) -> int:
        \"\"\"Count the words in a UTF-8 text file.\"\"\"
        return len(open(path, encoding="utf-8").read().split())

    if __name__ == "__main__":
        server.run()
    ```

    ``output`` is the default for what a tool run prints (see ``tool``); ``strict=False`` makes
    every tool drop unknown arguments and send its results unchecked. After end of input,
    running work has ``eof_grace`` seconds before it is stopped and the server exits. Calls
    of ``async def`` tools run concurrently, at most ``max_concurrency`` at once; other tools
    run one at a time. ``lifespan(server)`` returns a context manager (plain or async) entered
    before the first request is read and exited when serving ends; what it yields is
    ``Context.lifespan`` in every call (a database connection, an HTTP client). A call's
    capture holds at most ``capture_cap`` bytes: beyond that its front goes to stderr while the
    call runs. An inbound line longer than ``max_line_bytes`` is
    refused (the lines after it are served); when ``queue_capacity`` calls wait for a tool, the
    server stops reading until half of them have started, so a client writing faster than tools
    run is slowed by the pipe, and nothing it sent is dropped. ``auth`` checks the bearer token
    of each HTTP request (see ``asgi_app``).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        instructions: str | None = None,
        output: OutputMode = "error",
        strict: bool = True,
        attach_limit: int = 8 * 1024,
        eof_grace: float = 1.5,
        max_line_bytes: int = 64 * 1024 * 1024,
        page_size: int = 100,
        max_concurrency: int = 16,
        capture_cap: int = 64 * 1024 * 1024,
        queue_capacity: int = 1024,
        lifespan: Callable[[Server], Any] | None = None,
        icons: Any = None,
        auth: Callable[[str], Any] | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.strict = strict
        self._core = _core.Server(
            name,
            version,
            title=title,
            description=description,
            website_url=website_url,
            instructions=instructions,
            icons=icon_list(icons),
        )
        self._core.configure(
            output=output,
            attach_limit=attach_limit,
            eof_grace=eof_grace,
            max_line_bytes=max_line_bytes,
            page_size=page_size,
            max_concurrency=max_concurrency,
            capture_cap=capture_cap,
            queue_capacity=queue_capacity,
        )
        self._runner: Any = None
        self.lifespan = lifespan
        self.auth = auth

    if TYPE_CHECKING:

        @overload
        def tool(self, fn: F, /) -> F: ...

        @overload
        def tool(
            self,
            *,
            name: str | None = None,
            title: str | None = None,
            description: str | None = None,
            read_only: bool | None = None,
            destructive: bool | None = None,
            idempotent: bool | None = None,
            open_world: bool | None = None,
            strict: bool | None = None,
            output: OutputMode | None = None,
            timeout: float | None = None,
            icons: Any = None,
        ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        strict: bool | None = None,
        output: OutputMode | None = None,
        timeout: float | None = None,
        icons: Any = None,
    ) -> Any:
        """Register a function as a tool: ``@server.tool`` or ``@server.tool(name=..., ...)``.

        The input schema comes from the signature (types, defaults, ``Annotated`` descriptions
        and a Google-style ``Args:`` docstring section); the description from the docstring. A
        parameter annotated ``Context`` receives the call's context. ``read_only``,
        ``destructive``, ``idempotent`` and ``open_world`` become MCP annotations. ``strict``
        (default: the server's) rejects unknown arguments and checks results against the
        return type; ``False`` drops unknown arguments and sends results unchecked. ``output``:
        ``"error"`` attaches what the run printed to error results, ``"result"`` to every
        result, ``"off"`` does not capture. ``timeout`` (seconds) stops a long call: the tool
        raises ``Cancelled`` (its ``finally`` blocks run) and the result says it timed out.
        ``icons`` (URLs, or dicts with ``"src"``, ``"mimeType"``, ``"sizes"``, ``"theme"``; also
        on the server, prompts and resources) are sent from protocol 2025-11-25.
        The function is returned unchanged.
        """
        if fn is not None and not callable(fn):
            raise TypeError(
                "@server.tool takes a function; for options use keywords: "
                "@server.tool(name=..., read_only=True)"
            )

        def register(func: F) -> F:
            options = ToolOptions(
                name=name,
                title=title,
                description=description,
                read_only=read_only,
                destructive=destructive,
                idempotent=idempotent,
                open_world=open_world,
                strict=self.strict if strict is None else strict,
                output=output,
                timeout=timeout,
                icons=icon_list(icons),
            )
            self._register(func, options)
            return func

        return register(fn) if fn is not None else register

    def _register(self, func: Callable[..., Any], options: ToolOptions) -> None:
        try:
            shape = describe(
                func,
                name=options.name,
                description=options.description,
                context_types=(_core.Context,),
            )
        except (TypeError, ValueError) as e:
            label = options.name or getattr(func, "__name__", repr(func))
            raise SetupError(f"cannot register tool {label!r}: {e}") from e
        call, runner = self._runnable(func, shape)
        self._core.add_tool(call, shape, options, runner)

    def _runnable(
        self, func: Callable[..., Any], shape: ToolShape
    ) -> tuple[Callable[..., Any], Any]:
        """What the core calls for ``func`` (its JSON arguments converted first where its
        parameters are richer types), and the runner of an ``async def`` one."""
        call = func
        rich = {p: t for p, t in shape.param_types.items() if not is_plain_json(t)}
        if rich or shape.field_defaults:
            # Enum, dataclass, date ... parameters: convert the JSON arguments first; fill in
            # the defaults given as Field(...).
            from mcpline._convert import converter_for, wrap_callable

            converters = {p: c for p, t in rich.items() if (c := converter_for(t)) is not None}
            call = wrap_callable(func, converters, shape.is_async, shape.field_defaults)
        runner = None
        if shape.is_async:
            if self._runner is None:
                from mcpline._runner import AsyncRunner

                self._runner = AsyncRunner()
            runner = self._runner
        return call, runner

    if TYPE_CHECKING:

        @overload
        def prompt(self, fn: F, /) -> F: ...

        @overload
        def prompt(
            self,
            *,
            name: str | None = None,
            title: str | None = None,
            description: str | None = None,
            icons: Any = None,
        ) -> Callable[[F], F]: ...

    def prompt(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Any = None,
    ) -> Any:
        """Register a function as a prompt: ``@server.prompt`` or ``@server.prompt(name=...)``.

        Its arguments come from the signature: a parameter without a default is required, and
        its description comes from ``Annotated`` or the docstring's ``Args:`` section, as for
        tools. Clients send every argument as a string; one declared ``int``, ``float`` or
        ``bool`` is read as that type. The function returns a ``str`` (one user message), an
        ``Image`` or ``Audio``, a ``Message``, a ``{"role": ..., "content": ...}`` dict, or a
        list of these. It runs like a tool call (what it prints is captured; an exception is
        the error ``-32603`` with its message). The function is returned unchanged.
        """
        if fn is not None and not callable(fn):
            raise TypeError("@server.prompt takes a function; for options use keywords")

        def register(func: F) -> F:
            self._register_prompt(
                func, name=name, title=title, description=description, icons=icons
            )
            return func

        return register(fn) if fn is not None else register

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        icons: Any = None,
    ) -> Callable[[F], F]:
        """Register a function as a resource: ``@server.resource("config://app")``, or as a
        resource template: ``@server.resource("logs://{day}/{name}")``.

        A template's ``{variables}`` (RFC 6570 level 1) must be the function's parameters (a
        ``Context`` parameter aside); each is read as its annotated type (``int``, ``float``,
        ``bool`` or ``str``) and validated like a tool argument. A fixed resource's function
        takes no parameters. It returns ``str`` (text), ``bytes`` (a base64 blob), an ``Image``
        or ``Audio``, explicit contents (a dict with ``"text"`` or ``"blob"``, or a list of
        them) or other JSON data (JSON text). ``name`` defaults to the function's name,
        ``description`` to its docstring; ``mime_type``, ``size`` and ``annotations``
        (``audience``, ``priority``, ``lastModified``) are sent as given. Reading runs like a
        tool call (what it prints is captured; an exception is the error ``-32603``). The
        function is returned unchanged.
        """
        if not isinstance(uri, str) or callable(uri):
            raise TypeError(
                '@server.resource takes the URI first: @server.resource("config://app")'
            )

        def register(func: F) -> F:
            self._register_resource(
                func,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                size=size,
                annotations=annotations,
                icons=icons,
            )
            return func

        return register

    def _register_resource(
        self,
        func: Callable[..., Any],
        uri: str,
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        mime_type: str | None,
        size: int | None,
        annotations: dict[str, Any] | None,
        icons: Any,
    ) -> None:
        from mcpline._resources import as_resource

        label = getattr(func, "__name__", repr(func))
        # The runner's name labels what a read prints; the resource's name is free text.
        runner_name = "".join(c if c.isalnum() or c in "_.-" else "_" for c in label)[:64]
        try:
            shape = describe(
                func,
                name=runner_name or "resource",
                description=description,
                context_types=(_core.Context,),
                returns=False,
            )
        except (TypeError, ValueError) as e:
            raise SetupError(f"cannot register resource {uri!r}: {e}") from e
        # The core checks the template (level 1) and that its variables are the parameters.
        template = "{" in uri or "}" in uri
        descriptor: dict[str, Any] = {"uriTemplate" if template else "uri": uri}
        descriptor["name"] = name or label
        for key, value in (
            ("title", title),
            ("description", shape.description),
            ("mimeType", mime_type),
            ("size", None if template else size),
            ("annotations", annotations),
            ("icons", icon_list(icons)),
        ):
            if value is not None:
                descriptor[key] = value
        call, runner = self._runnable(func, shape)
        options = runner_options(shape.name)
        read = as_resource(call, shape.is_async, mime_type)
        self._core.add_resource(read, shape, options, descriptor, runner)

    if TYPE_CHECKING:

        @overload
        def completion(self, fn: F, /) -> F: ...

        @overload
        def completion(self) -> Callable[[F], F]: ...

    def completion(self, fn: F | None = None) -> Any:
        """Set the completer of prompt arguments and template variables: ``@server.completion``
        (or ``@server.completion()``) on ``fn(ref, argument, context)``.

        ``ref.type`` is ``"ref/prompt"`` (``ref.name``) or ``"ref/resource"`` (``ref.uri``);
        ``argument.name`` and ``argument.value`` say what is typed; ``context.arguments`` holds
        the values already chosen. It returns suggestions, or ``None`` for those of the
        argument's declared type. Without a completer, and for ``None``, the declared type
        gives them: the values of a ``Literal`` or an ``Enum``, ``true``/``false`` for a
        ``bool``, each filtered by what was typed. At most 100 are sent, with the total. The
        function is returned unchanged.
        """

        def register(func: F) -> F:
            from mcpline._completions import as_completer
            from mcpline._introspect import CallableInfo

            label = getattr(func, "__name__", repr(func))
            # Its parameters' annotations (the official SDK's types, say) are not read.
            completer = as_completer(func, CallableInfo(func).is_async)
            shape = describe(completer, name="completer", returns=False)
            options = runner_options("completer")
            try:
                call, runner = self._runnable(completer, shape)
                self._core.set_completer(call, shape, options, runner)
            except (TypeError, ValueError) as e:
                raise SetupError(f"cannot set completer {label!r}: {e}") from e
            return func

        return register(fn) if fn is not None else register

    def _register_prompt(
        self,
        func: Callable[..., Any],
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        icons: Any,
    ) -> None:
        from mcpline._prompts import as_prompt

        label = name or getattr(func, "__name__", repr(func))
        try:
            # A prompt returns messages, not a declared result: nothing to check them against.
            shape = describe(
                func,
                name=name,
                description=description,
                context_types=(_core.Context,),
                returns=False,
            )
        except (TypeError, ValueError) as e:
            raise SetupError(f"cannot register prompt {label!r}: {e}") from e
        properties = shape.input_schema.get("properties", {})
        required = set(shape.input_schema.get("required", ()))
        arguments = [
            (argument, schema.get("description"), argument in required)
            for argument, schema in properties.items()
        ]
        call, runner = self._runnable(func, shape)
        options = runner_options(shape.name, title=title, icons=icon_list(icons))
        self._core.add_prompt(as_prompt(call, shape.is_async), shape, options, arguments, runner)

    @property
    def tool_names(self) -> list[str]:
        """Registered tool names, sorted."""
        return self._core.tool_names()

    def run(self) -> None:
        """Serve stdin/stdout until end of input (or SIGINT, SIGTERM or SIGHUP, which stop it
        cleanly; a SIGHUP ignored by the caller, as under ``nohup``, stays ignored).

        While serving, stdout is reserved for the protocol: ``print()`` and child processes
        write to stderr instead, and stdin reads as empty. On Windows ``sys.stdout`` and
        ``sys.stderr`` meanwhile write UTF-8 through fds 1 and 2 (see ``mcpline._streams``).
        """
        lifespan = self._enter_lifespan(serving=True)
        previous = _stop_on_signals()
        from mcpline import _spawns, _stopping, _streams

        restore_stop_signal = _stopping.install()  # time limits and cancels stop sync tools
        _spawns.report_spawns()  # children may write to their call's capture after it ended

        # Calls of async tools overlap: their prints are routed through their calls.
        _streams.ROUTE = self._runner is not None
        try:
            # Once the protocol stdout is put aside: line by line, and on Windows through fds
            # 1/2 in UTF-8 (after the flush that sends what was printed before run() to stderr).
            # Before the core ends the process itself (parent gone, a tool stuck after end of
            # input), the lifespan is exited too.
            on_exit = None if lifespan is None else lifespan.exit
            self._core.run_stdio(_streams.serving, on_exit)
        except KeyboardInterrupt:
            sys.stderr.write("[mcpline] interrupted; stopped serving\n")
        finally:
            restore_stop_signal()
            _streams.ROUTE = False
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            if lifespan is not None:  # before the loop it may run on closes
                self._exit_lifespan(lifespan, serving=True)
            if self._runner is not None:
                self._runner.close()

    def asgi_app(
        self,
        path: str = "/mcp",
        *,
        allowed_origins: Sequence[str] = (),
        allowed_hosts: Sequence[str] | None = None,
        max_body_bytes: int = 4 * 1024 * 1024,
        auth: Callable[[str], Any] | None = None,
        resource_metadata: str | None = None,
        sync_workers: int = 8,
        session_idle: float = 3600.0,
    ) -> McpHttpApp:
        """This server as an ASGI 3 application speaking MCP's Streamable HTTP at ``path``.

        Run it with any ASGI server (``uvicorn module:app``) or mount it in a framework.
        2026-07-28 requests are stateless (any worker of a fleet can answer any request);
        the handshake revisions keep a session under ``Mcp-Session-Id`` in the worker that
        answered ``initialize`` (route them stickily).

        - ``allowed_hosts``: ``Host`` values served; ``None`` serves only local names, right for
          a server on a loopback address. A public deployment lists its names (``"*"``: any).
        - ``allowed_origins``: browser origins allowed besides local ones; another ``Origin``
          is refused with 403 (DNS-rebinding protection).
        - ``max_body_bytes``: a larger POST body is refused with 413.
        - ``auth`` (default: the server's ``auth``): called with the bearer token of each
          request (may be async); a falsy answer or an exception is a 401 with
          ``WWW-Authenticate``, naming ``resource_metadata`` when given.
        - ``sync_workers``: threads running calls of sync tools side by side.
        - ``session_idle``: seconds a handshake-era session may sit unused.
        """
        from mcpline._http import McpHttpApp

        return McpHttpApp(
            self,
            path=path,
            allowed_origins=list(allowed_origins),
            allowed_hosts=None if allowed_hosts is None else list(allowed_hosts),
            max_body_bytes=max_body_bytes,
            auth=auth if auth is not None else self.auth,
            resource_metadata=resource_metadata,
            sync_workers=sync_workers,
            session_idle=session_idle,
        )

    def _enter_lifespan(self, *, serving: bool) -> Lifespan | None:
        """Enters ``self.lifespan`` (if any) and hands what it yields to every call's context.

        ``serving``: before ``run()`` serves, where stdout is the protocol's: what the lifespan
        prints goes to stderr, and a failure is one line on stderr and exit status 1.
        """
        if self.lifespan is None:
            return None
        from mcpline._lifespan import Lifespan, LifespanError, output_to_stderr

        lifespan = Lifespan(self.lifespan, self, self._runner)
        try:
            with output_to_stderr(serving):
                value = lifespan.enter()
        except LifespanError as error:
            if not serving:
                raise
            sys.stderr.write(f"[mcpline] {error}\n")
            raise SystemExit(1) from None
        self._core.set_lifespan_value(value)
        return lifespan

    def _exit_lifespan(self, lifespan: Lifespan, *, serving: bool) -> None:
        from mcpline._lifespan import output_to_stderr

        self._core.set_lifespan_value(None)
        with output_to_stderr(serving):
            lifespan.exit()


def _stop_on_signals() -> dict[int, Any]:
    """Makes SIGTERM, and SIGHUP where it has its default action (ending the process at once,
    losing what the running call printed), stop serving as SIGINT does; returns the handlers
    to put back. Off the main thread they stay with whoever handles them there."""
    previous: dict[int, Any] = {}
    hangup = getattr(signal, "SIGHUP", None)
    for signum in (signal.SIGTERM, hangup):
        if signum is None or (signum == hangup and signal.getsignal(signum) != signal.SIG_DFL):
            continue
        try:
            previous[signum] = signal.signal(signum, _raise_interrupt)
        except ValueError:
            break  # not the main thread
    return previous


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
