"""Tests for kuota.api.quantity against Kubernetes' own quantity tests.

The tables come from apimachinery's pkg/api/resource/quantity_test.go (the Go test
named above each one). The "Kubernetes quirk" tables were checked against the real
ParseQuantity/String() compiled from apimachinery. The property tests check parsing,
printing, rounding and arithmetic against exact ``fractions.Fraction`` arithmetic.
"""

from __future__ import annotations

import copy
import math
import pickle
import re
from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kuota.api.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    MAX_DIGITS,
    QUANTITY_REGEX,
    Quantity,
    QuantityError,
)

DSI, BSI, DEXP = DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT
NANO = 10**9
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
CAP = INT64_MAX * NANO  # BinarySI input is capped at 2^63-1


def nanos(mantissa: int, exponent: int) -> int:
    """Go's decQuantity(mantissa, exponent, _) in nano-units (must be whole)."""
    value = Fraction(mantissa) * Fraction(10) ** (exponent + 9)
    assert value.denominator == 1
    return int(value)


def dec_nanos(text: str) -> int:
    """An exact decimal string ("-1000000000000000000.1") in nano-units."""
    value = Fraction(text) * NANO
    assert value.denominator == 1
    return int(value)


def away(numerator: int, denominator: int) -> int:
    """numerator / denominator rounded away from zero (Kubernetes' "round up")."""
    q = -(-abs(numerator) // denominator)
    return q if numerator >= 0 else -q


# --------------------------------------------------------------- TestQuantityParse

PARSE_TABLE = [
    ("0", 0, DSI),
    ("0n", 0, DSI),
    ("0u", 0, DSI),
    ("0m", 0, DSI),
    ("0Ki", 0, BSI),
    ("0k", 0, DSI),
    ("0Mi", 0, BSI),
    ("0M", 0, DSI),
    ("0Gi", 0, BSI),
    ("0G", 0, DSI),
    ("0Ti", 0, BSI),
    ("0T", 0, DSI),
    # Quantity less numbers are allowed
    ("1", nanos(1, 0), DSI),
    # Binary suffixes
    ("1Ki", nanos(1024, 0), BSI),
    ("8Ki", nanos(8 * 1024, 0), BSI),
    ("7Mi", nanos(7 * 1024**2, 0), BSI),
    ("6Gi", nanos(6 * 1024**3, 0), BSI),
    ("5Ti", nanos(5 * 1024**4, 0), BSI),
    ("4Pi", nanos(4 * 1024**5, 0), BSI),
    ("3Ei", nanos(3 * 1024**6, 0), BSI),
    ("10Ti", nanos(10 * 1024**4, 0), BSI),
    ("100Ti", nanos(100 * 1024**4, 0), BSI),
    # Decimal suffixes
    ("5n", nanos(5, -9), DSI),
    ("4u", nanos(4, -6), DSI),
    ("3m", nanos(3, -3), DSI),
    ("9", nanos(9, 0), DSI),
    ("8k", nanos(8, 3), DSI),
    ("50k", nanos(5, 4), DSI),
    ("7M", nanos(7, 6), DSI),
    ("6G", nanos(6, 9), DSI),
    ("5T", nanos(5, 12), DSI),
    ("40T", nanos(4, 13), DSI),
    ("300T", nanos(3, 14), DSI),
    ("2P", nanos(2, 15), DSI),
    ("1E", nanos(1, 18), DSI),
    # Decimal exponents
    ("1E-3", nanos(1, -3), DEXP),
    ("1e3", nanos(1, 3), DEXP),
    ("1E6", nanos(1, 6), DEXP),
    ("1e9", nanos(1, 9), DEXP),
    ("1E12", nanos(1, 12), DEXP),
    ("1e15", nanos(1, 15), DEXP),
    ("1E18", nanos(1, 18), DEXP),
    # Nonstandard but still parsable
    ("1e14", nanos(1, 14), DEXP),
    ("1e13", nanos(1, 13), DEXP),
    ("100.035k", nanos(100035, 0), DSI),
    # Things that look like floating point
    ("0.001", nanos(1, -3), DSI),
    ("0.0005k", nanos(5, -1), DSI),
    ("0.005", nanos(5, -3), DSI),
    ("0.05", nanos(5, -2), DSI),
    ("0.5", nanos(5, -1), DSI),
    ("0.00050k", nanos(5, -1), DSI),
    ("0.00500", nanos(5, -3), DSI),
    ("0.05000", nanos(5, -2), DSI),
    ("0.50000", nanos(5, -1), DSI),
    ("0.5e0", nanos(5, -1), DEXP),
    ("0.5e-1", nanos(5, -2), DEXP),
    ("0.5e-2", nanos(5, -3), DEXP),
    ("10.035M", nanos(10035, 3), DSI),
    ("1.2e3", nanos(12, 2), DEXP),
    ("1.3E+6", nanos(13, 5), DEXP),
    ("1.40e9", nanos(14, 8), DEXP),
    ("1.53E12", nanos(153, 10), DEXP),
    ("1.6e15", nanos(16, 14), DEXP),
    ("1.7E18", nanos(17, 17), DEXP),
    ("9.01", nanos(901, -2), DSI),
    ("8.1k", nanos(81, 2), DSI),
    ("7.123456M", nanos(7123456, 0), DSI),
    ("6.987654321G", nanos(6987654321, 0), DSI),
    ("5.444T", nanos(5444, 9), DSI),
    ("40.1T", nanos(401, 11), DSI),
    ("300.2T", nanos(3002, 11), DSI),
    ("2.5P", nanos(25, 14), DSI),
    ("1.01E", nanos(101, 16), DSI),
    # Things that saturate/round
    ("3.001n", nanos(4, -9), DSI),
    ("1.1E-9", nanos(2, -9), DEXP),
    ("0.0000000001", nanos(1, -9), DSI),
    ("0.0000000005", nanos(1, -9), DSI),
    ("0.00000000050", nanos(1, -9), DSI),
    ("0.5e-9", nanos(1, -9), DEXP),
    ("0.9n", nanos(1, -9), DSI),
    ("0.00000012345", nanos(124, -9), DSI),
    ("0.00000012354", nanos(124, -9), DSI),
    ("9Ei", CAP, BSI),
    ("9223372036854775807Ki", CAP, BSI),
    ("12E", nanos(12, 18), DSI),
    # We'll accept fractional binary stuff, too.
    ("100.035Ki", nanos(10243584, -2), BSI),
    ("0.5Mi", nanos(512 * 1024, 0), BSI),
    ("0.05Gi", nanos(536870912, -1), BSI),
    ("0.025Ti", nanos(274877906944, -1), BSI),
    # Things written by trolls
    ("0.000000000001Ki", nanos(2, -9), DSI),  # rounds up, changes format
    (".001", nanos(1, -3), DSI),
    (".0001k", nanos(100, -3), DSI),
    ("1.", nanos(1, 0), DSI),
    ("1.G", nanos(1, 9), DSI),
]


@pytest.mark.parametrize(("text", "expect_nanos", "fmt"), PARSE_TABLE)
def test_parse_table(text: str, expect_nanos: int, fmt: str) -> None:
    q = Quantity.parse(text)
    assert (q.nanos, q.format) == (expect_nanos, fmt)


@pytest.mark.parametrize(("text", "expect_nanos", "fmt"), PARSE_TABLE)
def test_parse_table_negated(text: str, expect_nanos: int, fmt: str) -> None:
    q = Quantity.parse("-" + text)
    assert (q.nanos, q.format) == (-expect_nanos, fmt)


@pytest.mark.parametrize(("text", "expect_nanos", "fmt"), PARSE_TABLE)
def test_parse_table_explicit_plus(text: str, expect_nanos: int, fmt: str) -> None:
    q = Quantity.parse("+" + text)
    assert (q.nanos, q.format) == (expect_nanos, fmt)


INVALID = [
    # TestQuantityParse's invalid list
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    " 1",  # whitespace is forbidden
    "1 ",
    # TestQuantityParseNonNumericPanic, TestQuantityValueSet
    "Non-Numeric",
    "invalid",
    # more junk Kubernetes rejects
    "",
    "1.2.3",
    "abc",
    "1Kb",
    "--1",
    "1e",
    "1E+",
    "1e-",
    "1EE",
    "1e1e1",
    "1e3.5",
    "1m3",
    "1-",
    "1..",
    "..",
    "\t1",
    "1\n",
    "1\u0663",  # a Unicode digit is not a digit here
    "\uff11",
    "1e9223372036854775808",  # the exponent must fit int64
    "1e-9223372036854775809",
    "Ei",  # no digits: fine for Kubernetes' int64 path ("Ki" is 0), not its inf.Dec path
    "Pi",
    "e-10",
    ".e-10",
    "-e-12",
]


@pytest.mark.parametrize("text", INVALID)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        Quantity.parse(text)
    message = str(info.value)
    assert repr(text) in message
    assert QUANTITY_REGEX in message


def test_parse_rejects_non_strings() -> None:
    with pytest.raises(QuantityError, match="must be a str"):
        Quantity.parse(1)  # type: ignore[arg-type]


def test_quantity_error_is_a_value_error() -> None:
    assert issubclass(QuantityError, ValueError)


def test_error_message_shortens_huge_input() -> None:
    with pytest.raises(QuantityError) as info:
        Quantity.parse("x" * 100_000)
    assert len(str(info.value)) < 400
    assert "100000 characters" in str(info.value)


# ------------------------------------------------------------- TestQuantityString

# (mantissa, exponent, format, String(), an alternate spelling that canonicalizes to it)
STRING_TABLE = [
    (1024**3, 0, BSI, "1Gi", "1024Mi"),
    (300 * 1024**2, 0, BSI, "300Mi", "307200Ki"),
    (6 * 1024, 0, BSI, "6Ki", ""),
    (1001 * 1024**3, 0, BSI, "1001Gi", "1025024Mi"),
    (1024**4, 0, BSI, "1Ti", "1024Gi"),
    (5, 0, BSI, "5", "5000m"),
    (500, -3, BSI, "500m", "0.5"),
    (1, 9, DSI, "1G", "1000M"),
    (1000, 6, DSI, "1G", "0.001T"),
    (1000000, 3, DSI, "1G", ""),
    (1000000000, 0, DSI, "1G", ""),
    (1, -3, DSI, "1m", "1000u"),
    (80, -3, DSI, "80m", ""),
    (1080, -3, DSI, "1080m", "1.08"),
    (108, -2, DSI, "1080m", "1080000000n"),
    (10800, -4, DSI, "1080m", ""),
    (300, 6, DSI, "300M", ""),
    (1, 12, DSI, "1T", ""),
    (1234567, 6, DSI, "1234567M", ""),
    (1234567, -3, BSI, "1234567m", ""),
    (3, 3, DSI, "3k", ""),
    (1025, 0, BSI, "1025", ""),
    (0, 0, DSI, "0", ""),
    (0, 0, BSI, "0", ""),
    (1, 9, DEXP, "1e9", ".001e12"),
    (1, -3, DEXP, "1e-3", "0.001e0"),
    (1, -9, DEXP, "1e-9", "1000e-12"),
    (80, -3, DEXP, "80e-3", ""),
    (300, 6, DEXP, "300e6", ""),
    (1, 12, DEXP, "1e12", ""),
    (1, 3, DEXP, "1e3", ""),
    (3, 3, DEXP, "3e3", ""),
    (3, 3, DSI, "3k", ""),
    (0, 0, DEXP, "0", "00"),
    (1, -9, DSI, "1n", ""),
    (80, -9, DSI, "80n", ""),
    (1080, -9, DSI, "1080n", ""),
    (108, -8, DSI, "1080n", ""),
    (10800, -10, DSI, "1080n", ""),
    (1, -6, DSI, "1u", ""),
    (80, -6, DSI, "80u", ""),
    (1080, -6, DSI, "1080u", ""),
]


@pytest.mark.parametrize(("mantissa", "exponent", "fmt", "expect", "alternate"), STRING_TABLE)
def test_string_table(mantissa: int, exponent: int, fmt: str, expect: str, alternate: str) -> None:
    q = Quantity.from_nanos(nanos(mantissa, exponent), fmt)
    assert str(q) == expect
    assert str(Quantity.parse(expect)) == expect
    assert Quantity.parse(expect) == q
    if alternate:
        assert str(Quantity.parse(alternate)) == expect
    if mantissa:
        assert str(-q) == "-" + expect  # never "-0"


PARSE_EMIT = [
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
]


@pytest.mark.parametrize(("text", "expect"), PARSE_EMIT)
def test_parse_emit(text: str, expect: str) -> None:
    """TestQuantityParseEmit."""
    assert str(Quantity.parse(text)) == expect
    assert str(Quantity.parse("-" + text)) == "-" + expect


# -------------------------------------------------- TestParseQuantity (int64 edges)


def _pair(text: str, value: str, canonical: str | None = None) -> list[tuple[str, str, str]]:
    """The case and its negation: (input, exact value, String())."""
    shown = canonical or text
    return [(text, value, shown), ("-" + text, "-" + value, "-" + shown)]


INT64_EDGES = [
    "9223372036854775806",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "-9223372036854775808",
    "-9223372036854775807",
]
BOUNDARY_TABLE = [
    # min/max 18 digits
    *_pair("999999999999999999", "999999999999999999"),
    *_pair("999999999999999999.0", "999999999999999999", "999999999999999999"),
    *_pair("999999999999999999.1", "999999999999999999.1", "999999999999999999100m"),
    # min/max 19 digits
    *_pair("9999999999999999999", "9999999999999999999"),
    *_pair("1E", "1000000000000000000"),
    *_pair("1000000000000000000", "1000000000000000000", "1E"),
    *_pair("9999999999999999999.0", "9999999999999999999", "9999999999999999999"),
    *_pair("1.0E", "1000000000000000000", "1E"),
    *_pair("1000000000000000000.0", "1000000000000000000", "1E"),
    *_pair("9999999999999999999000m", "9999999999999999999", "9999999999999999999"),
    *_pair("9999999999999999999.1", "9999999999999999999.1", "9999999999999999999100m"),
    *_pair("1.0000000000000000001E", "1000000000000000000.1", "1000000000000000000100m"),
    *_pair("1000000000000000000.1", "1000000000000000000.1", "1000000000000000000100m"),
    *_pair("1.000000000000000001E", "1000000000000000001", "1000000000000000001"),
    *_pair("1000000000000000001", "1000000000000000001"),
    # min/max 20 digits
    *_pair("10E", "10000000000000000000"),
    *_pair("10000000000000000000", "10000000000000000000", "10E"),
    *_pair("10.0E", "10000000000000000000", "10E"),
    *_pair("10000000000000000000.0", "10000000000000000000", "10E"),
    *_pair("10000000000000000000000m", "10000000000000000000", "10E"),
    *_pair("10.0000000000000000001E", "10000000000000000000.1", "10000000000000000000100m"),
    *_pair("10000000000000000000.1", "10000000000000000000.1", "10000000000000000000100m"),
    *_pair("10.000000000000000001E", "10000000000000000001", "10000000000000000001"),
    *_pair("10000000000000000001", "10000000000000000001"),
    # min/max int64 - 1, min/max int64, min/max int64 + 1
    *[
        case
        for m in INT64_EDGES
        for case in (
            (m, m, m),
            (m + ".0", m, m),
            (m + "000m", m, m),
            (m + ".1", m + ".1", m + "100m"),
        )
    ],
]


@pytest.mark.parametrize(("text", "value", "canonical"), BOUNDARY_TABLE)
def test_int64_boundaries(text: str, value: str, canonical: str) -> None:
    """TestParseQuantity: exact values and String() around 18-20 digits and int64."""
    q = Quantity.parse(text)
    assert q.nanos == dec_nanos(value)
    assert str(q) == canonical
    assert q.format == DSI


# ---------------------------------------------------------- constructors and values


@pytest.mark.parametrize(
    ("milli", "fmt", "expect", "exact"),
    [  # TestMilliNewSet
        (1, DSI, "1m", True),
        (1000, DSI, "1", True),
        (1234000, DSI, "1234", True),
        (1024, BSI, "1024m", False),  # Format changes
        (1024 * 1024, BSI, "1048576m", False),  # Format changes
    ],
)
def test_from_milli(milli: int, fmt: str, expect: str, exact: bool) -> None:
    q = Quantity.from_milli(milli, fmt)
    assert (str(q), q.format, q.nanos) == (expect, fmt, milli * 10**6)
    if exact:
        assert Quantity.parse(str(q)).milli_value() == milli


@pytest.mark.parametrize(
    ("value", "fmt", "expect"),
    [  # TestNewSet
        (1, DSI, "1"),
        (1000, DSI, "1k"),
        (1234000, DSI, "1234k"),
        (1024, BSI, "1Ki"),
        (1024 * 1024, BSI, "1Mi"),
        (1000000, DEXP, "1e6"),
    ],
)
def test_from_int(value: int, fmt: str, expect: str) -> None:
    q = Quantity.from_int(value, fmt)
    assert (str(q), q.format, q.nanos) == (expect, fmt, value * NANO)
    assert Quantity.parse(str(q)).value() == value


@pytest.mark.parametrize(
    ("value", "scale", "expect"),
    [  # TestNewScaledSet (scale is the power of ten of one unit of value)
        (1, -9, "1n"),
        (1000, -9, "1u"),
        (1, -6, "1u"),
        (1000, -6, "1m"),
        (1, -3, "1m"),
        (1000, -3, "1"),
        (1, 0, "1"),
        (0, -9, "0"),
        (0, -6, "0"),
        (0, -3, "0"),
        (0, 0, "0"),
    ],
)
def test_from_nanos(value: int, scale: int, expect: str) -> None:
    q = Quantity.from_nanos(value * 10 ** (scale + 9))
    assert str(q) == expect
    back = Quantity.parse(expect)
    assert back == q
    assert back.nanos // 10 ** (scale + 9) == value


@pytest.mark.parametrize(
    ("from_scale", "expect_nanos", "expect_milli", "expect_value"),
    [  # TestScaledValue: NewScaledQuantity(1, from).ScaledValue(Nano | Milli | 0)
        (-9, 1, 1, 1),
        (-6, 1000, 1, 1),
        (-3, 1000 * 1000, 1, 1),
        (0, 10**9, 1000, 1),
        (2, 10**11, 100 * 1000, 100),
    ],
)
def test_scaled_values(
    from_scale: int, expect_nanos: int, expect_milli: int, expect_value: int
) -> None:
    q = Quantity.from_nanos(10 ** (from_scale + 9))
    assert (q.nanos, q.milli_value(), q.value()) == (expect_nanos, expect_milli, expect_value)


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("0", 0, 0),
        ("1.5", 2, 1500),
        ("-1.5", -2, -1500),  # away from zero, as the int64 path of Go's Value()
        ("0.1", 1, 100),
        ("-0.1", -1, -100),
        ("1n", 1, 1),
        ("-1n", -1, -1),
        ("1.0001m", 1, 2),
        ("9.01", 10, 9010),
        ("-9.01", -10, -9010),
        ("1Ki", 1024, 1024000),
        ("1Mi", 1024 * 1024, 1024 * 1024 * 1000),  # TestQuantityValueSet
        ("1.1Ki", 1127, 1126400),
        ("1E", 10**18, 10**21),  # exact: Kubernetes' MilliValue overflows int64 here
        ("9Ei", INT64_MAX, INT64_MAX * 1000),
        ("1e30", 10**30, 10**33),
    ],
)
def test_value_and_milli_value(text: str, value: int, milli: int) -> None:
    q = Quantity.parse(text)
    assert (q.value(), q.milli_value()) == (value, milli)


