"""The Academic's library fragments as registry resources, so ``search`` finds them.

Each fragment becomes a :class:`~backend.skills.registry.Resource` under the
``academic`` domain: its URI is the fragment's (``sylk://library/<category>/<id>``),
its name, description and tags come from the fragment's title, summary, tags and
category, and it is read by executing ``academic.library.get`` with
``{"ref": <uri>}`` (what a search hit's ``execute_with`` says).

Keeping in step. The library tells its listeners about every reload, on
whichever thread reloaded (often a worker running an Academic op). The registry
and its search index are not thread-safe, so the listener only parks the new
fragment list; :meth:`LibraryResources.refresh`, which the gateway runs before
each search and describe, applies it on the gateway's own thread. A library
reloads lazily (on its next read after a file changed), so a change shows in
search once the library has been read since.
"""

from __future__ import annotations

import logging
import threading

from backend.knowledge.fragments.fragment import Fragment
from backend.knowledge.fragments.library import FragmentLibrary
from backend.skills.gateway.gateway import Gateway
from backend.skills.registry import DuplicateOpError, Registry, Resource, UnknownOpError

log = logging.getLogger("sylk.skills.library")

READ_OP = "academic.library.get"


def fragment_resource(fragment: Fragment, op: str = READ_OP) -> Resource:
    tags = tuple(dict.fromkeys([*fragment.tags, fragment.category]))
    return Resource(
        uri=fragment.uri,
        op=op,
        name=fragment.title,
        description=fragment.summary or fragment.title,
        tags=tags,
        args={"ref": fragment.uri},
    )


class LibraryResources:
    """Mirrors ``library``'s fragments into ``registry`` as resources read by ``op``."""

    def __init__(self, registry: Registry, library: FragmentLibrary, *, op: str = READ_OP) -> None:
        if op not in registry:
            raise UnknownOpError(op)
        self.registry = registry
        self.op = op
        self._lock = threading.Lock()
        self._pending: list[Fragment] | None = None
        self._shown: dict[str, Resource] = {}
        # Subscribe before the first read: a reload in between is then parked, not lost.
        self._unsubscribe = library.subscribe(self._on_reload)
        self._apply(library.fragments())

    @property
    def uris(self) -> list[str]:
        return sorted(self._shown)

    def _on_reload(self, fragments: list[Fragment]) -> None:
        with self._lock:
            self._pending = fragments

    def refresh(self) -> None:
        """Apply the latest reload, if one arrived since the last refresh."""
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is not None:
            self._apply(pending)

    def _apply(self, fragments: list[Fragment]) -> None:
        wanted = {f.uri: fragment_resource(f, self.op) for f in fragments}
        for uri, shown in list(self._shown.items()):
            if wanted.get(uri) != shown:
                if self.registry.resource(uri) == shown:
                    self.registry.remove_resource(uri)
                del self._shown[uri]
        if self.op not in self.registry:  # the read op went away, taking its resources
            return
        for uri, resource in wanted.items():
            if uri in self._shown:
                continue
            try:
                self.registry.add_resource(resource)
            except DuplicateOpError:
                log.warning("library fragment %s: the uri is taken in the registry", uri)
                continue
            self._shown[uri] = resource

    def close(self) -> None:
        """Stop following the library and take its resources out of the registry."""
        self._unsubscribe()
        self._apply([])


def attach_library(gateway: Gateway, library: FragmentLibrary) -> LibraryResources:
    """Register ``library``'s fragments as resources of ``gateway`` and keep them current."""
    resources = LibraryResources(gateway.registry, library)
    gateway.add_refresher(resources.refresh)
    return resources
