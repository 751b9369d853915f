"""A section of report.json as a dataclass that gives back exactly what it was made from.

A report is read by real2gym versions that know fewer or more keys than the one that
wrote it, and edited by people and scripts. :class:`Section` types the keys the code
reads and keeps every other key in :attr:`Section.extra`, with the order the keys came
in, so that ``Section.from_json(data).to_json() == data`` (keys, values and order) for
any JSON object: nothing is lost on a round trip.

The rules, for a typed field:

- A field that defaults to None is written when it is not None. A key read as ``null``
  is kept in ``extra`` (and the field left None), so it is written back as ``null``.
- A field that defaults to an empty list or dict is written when it is not empty, or
  when the key was read (an empty ``"objects": []`` stays).
- A field whose type is a section (``NESTED``) is read into that section.

New keys come after those read, typed fields in their declared order, then ``extra``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Self

_OWN = ("extra", "key_order")


@dataclasses.dataclass
class Section:
    """Base of the report's typed sections (see the module's description).

    Attributes:
        extra: The keys the model does not type, as read (and the keys read as ``null``).
        key_order: The keys in the order they were read; new keys are written after them.
    """

    NESTED: ClassVar[dict[str, type[Section]]] = {}
    """Field name -> the section class its JSON object is read into."""

    extra: dict[str, Any] = dataclasses.field(default_factory=dict, kw_only=True)
    key_order: list[str] = dataclasses.field(default_factory=list, kw_only=True, repr=False, compare=False)

    @classmethod
    def typed_keys(cls) -> tuple[str, ...]:
        """The JSON keys this section types, in declared order."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name not in _OWN)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The section of a JSON object (the report's, or one of its sections).

        Values are taken as they are (no copy, no conversion), so a list read stays the
        list in ``data``.

        Raises:
            TypeError: A typed field without a default is missing (check the report first:
                :func:`~.check.check_report`).
        """
        typed = set(cls.typed_keys())
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key not in typed or value is None:
                extra[key] = value
            elif key in cls.NESTED and isinstance(value, Mapping):
                values[key] = cls.NESTED[key].from_json(value)
            else:
                values[key] = value
        return cls(**values, extra=extra, key_order=list(data))

    def to_json(self) -> dict[str, Any]:
        """The section as a JSON object: the keys read, in their order, then new ones.

        The lists and objects of untyped values are the section's own (not copied).
        """
        values: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            if field.name in _OWN:
                continue
            value = getattr(self, field.name)
            if value is None:
                continue
            empty_default = field.default_factory is not dataclasses.MISSING
            read = field.name in self.key_order and field.name not in self.extra
            if empty_default and not value and not read:
                continue
            values[field.name] = value.to_json() if isinstance(value, Section) else value
        merged = {**self.extra, **values}
        order = [key for key in self.key_order if key in merged]
        seen = set(order)
        order += [key for key in values if key not in seen]
        order += [key for key in self.extra if key not in seen and key not in values]
        return {key: merged[key] for key in order}