@pytest.mark.parametrize(
    ("text", "int64_value", "int64_milli"),
    [
        ("1E", 10**18, INT64_MAX),
        ("-1E", -(10**18), INT64_MIN),
        ("10E", INT64_MAX, INT64_MAX),
        ("-10E", INT64_MIN, INT64_MIN),
        ("9223372036854775807", INT64_MAX, INT64_MAX),
        ("-9223372036854775808", INT64_MIN, INT64_MIN),
        ("-9223372036854775809", INT64_MIN, INT64_MIN),
        ("9223372036854775.807", 9223372036854776, INT64_MAX),
        ("9223372036854775.808", 9223372036854776, INT64_MAX),
        ("1500m", 2, 1500),
    ],
)
def test_int64_saturation(text: str, int64_value: int, int64_milli: int) -> None:
    q = Quantity.parse(text)
    assert (q.int64_value(), q.int64_milli_value()) == (int64_value, int64_milli)


def test_unknown_format_is_rejected() -> None:
    # Kubernetes silently prints an unknown Format as DecimalExponent; kuota refuses it.
    for build in (Quantity.from_int, Quantity.from_milli, Quantity.from_nanos):
        with pytest.raises(QuantityError, match="unknown quantity format"):
            build(1, "invalidFormatDefaultsToExponent")


