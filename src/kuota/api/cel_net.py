"""Kubernetes' ip, cidr and url CEL libraries (k8s.io/apiserver/pkg/cel/
library: ip.go, cidr.go, urls.go) for ``kuota.api.cel_library``: the same
function names, overloads, results and error texts, over Python's
``ipaddress`` and ``urllib`` held to Go's ``net/netip`` and ``net/url``
rules (no IPv4 leading zeros, no zones, no IPv4-mapped IPv6; RFC 5952 text;
``url.ParseRequestURI`` accepts only an absolute URI or an absolute path).

The values (IP, CIDR, URL) cross cel-cpp as one-key maps, as quantities do:
the key says the type, the value is the canonical text, so ``==`` compares
them as Kubernetes' types do. Not there: ``string(ip)`` and ``string(cidr)``
(cel-cpp lets no library add an overload to ``string``): a rule calling them
is not evaluated, with a warning, as before.

Pure: no I/O.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

__all__ = ["CIDR_KEY", "IP_KEY", "URL_KEY", "functions", "parse_cidr", "parse_ip", "parse_url"]

IP_KEY: Final = "@kubernetes.IP"
CIDR_KEY: Final = "@kubernetes.CIDR"
URL_KEY: Final = "@kubernetes.URL"

Addr = ipaddress.IPv4Address | ipaddress.IPv6Address


def _netip_error(raw: str) -> str:
    """Why Go's netip.ParseAddr refuses ``raw`` (its words where they are
    simple to tell; a generic one otherwise)."""
    if raw == "":
        return 'ParseAddr(""): unable to parse IP'
    if ":" not in raw and "." in raw:
        parts = raw.split(".")
        for p in parts:
            if p == "":
                return f'ParseAddr("{raw}"): IPv4 field must have at least one digit'
            if len(p) > 1 and p[0] == "0" and p.isdigit():
                return f'ParseAddr("{raw}"): IPv4 field has octet with leading zero'
            if p.isdigit() and int(p) > 255:
                return f'ParseAddr("{raw}"): IPv4 field has value >255'
        if len(parts) != 4:
            return f'ParseAddr("{raw}"): IPv4 address too short'
    return f'ParseAddr("{raw}"): unable to parse IP'


def _parse_addr(raw: str) -> tuple[Addr | None, str]:
    """netip.ParseAddr with the zone kept apart: (address, zone) or (None,
    the error)."""
    text, _, zone = raw.partition("%")
    if "%" in raw and (":" not in text or zone == ""):
        return None, _netip_error(raw)
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        return None, _netip_error(raw)
    return addr, zone


def parse_ip(raw: str) -> Addr:
    """parseIPAddr: ValueError with Kubernetes' message."""
    addr, zone = _parse_addr(raw)
    if addr is None:
        raise ValueError(f'IP Address "{raw}" parse error during conversion from string: {zone}')
    if zone:
        raise ValueError(f'IP address "{raw}" with zone value is not allowed')
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return addr


def _ip(v: Any) -> Addr:
    if not isinstance(v, dict) or IP_KEY not in v:
        raise ValueError("no such overload")
    return ipaddress.ip_address(v[IP_KEY])


def _ipv(addr: Addr) -> dict[str, str]:
    return {IP_KEY: str(addr)}


def _is_ip(raw: str) -> bool:
    try:
        parse_ip(raw)
    except ValueError:
        return False
    return True


def _is_canonical(raw: str) -> bool:
    return str(parse_ip(raw)) == raw


def _link_local_multicast(a: Addr) -> bool:
    if isinstance(a, ipaddress.IPv4Address):
        return a.packed[:3] == b"\xe0\x00\x00"  # 224.0.0.0/24
    return a.packed[0] == 0xFF and a.packed[1] & 0x0F == 0x02  # ff02::/16 (any flags)


def _link_local_unicast(a: Addr) -> bool:
    if isinstance(a, ipaddress.IPv4Address):
        return a.packed[:2] == b"\xa9\xfe"  # 169.254.0.0/16
    return a.packed[0] == 0xFE and a.packed[1] & 0xC0 == 0x80  # fe80::/10


def _global_unicast(a: Addr) -> bool:
    """netip.Addr.IsGlobalUnicast: not unspecified, loopback, multicast,
    link-local unicast, nor the IPv4 broadcast address."""
    if isinstance(a, ipaddress.IPv4Address) and a == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or _link_local_unicast(a))


