"""Kubernetes resource quantities ("500m", "16Gi", "1e3"), exact and never floating point.

This follows apimachinery's ``pkg/api/resource`` (``quantity.go``, ``suffix.go``,
``amount.go``, ``math.go``, ``scale_int.go``): the same grammar, the same rounding, the
same format bookkeeping and the same ``String()`` output, including the places where
Kubernetes is surprising. Those places are marked "Kubernetes:" below.

A quantity is stored as an exact integer number of nano-units (10^-9), which is all
Kubernetes can hold too: parsing rounds anything finer up to the next nano-unit.

This module imports nothing from kuota, so every layer may use it.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal
from typing import Final, NoReturn

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "MAX_DIGITS",
    "QUANTITY_REGEX",
    "Quantity",
    "QuantityError",
]

DECIMAL_SI: Final = "DecimalSI"
BINARY_SI: Final = "BinarySI"
DECIMAL_EXPONENT: Final = "DecimalExponent"
_FORMATS: Final = frozenset((DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT))

# The expression Kubernetes quotes in its parse errors (quantity.go, splitREString).
# It is looser than the real grammar, which the scanner below implements.
QUANTITY_REGEX: Final = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

# Bound on huge inputs. Kubernetes keeps large values as inf.Dec (a big integer and an
# int32 exponent), so "1e999999999" costs it nothing until someone asks for the value.
# Here every quantity is an exact Python int of nano-units, so the magnitude is bounded
# instead: a quantity must be below 10^MAX_DIGITS (at most MAX_DIGITS integer digits).
# 10^1000 is far past anything a cluster can mean (int64 is 9.2e18) and past every
# float a YAML or JSON number can hold (1.8e308), yet keeps each value a ~1000-digit int:
# cheap to compare and add, and well below Python's 4300-digit int/str conversion limit.
# The bound is checked before any big number is built, so "9" * 100000 or "1e999999999"
# fail at once. Only decimal quantities can hit it: a BinarySI quantity is capped at
# 2^63-1 like Kubernetes does, whatever its length. Fractions of any length are fine:
# digits below the nano-unit only decide the rounding and are never turned into ints.
MAX_DIGITS: Final = 1000

_NANO: Final = 10**9
_WIRE_STABLE: Final = 10**30  # nanos of 10^21, where DecimalSI turns to exponent form
_MICRO_PER_NANO: Final = 10**6  # nano-units per milli-unit
_LIMIT_NANOS: Final = 10 ** (MAX_DIGITS + 9)  # exclusive bound on |nanos|
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_BINARY_CAP_NANOS: Final = _INT64_MAX * _NANO  # Kubernetes caps BinarySI input at 2^63-1

# suffix.go. Decimal suffixes are looked up first, so "E" is exa, not an exponent.
_DECIMAL_SUFFIXES: Final = {
    "": 0,
    "n": -9,
    "u": -6,
    "m": -3,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_NAMES: Final = {exp: name for name, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_NAMES: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")  # by power of 1024
_POW5: Final = {exp: 5**exp for exp in _BINARY_SUFFIXES.values()}

# The scanner of quantity.go (parseQuantityString) as one expression: sign, leading
# zeros (dropped), integer digits, optional "." and fraction digits, then the suffix:
# suffix letters, an optional sign and digits. Possessive quantifiers make it scan
# once, left to right, like the Go loop; without them a long run of digits followed by
# junk would backtrack quadratically.
_SCAN: Final = re.compile(
    r"([+-]?+)(0*+)([0-9]*+)(?:\.([0-9]*+))?+([eEinumkKMGTP]*+[+-]?+[0-9]*+)", re.ASCII
)
# An exponent as Go's strconv.ParseInt takes it: a sign, then at least one digit.
_EXPONENT: Final = re.compile(r"[+-]?+(?=[0-9])0*+([0-9]*+)", re.ASCII)

# What Kubernetes trims from a quantity string. Its UnmarshalJSON applies Go's
# strings.TrimSpace to the raw JSON text between the quotes, and a YAML manifest gets
# there through json.Marshal, which escapes control characters and U+2028/U+2029: an
# escaped "\t" is not trimmed and fails. What is left is a space and the non-ASCII
# Unicode spaces, checked against Go for every whitespace character.
_GO_SPACE: Final = " \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"


class QuantityError(ValueError):
    """A text or value that is not a Kubernetes quantity (or one too large to hold)."""


def _shown(text: str) -> str:
    # Quote the input, shortened so a 100 kB junk value does not make a 100 kB message.
    return repr(text) if len(text) <= 80 else f"{text[:60]!r}... ({len(text)} characters)"


def _syntax_error(text: str, why: str) -> NoReturn:
    raise QuantityError(
        f"invalid quantity {_shown(text)}: {why}; quantities must match the regular "
        f"expression '{QUANTITY_REGEX}' (suffixes: n u m k M G T P E, Ki Mi Gi Ti Pi Ei, "
        "or e<exponent>)"
    )


def _too_large(what: str) -> NoReturn:
    raise QuantityError(
        f"quantity {what} is too large: kuota supports magnitudes below 10^{MAX_DIGITS}"
    )


def _wrap32(value: int) -> int:
    """``int32(value)`` in Go: keep the low 32 bits, two's complement."""
    return ((value + 2**31) & 0xFFFFFFFF) - 2**31