@pytest.mark.parametrize("bad", [True, 1.0, "1", None])
def test_constructors_need_ints(bad: object) -> None:
    with pytest.raises(QuantityError, match="must be an int"):
        Quantity.from_int(bad)  # type: ignore[arg-type]


# ----------------------------------------------------------- Kubernetes' surprises

# Each checked against apimachinery's ParseQuantity and Quantity.String().
KUBERNETES_QUIRKS = [
    # ParseQuantity keeps the input as String() when a cheap test calls it canonical:
    # signs, leading zeros, "E" for "e", "e+3", and 3n fraction digits pass the test.
    ("+1", "+1", 10**9, DSI),
    ("007", "007", 7 * NANO, DSI),
    ("1.500k", "1.500k", 1500 * NANO, DSI),
    ("1.441", "1.441", 1441 * 10**6, DSI),
    ("1E3", "1E3", 1000 * NANO, DEXP),
    ("1e+3", "1e+3", 1000 * NANO, DEXP),
    ("1e+0", "1e+0", NANO, DEXP),
    ("1.e3", "1.e3", 1000 * NANO, DEXP),
    ("1.Ki", "1.Ki", 1024 * NANO, BSI),
    ("+1Ki", "+1Ki", 1024 * NANO, BSI),
    ("1025Ki", "1025Ki", 1025 * 1024 * NANO, BSI),
    # ... and not otherwise.
    ("1000", "1k", 1000 * NANO, DSI),
    ("1.5k", "1500", 1500 * NANO, DSI),
    ("1000e-0", "1e3", 1000 * NANO, DEXP),
    ("2048Ki", "2Mi", 2 * 1024**2 * NANO, BSI),
    ("01.10Ki", "1126400m", 1126400 * 10**6, BSI),  # BinarySI, printed as DecimalSI
    # Text without digits is zero on Go's int64 path ("Ei", "e-10" fail on the other).
    (".", "0", 0, DSI),
    ("+", "0", 0, DSI),
    ("-", "0", 0, DSI),
    ("-.", "0", 0, DSI),
    ("m", "0", 0, DSI),
    ("Ki", "0", 0, BSI),
    ("Ti", "0", 0, BSI),
    ("-.Ki", "0", 0, BSI),
    ("e5", "0", 0, DEXP),
    ("e-9", "0", 0, DEXP),
    ("00e-10", "0", 0, DEXP),
    # The exponent is an int32 in Go and wraps around.
    ("1e4294967296", "1e4294967296", NANO, DEXP),
    ("1e4294967295", "100e-3", NANO // 10, DEXP),
    ("-1E4294967299", "-1E4294967299", -1000 * NANO, DEXP),
    ("1e9223372036854775807", "100e-3", NANO // 10, DEXP),
    ("1e-9223372036854775808", "1e-9223372036854775808", NANO, DEXP),
    # BinarySI input is capped at 2^63-1; a binary fraction below 1 becomes DecimalSI.
    ("8Ei", "9223372036854775807", CAP, BSI),
    ("-8Ei", "-9223372036854775807", -CAP, BSI),
    ("7.99999999999999999999Ei", "9223372036854775807", CAP, BSI),
    ("0.5Ki", "512", 512 * NANO, BSI),
    ("0.0001Ki", "102400u", 102400 * 1000, DSI),
    # Below a nano-unit rounds up, away from zero.
    ("1e-20", "1e-9", 1, DEXP),
    ("-1e-20", "-1e-9", -1, DEXP),
    ("-0.5n", "-1n", -1, DSI),
    ("0.1m", "100u", 100_000, DSI),
]


@pytest.mark.parametrize(("text", "shown", "expect_nanos", "fmt"), KUBERNETES_QUIRKS)
def test_kubernetes_quirks(text: str, shown: str, expect_nanos: int, fmt: str) -> None:
    q = Quantity.parse(text)
    assert (str(q), q.nanos, q.format) == (shown, expect_nanos, fmt)


def test_derived_quantities_print_canonically() -> None:
    # A kept input text is the parsed quantity's only: arithmetic prints canonically.
    q = Quantity.parse("1.500k")
    assert str(-q) == "-1500"
    assert str(q + Quantity.parse("0")) == "1500"
    assert str(-Quantity.parse("+1")) == "-1"


# ----------------------------------------------------------------------- huge input


def test_huge_decimal_is_rejected_quickly() -> None:
    for text in ("1e999999999", "9" * 100_000, "1" + "0" * MAX_DIGITS, "1e1000", "1000e997"):
        with pytest.raises(QuantityError, match="too large"):
            Quantity.parse(text)


def test_largest_decimal_is_accepted() -> None:
    assert Quantity.parse("9" * MAX_DIGITS).nanos == (10**MAX_DIGITS - 1) * NANO
    assert str(Quantity.parse("1e999")) == "1e999"
    with pytest.raises(QuantityError, match="too large"):  # 10^1000 after rounding up
        Quantity.parse("9" * MAX_DIGITS + ".9999999999")


def test_suffix_past_exa_prints_as_exponent() -> None:
    # Before kubernetes/kubernetes#140459 Go printed these as "1": the suffix was lost.
    assert str(Quantity.parse("1000E")) == "1e21"
    assert str(Quantity.parse("-1000000E")) == "-1e24"
    assert str(Quantity.from_int(10**30)) == "1e30"
    assert str(Quantity.from_int(1024**7, BSI)) == "1180591620717411303424"
    assert str(Quantity.from_int(10**70, BSI)) == "10e69"
    assert Quantity.parse(str(Quantity.from_int(1024**7, BSI))) == 1024**7


def test_huge_binary_is_capped_not_rejected() -> None:
    q = Quantity.parse("9" * 100_000 + "Ki")
    assert (q.nanos, q.format) == (CAP, BSI)


def test_long_fractions_round_without_big_numbers() -> None:
    tiny = "0." + "0" * 100_000 + "1"
    assert str(Quantity.parse(tiny)) == "1n"
    assert str(Quantity.parse("-" + tiny)) == "-1n"
    assert Quantity.parse("0." + "0" * 100_000).nanos == 0
    assert str(Quantity.parse("1." + "0" * 100_000 + "1Ki")) == "1024000000001n"
    assert str(Quantity.parse("1e-999999999")) == "1e-9"


def test_junk_after_long_digits_fails_fast() -> None:
    # Would backtrack quadratically with an ordinary regular expression.
    for text in ("0" * 100_000 + "x", "9" * 100_000 + ".1.", "1e" + "9" * 100_000):
        with pytest.raises(QuantityError):
            Quantity.parse(text)


def test_arithmetic_stays_bounded() -> None:
    big = Quantity.parse("9" * MAX_DIGITS)
    with pytest.raises(QuantityError, match="too large"):
        big + big
    with pytest.raises(QuantityError, match="too large"):
        Quantity.from_nanos(10 ** (MAX_DIGITS + 9))
    with pytest.raises(QuantityError, match="too large"):
        Quantity.from_nanos(-(10**5000))


# ------------------------------------------------------------------------ from_value


@pytest.mark.parametrize(
    ("number", "shown", "fmt"),
    [  # Go: json.Marshal(float64) then UnmarshalJSON, as a YAML number travels
        (1.5, "1500m", DSI),
        (1e3, "1k", DSI),
        (0.1, "100m", DSI),
        (0.3, "300m", DSI),
        (100.0, "100", DSI),
        (-2.5, "-2500m", DSI),
        (0.0, "0", DSI),
        (-0.0, "0", DSI),
        (1e-6, "1u", DSI),
        (1e-5, "10u", DSI),
        (1e16, "10P", DSI),
        (1e20, "100E", DSI),
        (123456789.125, "123456789.125", DSI),
        (1e21, "1e+21", DEXP),
        (1e-7, "100e-9", DEXP),
        (2.5e-9, "3e-9", DEXP),
        (-1e-10, "-1e-9", DEXP),
        (5e-324, "1e-9", DEXP),
        (1.5e300, "1500e297", DEXP),
        (1.7976931348623157e308, "179769313486231570e291", DEXP),
    ],
)
def test_from_value_float(number: float, shown: str, fmt: str) -> None:
    q = Quantity.from_value(number)
    assert (str(q), q.format) == (shown, fmt)


@pytest.mark.parametrize(
    ("number", "shown"),
    [
        (4, "4"),
        (1000, "1k"),
        (1200, "1200"),
        (-5, "-5"),
        (10**18, "1E"),
        (2**63, "9223372036854775808"),
        (10**30, "1e30"),
    ],
)
def test_from_value_int(number: int, shown: str) -> None:
    q = Quantity.from_value(number)
    assert (str(q), q.nanos, q.format) == (shown, number * NANO, DSI)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("500m", "500m"),
        (" 1", "1"),  # TestJSONWhitespace
        ("1 ", "1"),
        (" -1", "-1"),
        ("\u00a02Gi\u3000", "2Gi"),  # raw Unicode spaces reach Go's TrimSpace
        ("\u20051\u0085", "1"),
    ],
)
def test_from_value_str_trims_like_unmarshal_json(text: str, shown: str) -> None:
    assert str(Quantity.from_value(text)) == shown