def _loopback(a: Addr) -> bool:
    if isinstance(a, ipaddress.IPv4Address):
        return a.packed[0] == 127
    return a == ipaddress.IPv6Address("::1")


# ---------------------------------------------------------------- cidr
_BITS: Final = re.compile(r"0|[1-9][0-9]{0,2}")


def parse_cidr(raw: str) -> tuple[Addr, int]:
    """parseCIDR (netip.ParsePrefix): the address as written (not masked)
    and the prefix length; ValueError with Kubernetes' message."""
    pre = "network address parse error during conversion from string: "
    text, slash, bits = raw.rpartition("/")
    if not slash:
        raise ValueError(f"{pre}netip.ParsePrefix(\"{raw}\"): no '/'")
    addr, zone = _parse_addr(text)
    if addr is None:
        raise ValueError(f'{pre}netip.ParsePrefix("{raw}"): {zone}')
    if zone:
        raise ValueError(
            f'{pre}netip.ParsePrefix("{raw}"): IPv6 zones cannot be present in a prefix'
        )
    top = 32 if isinstance(addr, ipaddress.IPv4Address) else 128
    if not _BITS.fullmatch(bits) or int(bits) > top:
        raise ValueError(f'{pre}netip.ParsePrefix("{raw}"): bad bits after slash: "{bits}"')
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f'{pre}IPv4-mapped IPv6 address "{raw}" is not allowed')
    return addr, int(bits)


def _cidr(v: Any) -> tuple[Addr, int]:
    if not isinstance(v, dict) or CIDR_KEY not in v:
        raise ValueError("no such overload")
    text, _, bits = v[CIDR_KEY].rpartition("/")
    return ipaddress.ip_address(text), int(bits)


def _cidrv(addr: Addr, bits: int) -> dict[str, str]:
    return {CIDR_KEY: f"{addr}/{bits}"}


def _to_cidr(raw: str) -> dict[str, str]:
    addr, bits = parse_cidr(raw)
    return _cidrv(addr, bits)


def _is_cidr(raw: str) -> bool:
    try:
        parse_cidr(raw)
    except ValueError:
        return False
    return True


def _network(addr: Addr, bits: int) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(f"{addr}/{bits}", strict=False)


def _contains_ip(c: Any, ip: Any) -> bool:
    addr, bits = _cidr(c)
    other = parse_ip(ip) if isinstance(ip, str) else _ip(ip)
    return other.version == addr.version and other in _network(addr, bits)


def _contains_cidr(c: Any, other: Any) -> bool:
    addr, bits = _cidr(c)
    o_addr, o_bits = parse_cidr(other) if isinstance(other, str) else _cidr(other)
    if o_addr.version != addr.version or o_bits < bits:
        return False
    return o_addr in _network(addr, bits)


def _masked(c: Any) -> dict[str, str]:
    addr, bits = _cidr(c)
    return _cidrv(_network(addr, bits).network_address, bits)


# ---------------------------------------------------------------- url
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_CTL: Final = re.compile(r"[\x00-\x1f\x7f]")


def parse_url(raw: str) -> str:
    """url.ParseRequestURI then url.Parse: the URL's text, or ValueError
    with Kubernetes' message."""
    pre = f'URL parse error during conversion from string: parse "{raw}": '
    if _CTL.search(raw):
        raise ValueError(pre + "net/url: invalid control character in URL")
    if not raw.startswith("/") and not _SCHEME.match(raw):
        raise ValueError(pre + "invalid URI for request")
    parts = urlsplit(raw)
    host = parts.netloc.rpartition("@")[2]
    if " " in host:
        raise ValueError(pre + 'invalid character " " in host name')
    if host.startswith("[") and "]" not in host:
        raise ValueError(pre + "missing ']' in host")
    port = host.rpartition("]")[2] if host.startswith("[") else host
    if ":" in port:
        digits = port.rpartition(":")[2]
        if digits and not digits.isdigit():
            raise ValueError(pre + f'invalid port ":{digits}" after host')
    return raw


def _url(v: Any) -> Any:
    if not isinstance(v, dict) or URL_KEY not in v:
        raise ValueError("no such overload")
    return urlsplit(v[URL_KEY])


