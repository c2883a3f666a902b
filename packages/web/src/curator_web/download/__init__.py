"""The download -> iterate -> extract base classes and the fetch helper."""

from curator_web.download.base import *  # noqa: F403
from curator_web.download.base import __all__ as _base_all
from curator_web.download.http import fetch, read_url

__all__ = [*_base_all, "fetch", "read_url"]