@pytest.mark.parametrize(
    "text",
    # json.Marshal escapes these, so Kubernetes' TrimSpace never sees them.
    ["\t1", "1\n", "\r1", "\u20281", "\u000b1", "\u200b1", "\ufeff1", "", " "],
)
def test_from_value_str_keeps_escaped_whitespace(text: str) -> None:
    with pytest.raises(QuantityError):
        Quantity.from_value(text)


@pytest.mark.parametrize(
    "bad",
    [
        True,
        False,
        None,
        [],
        {},
        1j,
        b"1",
        float("nan"),
        float("inf"),
        -math.inf,
        2 ** (5 * MAX_DIGITS),
    ],
)
def test_from_value_rejects(bad: object) -> None:
    with pytest.raises(QuantityError):
        Quantity.from_value(bad)


def test_constructor_is_from_value() -> None:
    assert Quantity("500m") == Quantity.parse("500m")
    assert Quantity(2) == 2
    assert Quantity(1.5) == Quantity.parse("1500m")
    with pytest.raises(QuantityError):
        Quantity(None)


# --------------------------------------------------------- comparison and arithmetic


@pytest.mark.parametrize(
    ("x", "y", "cmp"),
    [  # TestQuantityCmp
        ("0", "0", 0),
        ("100m", "50m", 1),
        ("50m", "100m", -1),
        ("10000T", "100Gi", 1),
        ("1", "1000m", 0),
        ("1Ki", "1024", 0),
        ("1e3", "1k", 0),
        ("-1n", "0", -1),
    ],
)
def test_compare(x: str, y: str, cmp: int) -> None:
    a, b = Quantity.parse(x), Quantity.parse(y)
    assert ((a > b) - (a < b), (b > a) - (b < a)) == (cmp, -cmp)
    assert (a == b, a != b, a <= b, a >= b) == (cmp == 0, cmp != 0, cmp <= 0, cmp >= 0)


