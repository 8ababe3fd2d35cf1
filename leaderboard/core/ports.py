"""Ports: what an app low in the app graph needs from an app above it, registered by that app.

The apps form layers (docs/architecture.md): ``challenges`` and ``submissions`` sit below ``scoring`` and
``rankings``, whose models point at their rows, so they cannot import them. Where a lower service still
has to call up (parse a hidden-labels file when a task is created, check and dispatch a predictions file
when a submission is stored, rebuild boards when an entry is selected), it declares a :class:`Port` and
the upper app registers the implementation in its ``AppConfig.ready``. The call stays where it was; the
import arrow points down.

A port with nothing registered refuses loudly (``ImproperlyConfigured``), never skips the step: a
submission stored without its predictions checked would be a silent wrong board.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from django.core.exceptions import ImproperlyConfigured

T = TypeVar("T")


class Port(Generic[T]):
    """One implementation of ``T``, registered once by ``provider`` (an app label, for the message)."""

    def __init__(self, name: str, *, provider: str) -> None:
        self.name = name
        self.provider = provider
        self._impl: T | None = None

    def register(self, impl: T) -> None:
        self._impl = impl

    def __call__(self) -> T:
        if self._impl is None:
            raise ImproperlyConfigured(
                f"Nothing provides the {self.name}: install {self.provider} (its AppConfig.ready registers it)."
            )
        return self._impl

    def __repr__(self) -> str:
        return f"Port({self.name!r}, provider={self.provider!r}, registered={self._impl is not None})"
