"""A small MCP server of Skald's tests, on the PyPI `mcp` SDK, that misbehaves on request:
a tool that ends the server in the middle of its call, one that sleeps, one whose input
schema refers to its own definitions ($ref, as pydantic writes a nested model), and one whose
description changes — read at start from the file WOBBLY_DESCRIPTION names (a change
between runs), or changed live by a call, which also tells the client that the tools
changed.

    WOBBLY_DESCRIPTION=FILE python wobbly.py            over stdio
    WOBBLY_DESCRIPTION=FILE python wobbly.py --http     streamable HTTP on a free port of 127.0.0.1

WOBBLY_START_DELAY=SECONDS makes it that much slower to start, as a loaded machine would.

Over stdio it writes its process id to `pid` in its working folder, so a test can kill
it; over HTTP it says on stderr which port it listens on, and `whoami` tells which bearer
token a call came with.
"""

import asyncio
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

DESCRIPTION = Path(os.environ.get("WOBBLY_DESCRIPTION", "description"))
DEFAULT = "Tells the weather in a city."

HTTP = sys.argv[1:] == ["--http"]

server = MCPServer("wobbly")
if not HTTP:
    Path("pid").write_text(str(os.getpid()))


def weather(city: str) -> str:
    return f"Sunny in {city}."


def describe_weather(text: str) -> None:
    try:
        server.remove_tool("weather")
    except Exception:
        pass
    server.add_tool(weather, name="weather", description=text)


@server.tool(description="Sleeps for the given number of seconds, then says so.")
async def nap(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return f"Slept {seconds} s."


@server.tool(description="Ends the server at once, in the middle of this call.")
def crash() -> str:
    sys.stderr.write("wobbly: crashing as asked\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="Changes the weather tool's description and tells the client its tools changed.")
async def redescribe(text: str, ctx: Context) -> str:
    DESCRIPTION.write_text(text)
    describe_weather(text)
    await ctx.session.send_tool_list_changed()
    return "Changed."


class Place(BaseModel):
    city: str
    country: str | None = None


@server.tool(description="Plans a trip to a place, for some days.")
def plan(place: Place, days: int = 1) -> str:
    # Its input schema has the $defs and $ref pydantic writes for a nested model.
    return f"{days} days in {place.city}."


class Colour(BaseModel):
    colour: str


@server.tool(description="Asks the person for a colour, and says what they chose.")
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Which colour would you like?", Colour)
    if answer.action == "accept":
        return f"You chose {answer.data.colour}."
    return f"You chose nothing ({answer.action})."


@server.tool(description="Says which bearer token the call came with.")
def whoami(ctx: Context) -> str:
    headers = ctx.headers or {}
    return headers.get("authorization") or "no token"


describe_weather(DESCRIPTION.read_text() if DESCRIPTION.exists() else DEFAULT)
if HTTP:
    import socket

    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    sys.stderr.write(f"listening on 127.0.0.1:{listener.getsockname()[1]}\n")
    sys.stderr.flush()
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[listener])
else:
    time.sleep(float(os.environ.get("WOBBLY_START_DELAY", "0")))
    server.run("stdio")