@pytest.mark.parametrize(
    ("a", "b", "cmp"),
    [  # TestQuantityCmpInt64AndDec, the cases at nano precision or coarser
        (nanos(901, -2), nanos(901, -2), 0),
        (nanos(90, -1), nanos(901, -2), -1),
        (nanos(901, -2), nanos(900, -2), 1),
        (nanos(0, 1), nanos(0, -1), 0),
        (nanos(800, -3), nanos(1, 0), -1),
        (nanos(800, -3), nanos(79, -2), 1),
        (nanos(INT64_MAX, 0), nanos(1, -1), 1),
        (nanos(INT64_MAX, 1), nanos(1, 0), 1),
        (nanos(INT64_MAX, 1), nanos(1, 1), 1),
        (nanos(INT64_MIN, 0), nanos(0, 0), -1),
        (nanos(10**18, -17), nanos(1, 1), 0),
        (nanos(10**18, -17), nanos(-10, 0), 1),
        (nanos(-(10**18), -17), nanos(-10, 0), 0),
        (nanos(10**18 + 10**8, -17), nanos(1, 1), 1),
        (nanos(10**18 - 10**8, -17), nanos(1, 1), -1),
    ],
)
def test_compare_across_scales(a: int, b: int, cmp: int) -> None:
    qa, qb = Quantity.from_nanos(a), Quantity.from_nanos(b)
    assert ((qa > qb) - (qa < qb), (qb > qa) - (qb < qa)) == (cmp, -cmp)


