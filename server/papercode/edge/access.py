"""Who may use the HTTP server, as the SDK checks it: static bearer tokens through its token verifier, and its
Host/Origin checks (DNS-rebinding protection) on every bind address."""

from __future__ import annotations

import contextlib
import hmac
import ipaddress

from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings

from papercode.settings import Settings

Auth = tuple[TokenVerifier, AuthSettings]
"""The token verifier and auth settings `build_server` gives the SDK, for the checks before it."""

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


class StaticTokens:
    """The SDK's `TokenVerifier`: a request is let in when its bearer token is one of ours."""

    def __init__(self, tokens: tuple[str, ...]) -> None:
        self._tokens = [token.encode() for token in tokens]

    async def verify_token(self, token: str) -> AccessToken | None:
        presented = token.encode()
        matched = False
        for known in self._tokens:  # every one compared, in constant time: no early exit to time
            matched |= hmac.compare_digest(presented, known)
        # The token itself is never kept in the request's context (nothing can log it from there).
        return AccessToken(token="(bearer)", client_id="papercode-client", scopes=[]) if matched else None


def auth_for(url: str) -> AuthSettings:
    """The SDK's resource-server settings for static bearer tokens (no OAuth server: tokens are configured)."""
    base = url.rsplit("/", 1)[0]
    return AuthSettings(issuer_url=base, resource_server_url=url, required_scopes=None, validate_token_resource=False)  # type: ignore[arg-type]


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection on whatever the bind address: loopback, the bound name, and what was allowed,
    each with any port or none (a client leaves out the scheme's default port: `Host: 127.0.0.1` on port 80)."""
    named = [] if settings.host in ("0.0.0.0", "::") or settings.host in LOOPBACK else [settings.host]
    hosts = [pattern for host in (*sorted(LOOPBACK), *named, *settings.allowed_hosts) for pattern in host_patterns(host)]
    origins = [pattern for host in sorted(LOOPBACK) for pattern in host_patterns(host, "http://")]
    origins += list(settings.allowed_origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def host_patterns(host: str, scheme: str = "") -> list[str]:
    """The SDK's patterns for `host` (a name or an IPv4 or IPv6 address; `:*` or not) with any port and with none;
    for a host given with its port, that port only."""
    bare = host.removesuffix(":*")
    with contextlib.suppress(ValueError):
        ipaddress.IPv6Address(bare.strip("[]"))
        bare = f"[{bare.strip('[]')}]"
    if ":" in bare.rsplit("]", 1)[-1]:
        return [f"{scheme}{bare}"]
    return [f"{scheme}{bare}", f"{scheme}{bare}:*"]
