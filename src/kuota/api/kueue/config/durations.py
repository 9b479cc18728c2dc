"""Go durations (``metav1.Duration``): ``time.ParseDuration`` and ``Duration.String``
to the nanosecond, and their ``timedelta`` forms."""

from __future__ import annotations

from datetime import timedelta

# ============================================================================ durations
# Go's time.ParseDuration and Duration.String, to the nanosecond. Kueue's
# durations are int64 nanoseconds; Python's timedelta stops at microseconds, so the
# exact functions work on integer nanoseconds and the timedelta ones wrap them.

_NS_PER_UNIT = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 MICRO SIGN
    "μs": 1_000,  # U+03BC GREEK SMALL LETTER MU
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_U63 = 1 << 63  # Go accumulates in uint64 and checks against 1<<63
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _go_quote(s: str) -> str:
    """time.quote: non-ASCII and control characters as \\x escapes of their UTF-8 bytes."""
    out = ['"']
    for c in s:
        if ord(c) >= 0x80 or c < " ":
            out.extend(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
        else:
            if c in '"\\':
                out.append("\\")
            out.append(c)
    out.append('"')
    return "".join(out)


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"  # ASCII only, as Go compares bytes


def parse_duration_ns(text: str) -> int:
    """Go's ``time.ParseDuration``: ``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`` or ``"0"``.

    Returns integer nanoseconds; raises ValueError with Go's own message.
    """
    if not isinstance(text, str):
        raise ValueError(f'time: a duration is a string such as "5m", not {text!r}')
    orig, s, neg = text, text, False
    invalid = f"time: invalid duration {_go_quote(orig)}"
    if s and s[0] in "+-":
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(invalid)
    total = 0
    while s:
        if not (s[0] == "." or _is_digit(s[0])):
            raise ValueError(invalid)
        # [0-9]*
        i, v = 0, 0
        while i < len(s) and _is_digit(s[i]):
            if v > _U63 // 10:
                raise ValueError(invalid)
            v = v * 10 + ord(s[i]) - 48
            if v > _U63:
                raise ValueError(invalid)
            i += 1
        pre, s = i > 0, s[i:]
        # (\.[0-9]*)? -- digits beyond int64 precision are dropped, not an error
        f, scale, post = 0, 1.0, False
        if s and s[0] == ".":
            s = s[1:]
            i, overflow = 0, False
            while i < len(s) and _is_digit(s[i]):
                if not overflow:
                    y = f * 10 + ord(s[i]) - 48
                    if f > (_U63 - 1) // 10 or y > _U63:
                        overflow = True
                    else:
                        f, scale = y, scale * 10
                i += 1
            post, s = i > 0, s[i:]
        if not pre and not post:
            raise ValueError(invalid)  # no digits, e.g. ".s"
        i = 0
        while i < len(s) and not (s[i] == "." or _is_digit(s[i])):
            i += 1
        if i == 0:
            raise ValueError(f"time: missing unit in duration {_go_quote(orig)}")
        u, s = s[:i], s[i:]
        unit = _NS_PER_UNIT.get(u)
        if unit is None:
            raise ValueError(f"time: unknown unit {_go_quote(u)} in duration {_go_quote(orig)}")
        if v > _U63 // unit:
            raise ValueError(invalid)
        v *= unit
        if f > 0:
            # Go computes the fraction in float64 (exact enough for hours to the ns).
            v += int(float(f) * (float(unit) / scale))
            if v > _U63:
                raise ValueError(invalid)
        total += v
        if total > _U63:
            raise ValueError(invalid)
    if neg:
        return -total
    if total > _INT64_MAX:
        raise ValueError(invalid)
    return total


def _frac(v: int, prec: int) -> str:
    """``v / 10**prec`` with the fraction's trailing zeros (and a bare point) dropped."""
    whole, rest = divmod(v, 10**prec)
    if not rest:
        return str(whole)
    return f"{whole}.{str(rest).rjust(prec, '0').rstrip('0')}"


def format_duration_ns(ns: int) -> str:
    """Go's ``Duration.String``: ``"1h30m0s"``, ``"1.5s"``, ``"300ms"``, ``"1µs"``, ``"0s"``."""
    if not _INT64_MIN <= ns <= _INT64_MAX:
        raise ValueError(f"duration {ns}ns is out of Go's int64 range")
    sign, u = ("-", -ns) if ns < 0 else ("", ns)
    if u < 1_000_000_000:
        if u == 0:
            return "0s"
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            return f"{sign}{_frac(u, 3)}µs"
        return f"{sign}{_frac(u, 6)}ms"
    secs = u // 1_000_000_000
    out = f"{_frac(secs % 60 * 1_000_000_000 + u % 1_000_000_000, 9)}s"
    minutes = secs // 60
    if minutes:
        out = f"{minutes % 60}m{out}"
        if minutes // 60:
            out = f"{minutes // 60}h{out}"
    return sign + out


def parse_duration(text: str) -> timedelta:
    """``parse_duration_ns`` as a timedelta.

    A remainder below one microsecond rounds up (towards +inf): timedelta cannot hold it,
    and rounding up keeps a positive duration positive, so ``"1ns"`` stays a non-zero
    timeout as it is in Kueue.
    """
    ns = parse_duration_ns(text)
    return timedelta(microseconds=-(-ns // 1_000))


def _td_ns(td: timedelta) -> int:
    return (td.days * 86_400 + td.seconds) * 1_000_000_000 + td.microseconds * 1_000


def format_duration(td: timedelta) -> str:
    """``td`` as Go prints a Duration (raises ValueError beyond Go's ~292 years)."""
    return format_duration_ns(_td_ns(td))


def ns_to_timedelta(ns: int) -> timedelta:
    return timedelta(microseconds=-(-ns // 1_000))