def test_equality_and_hash_match_ints() -> None:
    one = Quantity.parse("1")
    assert one == Quantity.parse("1000m") == 1
    assert 1 == one and one != 2 and one < 2 and 0 < one  # noqa: SIM300
    assert hash(one) == hash(Quantity.parse("1000m")) == hash(1)
    assert len({one, Quantity.parse("1000m"), Quantity.parse("1e0"), 1}) == 1
    assert {Quantity.parse("500m"): "x"}[Quantity.parse("0.5")] == "x"


def test_comparison_with_other_types() -> None:
    one = Quantity.parse("1")
    assert one != "1"
    assert one != 1.0  # floats are not compared: only exact values
    assert one != True  # noqa: E712
    with pytest.raises(TypeError):
        one < "2"  # noqa: B015
    with pytest.raises(TypeError):
        one + 1  # type: ignore[operator]


@pytest.mark.parametrize(
    ("a", "b", "expect_nanos", "fmt"),
    [  # TestAdd
        ((10, DSI), (10, DSI), 20 * NANO, DSI),
        ((10, DSI), (1, BSI), 11 * NANO, DSI),
        ((10, BSI), (1, DSI), 11 * NANO, BSI),
        ((0, DSI), (50, DSI), 50 * NANO, DSI),
        ((50, DSI), (0, DSI), 50 * NANO, DSI),
        ((0, DSI), (0, DSI), 0, DSI),
        ((0, DSI), (1024, BSI), 1024 * NANO, BSI),  # a zero receiver takes the format
    ],
)
def test_add(a: tuple[int, str], b: tuple[int, str], expect_nanos: int, fmt: str) -> None:
    q = Quantity.from_int(*a) + Quantity.from_int(*b)
    assert (q.nanos, q.format) == (expect_nanos, fmt)


