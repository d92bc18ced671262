"""``cogen view``: a dataset, and a model's mistakes, in the browser, every grid drawn as a grid.

>>> app = ViewApp("cogen-data", predictions="preds.jsonl")     # doctest: +SKIP
>>> server = make_server(app)                                  # 127.0.0.1, a free port
>>> server.serve_forever()                                     # doctest: +SKIP

* :mod:`cogen.view.source`   a local dataset folder or a Hub repo, and the path checks
* :mod:`cogen.view.split`    a split's rows, a row group at a time (never the whole split)
* :mod:`cogen.view.index`    the filters (facets) over a whole split
* :mod:`cogen.view.drawing`  what the page draws, and the :class:`Viewer` protocol each family's
  ``view.py`` follows (reached through the family record's ``viewer`` role)
* :mod:`cogen.view.app`      configs, filters and pages of drawn rows, without HTTP
* :mod:`cogen.view.server`   the standard library's ``ThreadingHTTPServer`` on loopback, read-only

The page itself (``static/``) is plain HTML, CSS and JavaScript: no library, no build step, no
network beyond the server it came from.
"""

from cogen.view.app import ViewApp
from cogen.view.drawing import Scored, Viewer
from cogen.view.server import HOST, ViewServer, make_server

__all__ = ["HOST", "Scored", "ViewApp", "ViewServer", "Viewer", "make_server"]
