"""``POST /v1/qodeassist/{feature}/{op}``: the HTTP door of the feature table's operations.

The body (a JSON object; empty is ``{}``) is validated by the operation's request model and the
answer is its result model as JSON. Errors go through the one error table like every route's:
no such feature or operation → 404 naming the known ones, params that do not fit the model →
400 naming each field, what the operation raises → its kind's status. Auth, Host, Origin and
body size are `safety.Guard`'s, as for every route. Alone, the host starts the features once
the runtime is up (`start_features`); beside an editor they are the editor's, started there.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starlette.responses import JSONResponse, Response

from qodeassist_lsp.http_api.errors import read_json

if TYPE_CHECKING:
    from starlette.requests import Request

    from qodeassist_lsp.http_api.host import HttpHost
    from qodeassist_lsp.workbench.features import FeatureTable

log = logging.getLogger("qodeassist.http")

PATH = "/v1/qodeassist/{feature}/{op}"
"""The route; listed after the web chat's routes, which keep their paths."""


async def _table(host: HttpHost) -> FeatureTable:
    await host.runtime()
    assert host.bench is not None  # set once the runtime is up
    return host.bench.features


async def call_operation(request: Request) -> Response:
    """Run ``<feature>/<op>`` with the body as its request; answer its result."""
    host: HttpHost = request.app.state.host
    table = await _table(host)
    bound = table.operation(f"{request.path_params['feature']}/{request.path_params['op']}")
    return JSONResponse(await bound.call(await read_json(request)))


async def start_features(host: HttpHost) -> None:
    """Start the features once the runtime is up (a no-op for an editor's, already started)."""
    try:
        table = await _table(host)
    except Exception as exc:  # no runtime, no features: the routes answer why on each request
        log.warning("features not started: %s", exc)
        return
    table.start()


async def close_features(host: HttpHost) -> None:
    """Close the features of a workbench the host built itself (an editor closes its own)."""
    if host.surroundings.bench is None and host.bench is not None:
        await host.bench.features.aclose()
