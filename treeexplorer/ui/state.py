"""What belongs to one table: the session's state kept per data (table, target, split), switched with it.

Every part of the page whose content describes the current table or one of its runs (the selection and its
comparison, the Alternatives card's set, its filters and status, the notes) registers a *part* here: how to
take its state (``save``) and how to show a saved one, or its empty state for a table seen for the first time
(``restore(None)``).  The controller calls :meth:`TableStates.switch` whenever the data change, so nothing of
the previous table stays on the page, and switching back brings that table's own state back.

The model is plain Python (no widgets), tested without a browser.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["TableStates", "Part"]


@dataclass(frozen=True)
class Part:
    """One part of the page's state: ``save() -> value`` and ``restore(value or None)``."""

    name: str
    save: Callable[[], object]
    restore: Callable[[object], None]


@dataclass
class TableStates:
    """The parts' saved state per data key, and the key shown now."""

    shown: tuple = ()
    parts: dict[str, Part] = field(default_factory=dict)
    saved: dict[tuple, dict] = field(default_factory=dict)

    def register(self, name: str, save: Callable[[], object], restore: Callable[[object], None]) -> None:
        """Add a part (a second registration under ``name`` replaces the first: a rebuilt view)."""
        self.parts[name] = Part(name, save, restore)

    def switch(self, key: tuple) -> bool:
        """Show the data ``key``: every part's state of the key shown so far is saved, then each part gets
        ``key``'s saved state (None: empty).  Returns False (nothing done) when ``key`` is already shown."""
        if key == self.shown:
            return False
        self.stash()
        self.shown = key
        mine = self.saved.get(key, {})
        for part in list(self.parts.values()):
            part.restore(mine.get(part.name))
        return True

    def stash(self) -> None:
        """Save every part's state under the key shown (nothing when no data is shown)."""
        if self.shown:
            self.saved[self.shown] = {name: part.save() for name, part in self.parts.items()}

    def get(self, key: tuple, name: str):
        """The state ``name`` saved for ``key`` (None when none)."""
        return self.saved.get(key, {}).get(name)

    def put(self, key: tuple, name: str, value) -> None:
        """Set the state ``name`` of a key not shown (a run that finished on another table selects its tree)."""
        self.saved.setdefault(key, {})[name] = value

    def forget(self, key: tuple) -> None:
        self.saved.pop(key, None)
