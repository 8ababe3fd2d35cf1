"""Serializer fields whose rules the OpenAPI schema states (issue 21, item 11: a request the schema calls
valid is accepted).

- :class:`OpenFloatField`: a float whose bounds exclude their ends (``accuracy`` in (0, 1), a positive
  step): the schema says ``exclusiveMinimum`` / ``exclusiveMaximum``, which an inclusive ``min_value``
  cannot, so a generated 0.0 is no longer "valid" for a field that refuses it.
- :class:`RFC3339DateTimeField`: reads every date-time that RFC 3339 (OpenAPI's ``format: date-time``)
  allows: a lower-case ``t``/``z``, a space for ``T``, fractions of any length (DRF reads at most 6
  digits) and a leap second (read as the second before it).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.core.validators import MaxValueValidator, MinValueValidator
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers


class OpenFloatField(serializers.FloatField):
    """A float with ``min_value`` / ``max_value`` that exclude their ends when ``exclusive_min`` /
    ``exclusive_max``; refused with the field's own message (``message``) when given."""

    def __init__(
        self,
        *,
        exclusive_min: bool = False,
        exclusive_max: bool = False,
        message: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.exclusive_min = exclusive_min
        self.exclusive_max = exclusive_max
        self.message = message
        super().__init__(**kwargs)
        # an excluded end is checked below; DRF's inclusive validator would also make drf-spectacular drop
        # the schema's exclusive flag
        self.validators = [
            v
            for v in self.validators
            if not (exclusive_min and isinstance(v, MinValueValidator))
            and not (exclusive_max and isinstance(v, MaxValueValidator))
        ]

    def to_internal_value(self, data: Any) -> float:
        value = super().to_internal_value(data)
        if (self.exclusive_min and self.min_value is not None and value <= self.min_value) or (
            self.exclusive_max and self.max_value is not None and value >= self.max_value
        ):
            low = "(" if self.exclusive_min else "["
            high = ")" if self.exclusive_max else "]"
            raise serializers.ValidationError(
                self.message or f"Must be in {low}{self.min_value}, {self.max_value}{high}.", code="range"
            )
        return value


class OpenFloatFieldExtension(OpenApiSerializerFieldExtension):
    target_class = OpenFloatField

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer_field(
            self.target, direction, bypass_extensions=True
        )
        field: OpenFloatField = self.target
        if field.exclusive_min and field.min_value is not None:
            schema["exclusiveMinimum"] = True  # OpenAPI 3.0: a flag next to ``minimum``
        if field.exclusive_max and field.max_value is not None:
            schema["exclusiveMaximum"] = True
        return schema


_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<hms>\d{2}:\d{2}:\d{2})(?P<fraction>\.\d+)?(?P<zone>[Zz]|[+-]\d{2}:\d{2})"
)


class RFC3339DateTimeField(serializers.DateTimeField):
    """DRF's date-time field, also reading every RFC 3339 date-time (see the module's doc); the schema is
    DRF's ``format: date-time``."""

    def to_internal_value(self, value: Any) -> datetime:
        if isinstance(value, str):
            match = _RFC3339.fullmatch(value.strip())
            if match is not None:
                hms = match["hms"]
                if hms.endswith(":60"):  # a leap second: the last second of that minute
                    hms = hms[:-2] + "59"
                fraction = (match["fraction"] or "")[:7]  # "." and at most 6 digits
                zone = "+00:00" if match["zone"] in ("Z", "z") else match["zone"]
                value = f"{match['date']}T{hms}{fraction}{zone}"
        return super().to_internal_value(value)
