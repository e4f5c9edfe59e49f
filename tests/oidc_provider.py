"""A small OpenID Connect provider for the single sign-on tests (annotator.sso): http.server in a
thread on 127.0.0.1 at a free port, with a discovery document, /authorize (which approves the
configured user at once and sends the browser back with a code and the state), /token (an ID token
signed RS256 with a key made for the test, and an access token), /jwks and /userinfo.

It checks what a real provider checks: the client id and secret, the redirect address the code was
given for, that a code is used once, and the PKCE verifier. ``tamper`` makes it answer wrongly on
purpose: ``{"key": "other"}`` signs with a key it does not publish, ``{"nonce": ...}``, ``{"aud": ...}``,
``{"iss": ...}``, ``{"iat": ...}`` or ``{"exp": ...}`` put another value in the ID token."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import secrets
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from tests.http_servers import serve_thread


@functools.cache
def _key(name: str = "provider") -> rsa.RSAPrivateKey:
    """One key per name for the whole test run: a 2048-bit key takes about 0.1 s to make, and each
    test starts a provider. The provider signs with "provider"; a tampered token with "other"."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Provider:
    def __init__(self, *, client_id: str, client_secret: str, claims: dict[str, Any]) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.claims = claims  # the user it approves: sub, preferred_username, email, groups...
        self.claims_in_id_token = True  # as Keycloak and Azure AD do; off: in /userinfo only
        self.tamper: dict[str, Any] = {}
        self.kid = "test-key"
        self.key = _key()
        self.codes: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, dict[str, Any]] = {}
        self.seen: list[str] = []  # the paths asked, in order
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = serve_thread(self.server)

    def __enter__(self) -> Provider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    @property
    def discovery_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "userinfo_endpoint": f"{self.url}/userinfo",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "email", "profile"],
        }

    def jwks(self) -> dict[str, Any]:
        public = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        if query.get("client_id") != self.client_id or query.get("response_type") != "code":
            return 400, {}, {"error": "invalid_request"}
        if "openid" not in query.get("scope", "").split():
            return 400, {}, {"error": "invalid_scope"}
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "redirect_uri": query["redirect_uri"],
            "nonce": query.get("nonce"),
            "challenge": query.get("code_challenge"),
            "claims": dict(self.claims),
        }
        back = f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query.get('state', '')})}"
        return 302, {"Location": back}, None

    def token(self, form: dict[str, str], headers: Any) -> tuple[int, dict[str, str], Any]:
        client, secret = form.get("client_id"), form.get("client_secret")
        basic = headers.get("Authorization", "")
        if basic.startswith("Basic "):
            client, _colon, secret = base64.b64decode(basic[6:]).decode().partition(":")
        if client != self.client_id or secret != self.client_secret:
            return 401, {}, {"error": "invalid_client"}
        grant = self.codes.pop(form.get("code", ""), None)  # a code is good once
        if form.get("grant_type") != "authorization_code" or grant is None:
            return 400, {}, {"error": "invalid_grant"}
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return 400, {}, {"error": "invalid_grant", "error_description": "redirect_uri"}
        if grant["challenge"]:
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant["challenge"]:
                return 400, {}, {"error": "invalid_grant", "error_description": "code_verifier"}
        access = secrets.token_urlsafe(16)
        self.tokens[access] = grant["claims"]
        now = int(time.time())
        payload = {"iss": self.url, "sub": grant["claims"]["sub"], "aud": self.client_id, "iat": now,
                   "exp": now + 300, "nonce": grant["nonce"]}  # fmt: skip
        if self.claims_in_id_token:
            payload = {**grant["claims"], **payload}
        payload.update({k: v for k, v in self.tamper.items() if k in ("nonce", "aud", "iss", "iat", "exp")})
        key = _key("other") if self.tamper.get("key") == "other" else self.key
        id_token = jwt.encode(payload, key, algorithm="RS256", headers={"kid": self.kid})
        body = {"access_token": access, "token_type": "Bearer", "expires_in": 300, "id_token": id_token}
        return 200, {}, body

    def userinfo(self, headers: Any) -> tuple[int, dict[str, str], Any]:
        auth = headers.get("Authorization", "")
        claims = self.tokens.get(auth[len("Bearer ") :]) if auth.startswith("Bearer ") else None
        if claims is None:
            return 401, {"WWW-Authenticate": "Bearer"}, {"error": "invalid_token"}
        return 200, {}, claims

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, headers: dict[str, str], body: Any) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                provider.seen.append(parts.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if parts.path == "/.well-known/openid-configuration":
                    self._answer(200, {}, provider.discovery())
                elif parts.path == "/jwks":
                    self._answer(200, {}, provider.jwks())
                elif parts.path == "/authorize":
                    self._answer(*provider.authorize(query))
                elif parts.path == "/userinfo":
                    self._answer(*provider.userinfo(self.headers))
                else:
                    self._answer(404, {}, {"error": "not_found"})

            def do_POST(self) -> None:
                provider.seen.append(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if self.path == "/token":
                    self._answer(*provider.token(form, self.headers))
                else:
                    self._answer(404, {}, {"error": "not_found"})

        return Handler


SSO_BACKEND = "annotator.sso_flow.SSOBackend"
ROLE_MAP = "nsm-admins=admin,nsm-adjudicators=adjudicator,nsm-staff=annotator"


def configure(settings: Any, provider: Provider, **more: Any) -> None:
    """Single sign-on on, against ``provider``, as NSM_OIDC_* in the environment would set it
    (pytest-django's ``settings`` fixture undoes it after the test)."""
    settings.NSM_OIDC_CLIENT_ID = provider.client_id
    settings.NSM_OIDC_CLIENT_SECRET = provider.client_secret
    settings.NSM_OIDC_DISCOVERY_URL = provider.discovery_url
    settings.NSM_OIDC_PROVIDER_NAME = "Test IdP"
    settings.NSM_OIDC_ROLE_MAP = ROLE_MAP
    if SSO_BACKEND not in settings.AUTHENTICATION_BACKENDS:
        settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, SSO_BACKEND]
    for name, value in more.items():
        setattr(settings, name, value)