def _host(v: Any) -> str:
    return str(_url(v).netloc.rpartition("@")[2])


def _hostname(v: Any) -> str:
    """url.URL.Hostname: the host without its port, an IPv6 literal
    without brackets."""
    host = _host(v)
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rpartition(":")[0] if ":" in host else host


def _port(v: Any) -> str:
    host = _host(v)
    if host.startswith("["):
        rest = host[host.find("]") + 1 :] if "]" in host else ""
        return rest[1:] if rest.startswith(":") else ""
    return host.rpartition(":")[2] if ":" in host else ""


def _query(v: Any) -> dict[str, list[str]]:
    return {k: list(vs) for k, vs in parse_qs(_url(v).query, keep_blank_values=True).items()}


def _is_url(raw: str) -> bool:
    try:
        parse_url(raw)
    except ValueError:
        return False
    return True


def functions(cel: Any) -> list[Any]:
    """The libraries' declarations for cel-expr-python's environment."""
    s, b, i, m = (
        cel.Type.STRING,
        cel.Type.BOOL,
        cel.Type.INT,
        cel.Type.Map(cel.Type.STRING, cel.Type.DYN),
    )
    o = cel.Overload

    def member(name: str, oid: str, ret: Any, params: list[Any], impl: Any) -> Any:
        return cel.FunctionDecl(name, [o(oid, ret, params, True, impl)])

    def glob(name: str, oid: str, ret: Any, params: list[Any], impl: Any) -> Any:
        return cel.FunctionDecl(name, [o(oid, ret, params, False, impl)])

    def ipf(f: Any) -> Any:
        return lambda v: f(_ip(v))

    return [
        # ip (library/ip.go)
        cel.FunctionDecl(
            "ip",
            [
                o("string_to_ip", m, [s], False, lambda raw: _ipv(parse_ip(raw))),
                o("cidr_ip", m, [m], True, lambda c: _ipv(_cidr(c)[0])),
            ],
        ),
        glob("isIP", "is_ip", b, [s], _is_ip),
        glob("ip.isCanonical", "ip_is_canonical", b, [s], _is_canonical),
        member("family", "ip_family", i, [m], ipf(lambda a: a.version)),
        member("isUnspecified", "ip_is_unspecified", b, [m], ipf(lambda a: a.is_unspecified)),
        member("isLoopback", "ip_is_loopback", b, [m], ipf(_loopback)),
        member(
            "isLinkLocalMulticast", "ip_is_link_local_multicast", b, [m], ipf(_link_local_multicast)
        ),
        member("isLinkLocalUnicast", "ip_is_link_local_unicast", b, [m], ipf(_link_local_unicast)),
        member("isGlobalUnicast", "ip_is_global_unicast", b, [m], ipf(_global_unicast)),
        # cidr (library/cidr.go)
        glob("cidr", "string_to_cidr", m, [s], _to_cidr),
        glob("isCIDR", "is_cidr", b, [s], _is_cidr),
        cel.FunctionDecl(
            "containsIP",
            [
                o("cidr_contains_ip_string", b, [m, s], True, _contains_ip),
                o("cidr_contains_ip_ip", b, [m, m], True, _contains_ip),
            ],
        ),
        cel.FunctionDecl(
            "containsCIDR",
            [
                o("cidr_contains_cidr_string", b, [m, s], True, _contains_cidr),
                o("cidr_contains_cidr", b, [m, m], True, _contains_cidr),
            ],
        ),
        member("prefixLength", "cidr_prefix_length", i, [m], lambda c: _cidr(c)[1]),
        member("masked", "cidr_masked", m, [m], _masked),
        # url (library/urls.go)
        glob("url", "string_to_url", m, [s], lambda raw: {URL_KEY: parse_url(raw)}),
        glob("isURL", "is_url_string", b, [s], _is_url),
        member("getScheme", "url_get_scheme", s, [m], lambda v: _url(v).scheme),
        member("getHost", "url_get_host", s, [m], _host),
        member("getHostname", "url_get_hostname", s, [m], _hostname),
        member("getPort", "url_get_port", s, [m], _port),
        member("getEscapedPath", "url_get_escaped_path", s, [m], lambda v: _url(v).path),
        member(
            "getQuery",
            "url_get_query",
            cel.Type.Map(s, cel.Type.List(s)),
            [m],
            _query,
        ),
    ]