@pytest.mark.parametrize(
    ("a", "b", "expect_nanos", "fmt"),
    [  # TestSub
        ((10, DSI), (10, DSI), 0, DSI),
        ((10, DSI), (1, BSI), 9 * NANO, DSI),
        ((10, BSI), (1, DSI), 9 * NANO, BSI),
        ((0, DSI), (50, DSI), -50 * NANO, DSI),
        ((50, DSI), (0, DSI), 50 * NANO, DSI),
        ((0, DSI), (0, DSI), 0, DSI),
        ((0, DSI), (2048, BSI), -2048 * NANO, BSI),
    ],
)
def test_sub(a: tuple[int, str], b: tuple[int, str], expect_nanos: int, fmt: str) -> None:
    q = Quantity.from_int(*a) - Quantity.from_int(*b)
    assert (q.nanos, q.format) == (expect_nanos, fmt)


@pytest.mark.parametrize("text", ["100m", "1Gi"])
def test_zero_preserves_suffix(text: str) -> None:
    """TestQuantityAddZeroPreservesSuffix and TestQuantitySubZeroPreservesSuffix."""
    value, zero = Quantity.parse(text), Quantity.parse("0")
    assert str(value + zero) == str(zero + value) == text
    assert str(value - zero) == text
    assert str(zero - value) == str(-value) == "-" + text


@pytest.mark.parametrize(
    ("q", "expect"),
    [  # TestQuantityNeg, TestNeg
        (Quantity.from_nanos(nanos(901, -2)), "-9010m"),
        (Quantity.from_int(10, BSI), "-10"),
        (Quantity.from_int(-10, BSI), "10"),
        (Quantity.from_int(0), "0"),
        (Quantity.parse("2Gi"), "-2Gi"),
    ],
)
def test_neg(q: Quantity, expect: str) -> None:
    assert str(-q) == expect
    negated = -q
    assert negated.format == q.format
    assert -negated == q


def test_add_sub_round_trip_across_scales() -> None:
    """TestAddSubRoundTripAcrossScales, with fixed values."""
    total = Quantity.parse("0")
    parts = [Quantity.from_nanos(j * 10 ** (j % 20), DSI) for j in range(-300, 300, 7)]
    for part in parts:
        total += part
    assert total.nanos == sum(p.nanos for p in parts)
    for part in parts:
        total -= part
    assert total.is_zero()


def test_sign_and_is_zero() -> None:
    assert [Quantity.parse(t).sign() for t in ("-1n", "0", "0Ki", "1n")] == [-1, 0, 0, 1]
    assert [Quantity.parse(t).is_zero() for t in ("-1n", "0", "-0m", "1n")] == [
        False,
        True,
        True,
        False,
    ]


# ---------------------------------------------------------------------- the object


def test_immutable() -> None:
    q = Quantity.parse("500m")
    with pytest.raises(AttributeError):
        q.nanos = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        q._nanos = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del q._format
    with pytest.raises(AttributeError):
        q.extra = 1  # type: ignore[attr-defined]
    assert q.nanos == 500 * 10**6


def test_repr_pickle_copy() -> None:
    q = Quantity.parse("1.500k")
    assert repr(q) == "Quantity('1.500k')"
    assert eval(repr(q), {"Quantity": Quantity}) == q
    for clone in (pickle.loads(pickle.dumps(q)), copy.copy(q), copy.deepcopy(q)):
        assert (clone, clone.format, str(clone)) == (q, q.format, "1.500k")
    binary = Quantity.from_milli(1024, BSI)
    assert pickle.loads(pickle.dumps(binary)).format == BSI


def test_parse_is_cached() -> None:
    assert Quantity.parse("123m") is Quantity.parse("123m")


# -------------------------------------------------------------- property tests

DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


@st.composite
def exponent_suffixes(draw: st.DrawFn) -> tuple[str, Fraction, str]:
    e = draw(st.integers(-40, 40))
    sign = "-" if e < 0 else draw(st.sampled_from(["", "+"]))
    zeros = "0" * draw(st.integers(0, 2))
    letter = draw(st.sampled_from("eE"))
    return f"{letter}{sign}{zeros}{abs(e)}", Fraction(10) ** e, DEXP


