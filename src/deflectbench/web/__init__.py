"""The local web pages: ``annotate`` (blind human labels) and ``view`` (browse everything).

One stdlib HTTP server (:mod:`.server`: loopback by default, strict Host header), JSON
endpoints and one Jinja page each (autoescape on; model text only ever set as text).
"""

from deflectbench.web.annotate import AnnotateApp
from deflectbench.web.pages import store_opener
from deflectbench.web.sample import SampleError, SamplePlan, ensure_sample
from deflectbench.web.server import DEFAULT_HOST, WebError, WebServer, check_bind, is_loopback
from deflectbench.web.view import ViewApp, ViewIndex

__all__ = [
    "DEFAULT_HOST",
    "AnnotateApp",
    "SampleError",
    "SamplePlan",
    "ViewApp",
    "ViewIndex",
    "WebError",
    "WebServer",
    "check_bind",
    "ensure_sample",
    "is_loopback",
    "store_opener",
]
