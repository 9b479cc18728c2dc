"""Cron schedules as Kubernetes' CronJob controller reads them: robfig/cron v3's
``ParseStandard`` (five fields ``minute hour day-of-month month day-of-week``,
names ``jan``-``dec`` and ``sun``-``sat``, ``*``/``?``, ranges, steps, lists;
the descriptors ``@yearly``/``@annually``, ``@monthly``, ``@weekly``,
``@daily``/``@midnight``, ``@hourly`` and ``@every <duration>``; an optional
``TZ=``/``CRON_TZ=`` prefix) and its ``Next``.

The error texts are robfig's, which the API server puts in its message
(``spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3:
[* * *]``). Pure: time zones are passed in as ``tzinfo`` (loading one reads the
system's zone database, which belongs to the caller).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from kuota.api.kueue.config import parse_duration_ns

__all__ = ["CronError", "Schedule", "parse_schedule"]

_STAR = 1 << 63  # robfig's starBit: the field was "*" or "?"


class CronError(ValueError):
    """A schedule robfig/cron refuses; the message is robfig's."""


@dataclass(frozen=True, slots=True)
class _Bounds:
    lo: int
    hi: int
    names: dict[str, int] | None = None


_MINUTES = _Bounds(0, 59)
_HOURS = _Bounds(0, 23)
_DOM = _Bounds(1, 31)
_MONTHS = _Bounds(
    1,
    12,
    {
        m: i + 1
        for i, m in enumerate(
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        )
    },
)
_DOW = _Bounds(
    0, 6, {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
)


def _bits(lo: int, hi: int, step: int) -> int:
    out = 0
    for i in range(lo, hi + 1, step):
        out |= 1 << i
    return out


def _all(b: _Bounds) -> int:
    return _bits(b.lo, b.hi, 1) | _STAR


def _atoi(expr: str) -> int:
    """``mustParseInt``: Go's ``strconv.Atoi`` (an optional sign, ASCII digits)."""
    body = expr[1:] if expr[:1] in ("+", "-") else expr
    if not body or not body.isascii() or not body.isdigit():
        raise CronError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
        )
    num = int(expr)
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _int_or_name(expr: str, b: _Bounds) -> int:
    if b.names is not None and expr.lower() in b.names:
        return b.names[expr.lower()]
    return _atoi(expr)


def _range(expr: str, b: _Bounds) -> int:
    """``getRange``: ``*``, ``N``, ``N-M``, each with an optional ``/step``."""
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    single = len(low_high) == 1
    extra = 0
    if low_high[0] in ("*", "?"):
        start, end, extra = b.lo, b.hi, _STAR
    else:
        start = _int_or_name(low_high[0], b)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int_or_name(low_high[1], b)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if single:  # "N/step" means "N-max/step"
            end = b.hi
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < b.lo:
        raise CronError(f"beginning of range ({start}) below minimum ({b.lo}): {expr}")
    if end > b.hi:
        raise CronError(f"end of range ({end}) above maximum ({b.hi}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(text: str, b: _Bounds) -> int:
    out = 0
    for expr in (p for p in text.split(",") if p):  # strings.FieldsFunc drops empties
        out |= _range(expr, b)
    return out


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule: bit sets per field (robfig's ``SpecSchedule``), or a
    constant delay (``@every``). ``tz_name`` is the ``TZ=`` prefix, if any."""

    minute: int = 0
    hour: int = 0
    dom: int = 0
    month: int = 0
    dow: int = 0
    every: timedelta | None = None
    tz_name: str | None = None

    def _day_matches(self, t: datetime) -> bool:
        dom_match = bool(1 << t.day & self.dom)
        dow_match = bool(1 << ((t.weekday() + 1) % 7) & self.dow)  # Go: Sunday is 0
        # A "*" in either day field makes the two ANDed (cron's rule), else ORed.
        if self.dom & _STAR or self.dow & _STAR:
            return dom_match and dow_match
        return dom_match or dow_match

    def next(self, t: datetime, tz: tzinfo | None = None) -> datetime | None:
        """The first activation strictly after ``t`` (to the second), in the
        zone ``tz`` (default: ``t``'s own); None if none within five years
        (an impossible date such as February 31)."""
        if self.every is not None:
            return t.replace(microsecond=0) + self.every
        orig = t.tzinfo
        local = t.astimezone(tz) if tz is not None else t
        zone = local.tzinfo
        # Wall-clock search on naive times; every field here is whole minutes,
        # so the first candidate is the next whole minute after t.
        w = local.replace(tzinfo=None, second=0, microsecond=0) + timedelta(minutes=1)
        limit = w.year + 5
        while w.year <= limit:
            if not 1 << w.month & self.month:
                y, m = (w.year + 1, 1) if w.month == 12 else (w.year, w.month + 1)
                w = datetime(y, m, 1)
                continue
            if not self._day_matches(w):
                w = datetime(w.year, w.month, w.day) + timedelta(days=1)
                continue
            if not 1 << w.hour & self.hour:
                w = datetime(w.year, w.month, w.day, w.hour) + timedelta(hours=1)
                continue
            if not 1 << w.minute & self.minute:
                w += timedelta(minutes=1)
                continue
            found = w.replace(tzinfo=zone)
            return found.astimezone(orig) if orig is not None else found
        return None


def _descriptor(spec: str, tz_name: str | None) -> Schedule:
    dom1, jan, sun, midnight = 1 << _DOM.lo, 1 << _MONTHS.lo, 1 << _DOW.lo, 1 << _HOURS.lo
    table = {
        "@yearly": (dom1, jan, _all(_DOW), midnight),
        "@monthly": (dom1, _all(_MONTHS), _all(_DOW), midnight),
        "@weekly": (_all(_DOM), _all(_MONTHS), sun, midnight),
        "@daily": (_all(_DOM), _all(_MONTHS), _all(_DOW), midnight),
        "@hourly": (_all(_DOM), _all(_MONTHS), _all(_DOW), _all(_HOURS)),
    }
    table["@annually"], table["@midnight"] = table["@yearly"], table["@daily"]
    if spec in table:
        dom, month, dow, hour = table[spec]
        return Schedule(1 << _MINUTES.lo, hour, dom, month, dow, tz_name=tz_name)
    every = "@every "
    if spec.startswith(every):
        try:
            ns = parse_duration_ns(spec[len(every) :])
        except ValueError as err:
            raise CronError(f"failed to parse duration {spec}: {err}") from None
        # Every(): at least a second, whole seconds.
        ns = max(ns, 10**9)
        return Schedule(every=timedelta(seconds=ns // 10**9), tz_name=tz_name)
    raise CronError(f"unrecognized descriptor: {spec}")


def parse_schedule(spec: str) -> Schedule:
    """``cron.ParseStandard``; raises :class:`CronError` with robfig's message."""
    if not spec:
        raise CronError("empty spec string")
    tz_name = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        i = spec.find(" ")
        if i < 0:
            raise CronError("missing schedule after time zone")
        tz_name = spec[spec.index("=") + 1 : i]
        spec = spec[i:].strip()
    if spec.startswith("@"):
        return _descriptor(spec, tz_name)
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    return Schedule(
        minute=_field(fields[0], _MINUTES),
        hour=_field(fields[1], _HOURS),
        dom=_field(fields[2], _DOM),
        month=_field(fields[3], _MONTHS),
        dow=_field(fields[4], _DOW),
        tz_name=tz_name,
    )