SUFFIXES = st.one_of(
    st.sampled_from(sorted(DECIMAL)).map(lambda s: (s, Fraction(10) ** DECIMAL[s], DSI)),
    st.sampled_from(sorted(BINARY)).map(lambda s: (s, Fraction(2) ** BINARY[s], BSI)),
    exponent_suffixes(),
)


@st.composite
def quantities(draw: st.DrawFn) -> tuple[str, int, str]:
    """(text, the nano-units Kubernetes makes of it, its format), from exact arithmetic."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.text("0123456789", max_size=22))
    frac = draw(st.none() | st.text("0123456789", max_size=14))
    suffix, multiplier, fmt = draw(SUFFIXES)
    assume(whole or frac)  # text without digits is covered by test_kubernetes_quirks
    text = sign + whole + ("" if frac is None else "." + frac) + suffix
    value = Fraction(int(whole or "0")) + Fraction(int(frac or "0"), 10 ** len(frac or ""))
    magnitude = math.ceil(value * multiplier * NANO)  # rounded up to a nano-unit
    if fmt == BSI:
        magnitude = min(magnitude, CAP)
        if 0 < magnitude < NANO:
            fmt = DSI
    return text, -magnitude if sign == "-" else magnitude, fmt


@given(quantities())
def test_parse_matches_exact_arithmetic(case: tuple[str, int, str]) -> None:
    text, expect_nanos, fmt = case
    q = Quantity.parse(text)
    assert (q.nanos, q.format) == (expect_nanos, fmt)


@given(quantities())
def test_string_round_trips_and_is_a_fixed_point(case: tuple[str, int, str]) -> None:
    q = Quantity.parse(case[0])
    shown = str(q)
    again = Quantity.parse(shown)
    assert again == q
    assert again.nanos == q.nanos
    assert str(again) == shown


@given(quantities())
def test_values_are_exact_ceilings(case: tuple[str, int, str]) -> None:
    _, expect_nanos, _ = case
    q = Quantity.parse(case[0])
    assert q.value() == away(expect_nanos, NANO)
    assert q.milli_value() == away(expect_nanos, 10**6)
    assert q.int64_value() == min(max(away(expect_nanos, NANO), INT64_MIN), INT64_MAX)
    assert q.sign() == (expect_nanos > 0) - (expect_nanos < 0)


@given(quantities(), quantities())
def test_order_matches_fractions(a: tuple[str, int, str], b: tuple[str, int, str]) -> None:
    qa, qb = Quantity.parse(a[0]), Quantity.parse(b[0])
    fa, fb = Fraction(a[1], NANO), Fraction(b[1], NANO)
    assert (qa < qb, qa <= qb, qa == qb, qa > qb, qa >= qb) == (
        fa < fb,
        fa <= fb,
        fa == fb,
        fa > fb,
        fa >= fb,
    )
    if qa == qb:
        assert hash(qa) == hash(qb)


@given(quantities(), quantities())
def test_add_sub_are_exact(a: tuple[str, int, str], b: tuple[str, int, str]) -> None:
    qa, qb = Quantity.parse(a[0]), Quantity.parse(b[0])
    total, diff = qa + qb, qa - qb
    assert (total.nanos, diff.nanos) == (a[1] + b[1], a[1] - b[1])
    expect_fmt = qb.format if qa.is_zero() else qa.format
    assert total.format == diff.format == expect_fmt
    assert diff + qb == qa
    assert (qa + (-qa)).is_zero()


@given(
    st.integers(-(10**30), 10**30),
    st.sampled_from([DSI, BSI, DEXP]),
)
def test_canonical_form(n: int, fmt: str) -> None:
    """No fraction digits, no leading zeros, the largest exact suffix, and parses back."""
    q = Quantity.from_nanos(n, fmt)
    shown = str(q)
    m = re.fullmatch(r"(-?)([0-9]+)([numkMGTPE]|[KMGTPE]i|e-?[0-9]+)?", shown)
    assert m is not None
    _, mantissa, suffix = m.groups()
    if suffix in BINARY and abs(n) > CAP:
        # Kubernetes prints a BinarySI sum past 2^63-1, but caps it when parsing it back.
        assert Quantity.parse(shown).nanos == (CAP if n > 0 else -CAP)
    else:
        assert Quantity.parse(shown) == q
    if n == 0:
        assert shown == "0"
        return
    assert mantissa[0] != "0"
    whole_binary = fmt == BSI and abs(n) >= 1024 * NANO and n % NANO == 0
    if suffix in BINARY:
        assert int(mantissa) % 1024 != 0
    elif whole_binary and suffix is None:
        # Kubernetes prints whole BinarySI bytes in base 1024 only: 15625000 has
        # no exact Ki multiple, so it stays "15625000" rather than "15625k".
        assert n % (1024 * NANO) != 0
    elif suffix != "E" and not (suffix or "").startswith("e"):
        assert not mantissa.endswith("000")  # a larger decimal suffix would fit
    if whole_binary:
        assert suffix is None or suffix in BINARY  # whole binary values stay binary


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_uses_the_numbers_text(x: float) -> None:
    # Kubernetes sees "0.1", not the binary fraction 0.1000000000000000055...
    q = Quantity.from_value(x)
    expect = Fraction(repr(x)) * NANO
    assert q.nanos == away(expect.numerator, expect.denominator)


@given(st.integers(-(10**40), 10**40))
def test_int_is_exact(n: int) -> None:
    q = Quantity.from_value(n)
    assert q.nanos == n * NANO
    assert q.value() == n
    assert Quantity.parse(str(q)) == n


@given(st.text("0123456789.+-eEinumkKMGTP x\u0663", max_size=12))
def test_junk_raises_only_quantity_error(text: str) -> None:
    try:
        q = Quantity.parse(text)
    except QuantityError as err:
        assert repr(text) in str(err)
    else:
        assert Quantity.parse(str(q)) == q
