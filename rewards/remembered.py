"""Values kept between requests in one process, at most a given number of them.

What a page computes from its inputs alone (a bootstrap interval of some counts, the SQL the
ORM writes for a filter) is the same the next time the same inputs come; such values are
kept by key here, the least recently used dropped first. A threaded server shares them, so
they are read and changed under a lock (never held while a value is computed).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable


class Remembered[K: Hashable, V]:
    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def recall(self, keys: Iterable[K]) -> dict[K, V]:
        """The remembered values among `keys`."""
        with self._lock:
            return {key: self._values[key] for key in keys if key in self._values}

    def remember(self, values: dict[K, V]) -> None:
        """Keep these as the most recently used; the least recently used go past `size`."""
        with self._lock:
            for key, value in values.items():
                self._values[key] = value
                self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def forget(self) -> None:
        with self._lock:
            self._values.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)