def _check_format(fmt: str) -> None:
    if fmt not in _FORMATS:
        raise QuantityError(
            f"unknown quantity format {fmt!r}: expected DecimalSI, BinarySI or DecimalExponent"
        )


def _check_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise QuantityError(f"{what} must be an int, not {type(value).__name__}")
    return value


class Quantity:
    """An exact Kubernetes resource quantity. Immutable and hashable.

    Equality and ordering are numeric, like Kubernetes' ``Cmp``: ``"1" == "1000m" == 1``,
    whatever the formats. ``str()`` is what Kubernetes' ``Quantity.String()`` prints.
    Build one with :meth:`parse`, :meth:`from_value`, :meth:`from_int`,
    :meth:`from_milli` or :meth:`from_nanos`; ``Quantity("500m")`` is :meth:`from_value`.
    """

    __slots__ = ("_format", "_nanos", "_text")

    _nanos: int
    _format: str
    # What String() returns: the input text when Kubernetes keeps it (see _parse), or
    # the canonical form once computed; None until then.
    _text: str | None

    def __new__(cls, value: object) -> Quantity:
        return cls.from_value(value)

    # ----------------------------------------------------------------- construction

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse ``text`` exactly as Kubernetes' ``ParseQuantity`` does (no trimming).

        Raises :class:`QuantityError` for text Kubernetes rejects, and for decimal
        values of more than MAX_DIGITS integer digits, which Kubernetes would accept.
        """
        if not isinstance(text, str):
            raise QuantityError(f"a quantity to parse must be a str, not {type(text).__name__}")
        return _parse(text)

    @classmethod
    def from_value(cls, obj: object) -> Quantity:
        """A quantity from a decoded YAML/JSON value, as Kubernetes' JSON unmarshalling.

        - ``str``: surrounding spaces are trimmed as Kubernetes' UnmarshalJSON trims a
          YAML string (a space or a Unicode space, but not a tab or newline), then parsed.
        - ``int``: exact; parsed from its decimal text, as Kubernetes reads a JSON number.
        - ``float``: Kubernetes never sees a float, only the number's text. A YAML number
          reaches it through Go's ``json.Marshal(float64)``, whose text is the shortest
          that round-trips (the digits of Python's ``repr``) in fixed notation, or in
          exponent notation below 1e-6 or from 1e21 on. That text is rebuilt and parsed,
          so ``1.5`` is 1500m and ``0.1`` is exactly 100m, never 0.1000000000000000055.
        - anything else (``bool``, ``None``, lists, ...) raises :class:`QuantityError`.
        """
        if isinstance(obj, str):
            return _parse(obj.strip(_GO_SPACE))
        if isinstance(obj, bool):
            raise QuantityError(f"a quantity must be a string or a number, not a bool ({obj})")
        if isinstance(obj, int):
            # 10^MAX_DIGITS needs about 3.33 * MAX_DIGITS bits; refuse clearly larger ints
            # before str() builds (or Python refuses to build) their text.
            if obj.bit_length() > 4 * MAX_DIGITS:
                _too_large(f"of {obj.bit_length()} bits")
            return _parse(str(obj))
        if isinstance(obj, float):
            return _parse(_go_json_float(obj))
        raise QuantityError(f"a quantity must be a string or a number, not {type(obj).__name__}")

    @classmethod
    def from_int(cls, value: int, fmt: str = DECIMAL_SI) -> Quantity:
        """``value`` units in format ``fmt`` (Kubernetes' NewQuantity)."""
        return cls.from_nanos(_check_int(value, "value") * _NANO, fmt)

    @classmethod
    def from_milli(cls, milli: int, fmt: str = DECIMAL_SI) -> Quantity:
        """``milli`` thousandths of a unit in format ``fmt`` (NewMilliQuantity)."""
        if type(milli) is int and fmt is DECIMAL_SI:
            # The common case (quota arithmetic), without the general checks.
            return _make_checked(milli * _MICRO_PER_NANO, DECIMAL_SI)
        return cls.from_nanos(_check_int(milli, "milli") * _MICRO_PER_NANO, fmt)

    @classmethod
    def from_nanos(cls, nanos: int, fmt: str = DECIMAL_SI) -> Quantity:
        """``nanos`` billionths of a unit in format ``fmt`` (NewScaledQuantity at Nano)."""
        _check_format(fmt)
        return _make_checked(_check_int(nanos, "nanos"), fmt)

    # ---------------------------------------------------------------------- reading

    @property
    def nanos(self) -> int:
        """The exact value in nano-units (10^-9), after Kubernetes' rounding."""
        return self._nanos

    @property
    def format(self) -> str:
        """``"DecimalSI"``, ``"BinarySI"`` or ``"DecimalExponent"``, as Kubernetes keeps it."""
        return self._format

    def value(self) -> int:
        """Kubernetes' ``Value()``: whole units, rounded away from zero (1.5 -> 2, -1.5 -> -2).

        Kubernetes documents and, for int64-backed quantities, implements rounding away
        from zero; its inf.Dec path (large or binary-fraction values) truncates and adds
        one, so there -1.5 gives 0. That is a bug, and negative resource amounts are not
        valid anyway; this follows the documented rule for every value. The result is
        exact: Kubernetes would overflow int64, see :meth:`int64_value`.
        """
        n = self._nanos
        return -(-n // _NANO) if n >= 0 else n // _NANO

    def milli_value(self) -> int:
        """Kubernetes' ``MilliValue()``: thousandths, rounded away from zero, exact."""
        n = self._nanos
        return -(-n // _MICRO_PER_NANO) if n >= 0 else n // _MICRO_PER_NANO

    def int64_value(self) -> int:
        """:meth:`value` saturated to int64, for Kueue's int64 arithmetic."""
        return min(max(self.value(), _INT64_MIN), _INT64_MAX)

    def int64_milli_value(self) -> int:
        """:meth:`milli_value` saturated to int64, for Kueue's int64 arithmetic."""
        return min(max(self.milli_value(), _INT64_MIN), _INT64_MAX)

    def sign(self) -> int:
        n = self._nanos
        return (n > 0) - (n < 0)

    def wire_stable(self) -> bool:
        """Decoding this quantity's text gives it back: same value, format and
        text. True of every DecimalSI quantity printed with a suffix (below
        10^21, where printing switches to exponent form); a BinarySI one may
        print in DecimalSI (below 1024, or not whole) and come back changed."""
        return self._format is DECIMAL_SI and -_WIRE_STABLE < self._nanos < _WIRE_STABLE

    def is_zero(self) -> bool:
        return self._nanos == 0

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = _canonical(self._nanos, self._format)
            _set(self, "_text", text)  # a cache of a pure function of the value
        return text

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    # ------------------------------------------------------------------- comparison

    def __eq__(self, other: object) -> bool:
        n = _nanos_of(other)
        return NotImplemented if n is None else self._nanos == n

    def __ne__(self, other: object) -> bool:
        n = _nanos_of(other)
        return NotImplemented if n is None else self._nanos != n

    def __lt__(self, other: object) -> bool:
        n = _nanos_of(other)
        return NotImplemented if n is None else self._nanos < n

    def __le__(self, other: object) -> bool:
        n = _nanos_of(other)
        return NotImplemented if n is None else self._nanos <= n

    def __gt__(self, other: object) -> bool:
        n = _nanos_of(other)
        return NotImplemented if n is None else self._nanos > n

    def __ge__(self, other: object) -> bool:
        n = _nanos_of(other)
        return NotImplemented if n is None else self._nanos >= n

    def __hash__(self) -> int:
        # Whole quantities equal ints (Quantity("2") == 2), so they must hash like them.
        whole, rest = divmod(self._nanos, _NANO)
        return hash(whole) if rest == 0 else hash(self._nanos)

    # ------------------------------------------------------------------- arithmetic

    def __add__(self, other: object) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        # Kubernetes' Add keeps the receiver's format, except that a zero receiver
        # takes the other's (so 0 + 1Gi prints "1Gi").
        fmt = other._format if self._nanos == 0 else self._format
        return _make_checked(self._nanos + other._nanos, fmt)

    def __sub__(self, other: object) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other._format if self._nanos == 0 else self._format  # as Kubernetes' Sub
        return _make_checked(self._nanos - other._nanos, fmt)

    def __neg__(self) -> Quantity:
        return _make(-self._nanos, self._format, None)

    # ----------------------------------------------------------------- immutability

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"Quantity is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"Quantity is immutable: cannot delete {name!r}")

    def __copy__(self) -> Quantity:
        return self

    def __deepcopy__(self, memo: object) -> Quantity:
        return self

    def __reduce__(self) -> tuple[object, tuple[int, str, str | None]]:
        return (_make, (self._nanos, self._format, self._text))


_set = object.__setattr__


def _make(nanos: int, fmt: str, text: str | None) -> Quantity:
    q = object.__new__(Quantity)
    _set(q, "_nanos", nanos)
    _set(q, "_format", fmt)
    _set(q, "_text", text)
    return q


def _make_checked(nanos: int, fmt: str) -> Quantity:
    if not -_LIMIT_NANOS < nanos < _LIMIT_NANOS:
        # No str() here: Python refuses to print ints of over 4300 digits.
        _too_large(f"of about 10^{int((abs(nanos).bit_length() - 1) * 0.30103) - 9}")
    return _make(nanos, fmt, None)


def _nanos_of(other: object) -> int | None:
    if isinstance(other, Quantity):
        return other._nanos
    if isinstance(other, int) and not isinstance(other, bool):
        return other * _NANO
    return None


# --------------------------------------------------------------------------- parsing


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity:
    # Quantities repeat ("1", "500m", "16Gi"), so parsed ones are cached by text; they
    # are immutable, so sharing them is safe.
    if text.isdigit() and text.isascii() and len(text) <= 18:
        # Fast path for plain integers ("4", "16", "1000"), which Go's int64 path takes.
        digits = text.lstrip("0")
        if not digits:
            return _make(0, DECIMAL_SI, None)
        # Kubernetes keeps the input text as String() unless it ends in "000" (see below).
        return _make(int(digits) * _NANO, DECIMAL_SI, None if digits.endswith("000") else text)
    return _parse_general(text)


def _parse_general(text: str) -> Quantity:
    if not text:
        _syntax_error(text, "it is empty")
    m = _SCAN.fullmatch(text)
    if m is None:
        _syntax_error(text, "it is not a number followed by a suffix")
    sign, zeros, num, frac, suffix = m.groups()
    frac = frac or ""
    fmt, exp = _interpret_suffix(text, suffix)
    binary = fmt == BINARY_SI

    # Kubernetes parses in one of two ways, and they differ in more than speed: the
    # int64 path (taken for short numbers, quantity.go "precision >= 0") may keep the
    # input text as the String() output, and in it an empty integer part counts as "0".
    num_len = len(num) or 1
    frac_len = len(frac)
    if binary:
        # Whole binary numbers of few digits; int32(float32(exponent)*3/10) is exact here.
        fast = frac_len == 0 and 14 - num_len - exp * 3 // 10 >= 0
        shift = -frac_len  # value = int(num + frac) * 10^shift * 2^exp
        scale = 0
    else:
        # Kubernetes: the exponent is Go int32 arithmetic, so it wraps: "1e4294967296"
        # is 1 and "1e4294967295" is 0.1. The two paths even wrap differently.
        scale = _wrap32(exp - frac_len)
        fast = num_len + frac_len <= 18 and scale >= -9
        shift = scale if fast else -_wrap32(frac_len + _wrap32(-exp))

    if not fast and not (zeros or num or frac):
        # Kubernetes: "." or "Ki" parse as zero on the int64 path, but the inf.Dec path
        # needs a digit, so "Ei" or "e-10" fail.
        _syntax_error(text, "unable to parse numeric part of quantity")

    digits = (num + frac).lstrip("0")
    magnitude = _nano_magnitude(text, digits, shift, exp if binary else 0)
    if binary:
        magnitude = min(magnitude, _BINARY_CAP_NANOS)
        if 0 < magnitude < _NANO:
            fmt = DECIMAL_SI  # Kubernetes: a binary fraction below 1 becomes DecimalSI
    elif magnitude >= _LIMIT_NANOS:
        _too_large(_shown(text))  # 9.999...9 rounded up to a nano-unit past the bound

    # Kubernetes (quantity.go, ParseQuantity): on the int64 path String() returns the
    # input text itself when it "looks canonical" by a cheap test. The test ignores
    # signs, leading zeros, "E" versus "e", "e+3", and 3n fraction digits, so "+1",
    # "007", "1E3" and "1.500k" print back unchanged (an open upstream PR, #138166, would
    # stop "1.441" being kept). Kept texts always denote the same value.
    keep: str | None = None
    if fast:
        shifted = (num or "0") + frac
        if binary:
            if int(shifted) & 7:
                keep = text
        elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
            keep = text
    nanos = -magnitude if sign == "-" else magnitude
    return _make(nanos, fmt, keep)


def _interpret_suffix(text: str, suffix: str) -> tuple[str, int]:
    """The format and exponent (of 10, or of 2 for BinarySI) a suffix stands for."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return DECIMAL_SI, exp
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return BINARY_SI, exp
    if len(suffix) > 1 and suffix[0] in "eE":
        m = _EXPONENT.fullmatch(suffix, 1)
        if m is not None and len(m.group(1)) <= 19:  # more digits cannot fit int64
            value = int(suffix[1:])
            if _INT64_MIN <= value <= _INT64_MAX:
                return DECIMAL_EXPONENT, _wrap32(value)  # Kubernetes: int32(parsed)
    _syntax_error(text, f"unable to parse quantity's suffix {suffix!r}")


def _nano_magnitude(text: str, digits: str, shift: int, binary_exp: int) -> int:
    """|value| in nano-units, rounded up (away from zero) like Kubernetes does.

    The value is int(digits) * 10^shift * 2^binary_exp; ``digits`` has no leading zeros
    and may be very long. Multiplying by 2^b is multiplying by 10^b and dividing by 5^b,
    so the value in nano-units is y / 5^b with y = int(digits) * 10^(shift + 9 + b): a
    decimal shift of the digit string. The integer part of y and whether y has a nonzero
    fraction are read off the string, and then ceil(y / 5^b) is exact without ever
    converting the digits below the cut.
    """
    if not digits:
        return 0
    order = len(digits) + shift  # |value| < 10^order (times 2^b)
    if binary_exp:
        if order > 20:
            return _BINARY_CAP_NANOS  # >= 10^20 > 2^63 - 1: capped, no need to compute
    elif order > MAX_DIGITS:
        _too_large(_shown(text))
    t = shift + 9 + binary_exp
    if t >= 0:
        whole, inexact = int(digits) * 10**t, False
    else:
        cut = len(digits) + t
        if cut <= 0:
            whole, inexact = 0, True  # every digit is below the cut, and some are nonzero
        else:
            rest = digits[cut:]
            whole, inexact = int(digits[:cut]), rest.count("0") != len(rest)
    if binary_exp:
        q, r = divmod(whole, _POW5[binary_exp])
        return q + 1 if (inexact or r) else q
    return whole + 1 if inexact else whole


def _go_json_float(x: float) -> str:
    """The text Go's encoding/json writes for a float64 (encode.go, floatEncoder)."""
    if not math.isfinite(x):
        raise QuantityError(f"a quantity cannot be {x!r}")
    # repr() gives the shortest digits that round-trip, as does Go's FormatFloat(x, _, -1).
    sign_bit, digit_tuple, exp = Decimal(repr(x)).as_tuple()
    assert isinstance(exp, int)  # finite
    all_digits = "".join(map(str, digit_tuple))
    ds = all_digits.rstrip("0")
    sign = "-" if sign_bit else ""
    if not ds:
        return sign + "0"
    # The value is 0.ds * 10^point: point is where the decimal point sits in ds.
    point = len(all_digits) + exp
    a = abs(x)
    if a < 1e-6 or a >= 1e21:
        # 'e' format, then json's clean-up of "e-07" to "e-7".
        e10 = point - 1
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{sign}{mant}e-{-e10}" if e10 < 0 else f"{sign}{mant}e+{e10:02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{ds}"
    if point >= len(ds):
        return sign + ds + "0" * (point - len(ds))
    return f"{sign}{ds[:point]}.{ds[point:]}"


# -------------------------------------------------------------------------- printing


def _canonical(nanos: int, fmt: str) -> str:
    """Kubernetes' CanonicalizeBytes: no fraction digits, the largest suffix that is exact."""
    if nanos == 0:
        return "0"
    sign = "-" if nanos < 0 else ""
    mag = -nanos if nanos < 0 else nanos
    if fmt == BINARY_SI:
        units, rest = divmod(mag, _NANO)
        if units >= 1024 and rest == 0:
            power = 0
            while units % 1024 == 0:
                units //= 1024
                power += 1
            if power < len(_BINARY_NAMES):
                return f"{sign}{units}{_BINARY_NAMES[power]}"
            # Beyond "Ei": as Kubernetes since kubernetes/kubernetes#140459 (older
            # releases dropped the suffix, printing 2^70 as "1"), decimal exponent form.
            fmt = DECIMAL_EXPONENT
        else:
            # Kubernetes: |x| < 1024 or not whole prints in DecimalSI rather than round.
            fmt = DECIMAL_SI
    # value = mag * 10^-9: drop trailing zeros three at a time so the exponent stays a
    # multiple of 3 (Kubernetes drops them all, then puts back up to two).
    text = str(mag)
    zeros = len(text) - len(text.rstrip("0"))
    zeros -= zeros % 3
    mantissa = text[: len(text) - zeros]
    exp10 = zeros - 9
    if fmt == DECIMAL_SI:
        name = _DECIMAL_NAMES.get(exp10)
        if name is not None:
            return sign + mantissa + name
        # Past "E": decimal exponent form, as kubernetes/kubernetes#140459 fixed it
        # (before, 10^21 printed as "1").
    return f"{sign}{mantissa}e{exp10}" if exp10 else sign + mantissa
