"""The server's check of a URL before a URL-mode elicitation sends it: valid as browsers read it,
https, and no credentials, session or personal data in it (the spec's MUST NOTs)."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.schema.secret_words import is_credential_name
from mcp_elicit.server.urls import check_elicitation_url


def b64url(data: Any) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


JWT = ".".join(
    (b64url({"alg": "HS256", "typ": "JWT"}), b64url({"sub": "alice", "exp": 1767225600}), b64url(b"s" * 32))
)
UNSIGNED_JWT = f"{b64url({'alg': 'none'})}.{b64url({'sub': 'alice'})}."
JWE = ".".join(
    (b64url({"alg": "dir", "enc": "A256GCM"}), "", b64url(b"iv" * 6), b64url(b"c" * 20), b64url(b"t" * 16))
)
HMAC = "3d8b1f0c6a2e9f47b5c1d0e8a7f6b5c4"


@pytest.mark.parametrize(
    "url",
    [
        "https://mcp.example.com/connect/3f9a2c7e1b",
        "https://mcp.example.com/connect?flow=3f9a2c7e1b&next=%2Fdone",
        "https://github.com/login/oauth/authorize?client_id=abc&response_type=code&state=xyz",
        "https://www.npmjs.com/package/@scope/name",
        "https://medium.com/@someone/a-post",
        "http://127.0.0.1:8000/connect/1",
        "https://bücher.example/kaufen",
        "https://app.example.com/docs;v=2/page",  # a path parameter that is not a credential
        "https://example.com/search?q=signature+design&sort=new",
        "http://127.0.0.2:8000/connect/1",  # all of 127.0.0.0/8 is this computer
        "http://[::1]:8000/connect/1",
    ],
)
def test_ordinary_urls_go_out(url: str) -> None:
    assert check_elicitation_url(url) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://ex^ample.com/", "is not a valid URL"),
        ("https://exa|mple.com/", "is not a valid URL"),
        ("https://ex<a>mple.com/", "is not a valid URL"),
        ("https://exa%zzmple.com/", "percent-encoded host"),
        ("https://%00.com/", "percent-encoded host"),
        ("https://ex%20ample.com/", "percent-encoded host"),
        ("https://user:pw@example.com/", "must not carry credentials"),
        ("https://example.com/connect?access_token=eyJ.x.y", "carries 'access_token' in its query"),
        ("https://example.com/magic-login?Session=3f9a", "carries 'Session' in its query"),
        ("https://example.com/x?api-key=k", "carries 'api-key' in its query"),
        ("https://example.com/reset#password=hunter2", "carries 'password' in its fragment"),
        ("https://example.com/u/alice@example.com/", "contains an email address"),
        ("https://example.com/invite?to=alice%40example.com", "contains an email address"),
        (
            "https://b.s3.amazonaws.com/q.pdf?X-Amz-Credential=AKIA%2Fx&X-Amz-Signature=9f",
            "'X-Amz-Credential'",
        ),
        (
            "https://storage.googleapis.com/b/q.pdf?X-Goog-Signature=9f",
            "carries 'X-Goog-Signature' in its query",
        ),
        ("https://d1.cloudfront.net/q.pdf?Expires=1&Signature=nit&Key-Pair-Id=K2", "carries 'Signature'"),
        ("https://a.blob.core.windows.net/r/q.pdf?sv=2022-11-02&sr=b&sig=Zm9v", "carries 'sig' in its query"),
        ("https://app.example.com/account;jsessionid=0F3A9C", "carries 'jsessionid' in its path"),
        ("https://app.example.com/a;v=1;JSESSIONID=0F/b", "carries 'JSESSIONID' in its path"),
        ("https://app.example.com/index.php?PHPSESSID=0F3A9C", "carries 'PHPSESSID' in its query"),
        ("http://example.com/x", "must use https"),
        ("http://localhost.:8000/x", "must use https"),
        ("http://127.0.0.1.nip.io/x", "must use https"),
        ("http://0177.0.0.1/x", "must use https"),
        ("http://[::ffff:127.0.0.1]/x", "must use https"),
        ("https://example.com:99999/", "invalid port"),
    ],
)
def test_unsafe_urls_are_refused_with_the_reason(url: str, reason: str) -> None:
    with pytest.raises(ValueError, match="the elicitation URL") as info:
        check_elicitation_url(url)
    assert reason in str(info.value)


def _goes_out_or_is_refused(url: str) -> None:
    """``url`` goes out unchanged, or is refused with a ValueError of the check's own."""
    try:
        outcome = check_elicitation_url(url)
    except ValueError as exc:
        outcome = str(exc)
        assert outcome.startswith("the elicitation URL")
    else:
        assert outcome == url


@given(st.text(max_size=80))
def test_any_text_is_a_url_or_a_value_error(text: str) -> None:
    _goes_out_or_is_refused("https://example.com/" + text)


_URLISH = st.text(alphabet="ab:/?#;=&%[]@.-_ ", max_size=40)


@given(st.lists(_URLISH, min_size=1, max_size=6))
def test_urls_nested_in_values_end_in_a_url_or_a_value_error(pieces: list[str]) -> None:
    """Each piece carries the next as a percent-encoded value, as redirect parameters do."""
    url = ""
    for piece in reversed(pieces):
        url = piece + quote(url, safe="")
    _goes_out_or_is_refused("https://app.example.com/login?next=" + quote(url, safe=""))


# Controls: real-looking URLs a server has every reason to send. Each must go out unchanged.
BENIGN = [
    # OAuth authorize URLs (the kit's "connect" step sends the user to these)
    "https://accounts.google.com/o/oauth2/v2/auth?client_id=1234-abc.apps.googleusercontent.com"
    "&redirect_uri=https%3A%2F%2Fmcp.example.com%2Foauth%2Fgoogle%2Fcallback&response_type=code"
    "&scope=openid%20email%20https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fdrive.readonly"
    "&state=3q2-7xYbVw1Zk9fLm0PqRs&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGkSx-cM"
    "&code_challenge_method=S256&nonce=n-0S6_WzA2Mj&access_type=offline&prompt=consent"
    "&include_granted_scopes=true",
    "https://github.com/login/oauth/authorize?client_id=Iv1.8a61f9b3a7aba766"
    "&redirect_uri=https%3A%2F%2Fmcp.example.com%2Foauth%2Fgithub%2Fcallback&scope=repo%20read%3Auser"
    "&state=af0ifjsldkj&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGkSx-cM&code_challenge_method=S256",
    "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=6731de76-14a6-49ae-97bc-6eba6914391e"
    "&response_type=code&redirect_uri=http%3A%2F%2Flocalhost%2Fmyapp%2F&response_mode=query"
    "&scope=offline_access%20user.read&state=12345&code_challenge=YTFjNjI1OWYzMzA3MTI4ZDY2Njg5M2RkNmVjNDE5YmEyZGRhOGYyM2IzNjdmZWFhMTQ1ODg3NDcxY2Nl"
    "&code_challenge_method=S256",
    "https://slack.com/oauth/v2/authorize?client_id=3336676.569200954261&scope=channels:read&user_scope=search:read"
    "&state=xyz&redirect_uri=https%3A%2F%2Fmcp.example.com%2Fcb",
    # pages about credentials hold none
    "https://docs.example.com/tokens/api-keys",
    "https://docs.example.com/guide/auth?page=2&sort=name",
    "https://github.com/settings/tokens",
    "https://github.com/settings/personal-access-tokens/new",
    "https://app.example.com/settings?tab=api-keys&section=password",
    "https://docs.python.org/3/library/secrets.html#secrets.token_urlsafe",  # an anchor carries nothing
    "https://docs.example.com/account#password",
    "https://en.wikipedia.org/wiki/JSON_Web_Token",
    "https://example.com/blog/2026/07/how-we-rotate-api-keys?ref=hn",
    # names about a secret, not the secret (the lint's own decisions)
    "https://app.example.com/events?session_name=Keynote&day=2",
    "https://app.example.com/usage?max_tokens=1000&token_count=12",
    "https://console.example.com/keys?api_key_id=key_01HZX&sort=created",
    "https://s3.example.com/docs?SignatureVersion=4&lang=en",
    # everyday URLs
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
    "https://pay.example.com/checkout/cs_live_a1b2c3",
    "https://checkout.stripe.com/c/pay/cs_live_a1B2c3D4e5F6g7H8i9J0kLmN"
    "#fidkdWxOYHwnPyd1blpxYHZxWjA0TldvMkZdQW5cQXZsS2A8cWdNYlRUNTVufF1kZlxIa2tAfFdHVD1cVHxDT1JWZ1Rz",
    "https://shop.example.com/products/desk-lamp?variant=42&utm_source=newsletter&utm_medium=email",
    "https://www.amazon.com/dp/B08N5WRWNW?th=1&psc=1",
    "https://cdn.example.com/assets/app.3f9a2c71.js",
    "https://example.com/v/1.2.3/changelog",
    "https://example.com/download/report.pdf?e=1",
    "https://example.com/files/YWJjZGVm==/view",  # base64 padding in a segment, not a parameter
    f"https://example.com/debug?q={b64url({'a': 1})}.{b64url({'b': 2})}.x",  # JSON, but no alg: no JWT
    "https://calendly.com/acme/30min?month=2026-08&date=2026-08-03",
    "https://mcp.example.com/connect/3f9a2c7e1b?step=confirm",
    # an Authorization scheme's name in a value is no credential without one after it
    "https://www.google.com/search?q=bearer+bonds+1920",
    "https://www.imdb.com/find?q=basic+instinct",
    # URLs in values, holding nothing that lets anyone in
    "https://app.example.com/login?next=%2Fdocs%3Fpage%3D2%26sort%3Dname",
    "https://app.example.com/login?return=https%3A%2F%2Fapp.example.com%2Fcb%3Fstep%3D2%23top",
    "https://idp.example.com/sso?SAMLRequest=fZJNT8MwDIbvSPyHKPe16cYQqtZOIBASF6YJbidT",
    # a code and a state no OAuth server issued, and a support ticket
    "https://shop.example.com/cart?code=SUMMER2026&state=CA",
    "https://shop.example.com/redeem?code=GIFT-2026-4F9A-1C2E-8B7D&state=california",
    "https://help.example.com/view?ticket=ST-48213",
]


@pytest.mark.parametrize("url", BENIGN)
def test_benign_urls_go_out(url: str) -> None:
    assert check_elicitation_url(url) == url


@pytest.mark.parametrize(
    ("url", "found"),
    [
        # spellings the form lint refuses, now refused as parameter names too
        (
            "https://app.example.com/cb?accessToken=abc123",
            "'accessToken' in its query (it names an access token)",
        ),
        ("https://app.example.com/cb?AccessToken=abc123", "'AccessToken' in its query"),
        ("https://app.example.com/cb?clientSecret=abc123", "'clientSecret' in its query (it names a secret)"),
        ("https://app.example.com/cb?refresh_token[]=abc123", "'refresh_token[]' in its query"),
        ("https://app.example.com/cb?refresh_token%5B%5D=abc123", "'refresh_token[]' in its query"),
        ("https://app.example.com/cb?X-Api-Key=abc123", "'X-Api-Key' in its query (it names an API key)"),
        ("https://app.example.com/cb?api.key=abc123", "'api.key' in its query"),
        ("https://app.example.com/cb?auth_key=1767225600-0-0-" + HMAC, "'auth_key' in its query"),
        ("https://zoom.us/j/123456789?pwd=Zm9vYmFy", "'pwd' in its query (it names a password)"),
        ("https://app.example.com/#/callback?token=abc123", "'/callback?token' in its fragment"),
        ("https://app.example.com/cb#id_token=abc123&state=x", "'id_token' in its fragment"),
        ("https://app.example.com/a;accessToken=abc123/b", "'accessToken' in its path"),
        # session ids and link signatures: words of the URL check only
        ("https://app.example.com/x?sessionId=0F3A9C", "'sessionId' in its query (a session id)"),
        ("https://app.example.com/x?user_session=0F3A9C", "'user_session' in its query (a session id)"),
        ("https://app.example.com/x?sid=0F3A9C", "'sid' in its query (a session id)"),
        ("https://shop.example.com/admin?hmac=" + HMAC + "&shop=a", "'hmac' in its query (a link signature)"),
        (
            "https://api.example.com/r?oauth_signature=wOJIO9A2W5mFwDgiDvZbTSMK",
            "'oauth_signature' in its query",
        ),
        ("https://d1.cloudfront.net/q.pdf?Key-Pair-Id=K2JCJMDEHXQW5F", "'Key-Pair-Id' in its query"),
        ("https://db.example.firebaseio.com/users.json?auth=abc123", "'auth' in its query (credentials)"),
        # JWTs, whatever they are called and wherever they are
        (f"https://app.example.com/welcome?t={JWT}", "a JWT in its query (the value of 't')"),
        (f"https://app.example.com/verify/{JWT}", "a JWT in its path"),
        (f"https://app.example.com/verify/{JWT}/confirm", "a JWT in its path"),
        (f"https://app.example.com/a;x={JWT}/b", "a JWT in its path"),
        (f"https://app.example.com/welcome#{JWT}", "a JWT in its fragment"),
        (f"https://app.example.com/welcome#/home?x={JWT}", "a JWT in its fragment"),
        (f"https://app.example.com/welcome?{JWT}", "a JWT in its query"),
        (f"https://app.example.com/welcome?x=v1.{JWT}", "a JWT in its query (the value of 'x')"),
        (
            f"https://app.example.com/go?next={quote('https://b.example/cb?x=' + JWT, safe='')}",
            "a JWT in its query",
        ),
        (f"https://app.example.com/welcome?x={UNSIGNED_JWT}", "a JWT in its query"),
        (f"https://app.example.com/welcome?x={JWE}", "a JWT in its query"),
        # a URL in a value (a redirect target) with a credential of its own, nested or not
        (
            "https://app.example.com/login?next=" + quote("https://b.example/cb?access_token=x1", safe=""),
            "a URL in 'next' in its query, with 'access_token' in its query (it names an access token)",
        ),
        ("https://app.example.com/login?next=%2Fcb%23id_token%3Dabc123", "with 'id_token' in its fragment"),
        (
            "https://app.example.com/login?next="
            + quote("/sso?return=" + quote("/cb?sid=0F3A9C", safe=""), safe=""),
            "a URL in 'next' in its query, with a URL in 'return' in its query, with 'sid' in its query",
        ),
        # an Authorization header's value as a parameter's
        (
            "https://app.example.com/x?h=Bearer%20mF_9.B5f-4.1JqM2xYz",
            "'h' in its query (its value is a bearer token)",
        ),
        (
            "https://app.example.com/x?h=Basic+" + base64.b64encode(b"alice:s3cret").decode(),
            "'h' in its query (its value is a user name and password)",
        ),
        # sign-in assertions and PKCE's verifier
        ("https://sp.example.com/acs?SAMLResponse=PHNhbWxwOlJlc3BvbnNlPg%3D%3D", "(a sign-in assertion)"),
        ("https://sp.example.com/acs?SAMLart=AAQAAMFbLinlXaCM", "(a sign-in assertion)"),
        ("https://app.example.com/cb?code_verifier=dBjftJeZ4CVP-mB92K27uhbU", "(it names a secret)"),
        # CDN token links
        (
            f"https://media.example.com/v.mp4?__token__=exp=1767225600~acl=%2F*~hmac={HMAC}",
            "'__token__' in its query (it names an access token)",
        ),
        (
            f"https://media.example.com/v.m3u8?hdnts=st=1767220000~exp=1767225600~acl=/*~hmac={HMAC}",
            "'hdnts' in its query (an Akamai edge token)",
        ),
        (
            f"https://media.example.com/v.mp4?a=exp=1767225600~acl=%2F*~hmac={HMAC}",
            "an Akamai edge token in its query (the value of 'a')",
        ),
        (
            "https://media.example.com/v.mp4?verify=1484063137-IaAGHZ9lrhKRWJr%2Fy%2Bv6LRfPGXmHRsAMIt29Eo9Z7ik%3D",
            "a Cloudflare signed-URL token in its query ('verify')",
        ),
        (
            "https://media.example.com/v.mp4?verify=1484063137-IaAGHZ9lrhKRWJr/y+v6LRfPGXmHRsAMIt29Eo9Z7ik=",
            "a Cloudflare signed-URL token in its query",
        ),
        ("https://media.example.com/v.mp4?token=1767225600_" + HMAC, "'token' in its query"),  # Fastly
        (
            "https://media.example.b-cdn.net/v.mp4?token=" + HMAC + "&expires=1767225600",
            "'token' in its query",
        ),
        (
            "https://media.example.b-cdn.net/bcdn_token="
            + HMAC
            + "&expires=1767225600&token_path=%2Fv%2F/v/a.mp4",
            "'bcdn_token' in its path",
        ),
        (
            "https://live.example.com/app/stream/playlist.m3u8?wowzatokenendtime=1767225600&wowzatokenhash="
            + HMAC,
            "'wowzatokenendtime' in its query (a Wowza SecureToken)",
        ),
        (
            "https://live.example.com/app/stream/playlist.m3u8?mysecretendtime=1767225600&mysecrethash="
            + HMAC,
            "a Wowza SecureToken in its query ('mysecrethash')",
        ),
        (
            "https://files.example.com/a.zip?md5=" + HMAC + "&expires=1767225600",
            "a signed CDN link in its query",
        ),
        ("https://files.example.com/a.zip?st=XDYfYyH8IeXBOAOTvYxPcQ&e=1767225600", "'st' with 'e'"),
        ("https://files.example.com/a.zip#st=XDYfYyH8IeXBOAOTvYxPcQ&e=1767225600", "in its fragment"),
        # opening these finishes somebody's sign-in
        (
            "https://app.example.com/oauth/callback?code=4f9a1c2e8b7d6a5f3e21&state=Zk9fLm0PqRs3q2-7xYbVw1",
            "an OAuth authorization response in its query ('code' with 'state')",
        ),
        (
            "https://app.example.com/cb#state=Zk9fLm0PqRs3q2-7xYbVw1&code=SplxlOBeZQQYbYS6WxSbIA9",
            "an OAuth authorization response in its fragment",
        ),
        (
            "https://app.example.com/cas/login?ticket=ST-1-xCzDxSTKnBhSkWRfhXmo-cas01.example.org",
            "a CAS ticket in its query ('ticket')",
        ),
    ],
)
def test_credentials_anywhere_are_refused_saying_what_and_where(url: str, found: str) -> None:
    with pytest.raises(ValueError, match=r"^the elicitation URL carries ") as info:
        check_elicitation_url(url)
    message = str(info.value)
    assert found in message, message
    assert "identify the flow with an opaque id and check who opens it on the page" in message


# The names the check compared exactly before it asked the lint's recogniser: all still refused.
_OLD_LIST = [
    "access_token", "id_token", "refresh_token", "auth_token", "token", "api_key", "apikey", "password",
    "passwd", "pwd", "secret", "client_secret", "session", "session_id", "sessionid", "sid",
    "authorization", "jsessionid", "phpsessid", "signature", "sig", "x_amz_signature", "x_amz_credential",
    "x_amz_security_token", "x_goog_signature", "x_goog_credential", "key_pair_id",
]  # fmt: skip


@pytest.mark.parametrize("name", _OLD_LIST + [n.replace("_", "-").upper() for n in _OLD_LIST])
def test_every_name_of_the_old_list_is_still_refused(name: str) -> None:
    with pytest.raises(ValueError, match=f"carries {name!r} in its query"):
        check_elicitation_url(f"https://example.com/x?{name}=v")


_WORDS = st.sampled_from(
    ["access", "Token", "token", "api", "Key", "client", "Secret", "refresh", "id", "max", "name", "page",
     "session", "pass", "word", "auth", "code", "challenge", "state", "redirect", "uri", "pin", "sort"]
)  # fmt: skip
_SEPARATORS = st.sampled_from(["", "_", "-", ".", "[]"])


@given(st.lists(st.tuples(_WORDS, _SEPARATORS), min_size=1, max_size=4), st.sampled_from(["?", "#"]))
def test_every_name_the_lint_refuses_is_refused_in_a_url(parts: list[tuple[str, str]], mark: str) -> None:
    name = "".join(word + sep for word, sep in parts)
    url = f"https://example.com/x{mark}{quote(name, safe='')}=v"
    if is_credential_name(name) is not None:
        with pytest.raises(ValueError, match=r"carries .* in its (query|fragment)"):
            check_elicitation_url(url)


@given(
    st.dictionaries(st.sampled_from(["typ", "kid", "cty", "x5t"]), st.text(max_size=8), max_size=3),
    st.text(min_size=1, max_size=6),
    st.sampled_from(["/p/{}", "/p/{}/q", "?x={}", "?{}", "#{}", "#a=1&b={}", "/p;x={}"]),
)
def test_a_jwt_is_refused_wherever_it_sits(header: dict[str, str], alg: str, where: str) -> None:
    token = f"{b64url({'alg': alg, **header})}.{b64url({'sub': 'alice'})}.{b64url(b'sig')}"
    with pytest.raises(ValueError, match="carries a JWT in its"):
        check_elicitation_url("https://example.com" + where.format(token))


# Keys whose issuers gave them a recognisable shape (made up here, of the documented lengths).
KEYS = {
    "a GitHub token": ["ghp_" + "aB3" * 12, "github_pat_11ABCDEFG0" + "x7" * 35, "ghs_" + "Q9z" * 12],
    "a GitLab token": ["glpat-" + "xY_2" * 5],
    "a Slack token": ["xoxb-1234567890-0987654321-" + "AbC9" * 6, "xoxp-12345-67890-abcdef"],
    "a Stripe secret key": ["sk_live_" + "4eC39HqLy" * 3, "rk_test_" + "a1" * 12, "whsec_" + "Ab3+" * 8],
    "an OpenAI or Anthropic API key": ["sk-proj-" + "T3BlbkFJ" * 6, "sk-ant-api03-" + "Zx9_" * 20],
    "a Google OAuth token": ["ya29.a0AfB_byC" + "x1Y" * 20],
    "an npm token": ["npm_" + "aZ09" * 9],
    "a PyPI token": ["pypi-AgEIcHlwaS5vcmc" + "Cj" * 40],
    "a Hugging Face token": ["hf_" + "aBcD" * 9],
    "a Shopify token": ["shpat_" + "0f" * 16],
    "a DigitalOcean token": ["dop_v1_" + "ab12" * 16],
    "a SendGrid API key": ["SG." + "aB3-" * 6 + "." + "x_Y9" * 11],
}  # fmt: skip


@pytest.mark.parametrize(("what", "key"), [(what, key) for what, keys in KEYS.items() for key in keys])
@pytest.mark.parametrize(
    ("template", "where"),
    [("/share?k={}", "query"), ("/share/{}/open", "path"), ("/share#t={}", "fragment"),
     ("/s?next=%2Fa%3Fx%3D{}", "query")],
)  # fmt: skip
def test_a_key_of_a_known_format_is_refused_whatever_it_is_called(
    what: str, key: str, template: str, where: str
) -> None:
    with pytest.raises(ValueError, match=f"carries {what} in its {where}"):
        check_elicitation_url("https://app.example.com" + template.format(key))


@pytest.mark.parametrize(
    "url",
    [
        "https://pay.example.com/?pk=pk_live_" + "a1" * 12,  # Stripe publishable keys are public
        "https://maps.example.com/embed?key=AIza" + "S" * 35,  # so are Google browser keys
        "https://pypi.org/project/sk-learn-tools/",
        "https://blog.example.com/sk-how-to-rotate-your-api-keys-safely-and-often",  # a slug, no digit
        "https://docs.github.com/en/authentication?q=ghp_",  # a prefix alone
        "https://example.com/ghp_tokens_explained",
        "https://example.com/x?v=aghp_" + "aB3" * 12,  # inside a longer word
        "https://example.com/npm_packages/npm_" + "a" * 10,
    ],
)
def test_key_like_words_that_are_no_key_go_out(url: str) -> None:
    assert check_elicitation_url(url) == url


@given(
    st.sampled_from(sorted(KEYS)),
    st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789"), min_size=1, max_size=8),
    st.sampled_from(["?{n}={k}", "?a=1&{n}={k}", "#{n}={k}", "/{k}", "/p;{n}={k}", "?{n}=x%20{k}"]),
)
def test_known_keys_are_refused_under_any_name(what: str, name: str, template: str) -> None:
    for key in KEYS[what]:
        with pytest.raises(ValueError, match=r"^the elicitation URL carries "):
            check_elicitation_url("https://example.com/x" + template.format(n=name, k=key))


# -- personal data (mcp_elicit.server.url_personal_data) ------------------------------------------


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("https://shop.example/verify?phone=%2B4915112345678", "'phone' in its query (a phone number)"),
        ("https://shop.example/verify?phoneNumber=0151", "'phoneNumber' in its query (a phone number)"),
        ("https://shop.example/v?customer_mobile=0151", "'customer_mobile' in its query (a phone number)"),
        ("https://shop.example/age?dob=1990-01-01", "'dob' in its query (a date of birth)"),
        ("https://shop.example/age?date_of_birth=1990", "'date_of_birth' in its query (a date of birth)"),
        ("https://shop.example/age#birthDate=1990", "'birthDate' in its fragment (a date of birth)"),
        ("https://shop.example/signup?first_name=Ada", "'first_name' in its query (a person's name)"),
        ("https://shop.example/signup?lastName=Lovelace", "'lastName' in its query (a person's name)"),
        ("https://shop.example/signup?SURNAME=Lovelace", "'SURNAME' in its query (a person's name)"),
        (
            "https://shop.example/pay?billingAddress=1+Main+St",
            "'billingAddress' in its query (a postal address)",
        ),
        ("https://shop.example/pay;street=Main/x", "'street' in its path (a postal address)"),
        (
            "https://id.example/kyc?passport_number=X123",
            "'passport_number' in its query (an identity document",
        ),
        ("https://id.example/kyc?national-id=123", "'national-id' in its query (an identity document"),
        ("https://bank.example/pay?iban=DE89370400440532013000", "'iban' in its query (a bank account)"),
        ("https://bank.example/pay?accountNumber=123", "'accountNumber' in its query (a bank account)"),
        ("https://example.com/u/alice@example.com/", "an email address"),
    ],
)
def test_personal_data_is_refused_saying_what_and_where(url: str, found: str) -> None:
    with pytest.raises(ValueError, match="the elicitation URL contains") as info:
        check_elicitation_url(url)
    assert f"the elicitation URL contains {found}" in str(info.value)
    assert "must not carry personal data about the user" in str(info.value)


@pytest.mark.parametrize(
    "url",
    [
        "https://wallet.example/send?address=0x52908400098527886E0F7030069857D2E4169EE7",  # not a person's
        "https://status.example/check?ip_address=203.0.113.7",
        "https://api.example/files?name=report.pdf",
        "https://app.example/profile?user=ada",  # an account handle: not told from others by its form
        "https://app.example/settings/phone",  # a page about phones
        "https://app.example/verify?phone",  # a name without a value
        "https://app.example/verify?phone_verified=1&phone_country=DE",
        "https://app.example/orders/4111111111111111",  # a number is not read for what it is
        "https://app.example/connect?server_address=mcp.example.com",
    ],
)
def test_urls_that_only_look_personal_go_out(url: str) -> None:
    assert check_elicitation_url(url) == url


_PERSONAL = [
    ("phone", "number"),
    ("date", "of", "birth"),
    ("first", "name"),
    ("family", "name"),
    ("shipping", "address"),
    ("passport",),
    ("iban",),
]


@given(
    st.sampled_from(_PERSONAL),
    st.sampled_from(["snake", "camel", "kebab", "upper"]),
    st.sampled_from(["", "customer", "user"]),
    st.sampled_from(["query", "fragment"]),
    st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=12),
)
def test_a_personal_data_name_is_refused_however_it_is_written(
    words: tuple[str, ...], style: str, owner: str, where: str, value: str
) -> None:
    parts = [owner, *words] if owner else list(words)
    if style == "snake":
        name = "_".join(parts)
    elif style == "kebab":
        name = "-".join(parts)
    elif style == "upper":
        name = "_".join(parts).upper()
    else:
        name = parts[0] + "".join(part.title() for part in parts[1:])
    mark = "?" if where == "query" else "#"
    with pytest.raises(ValueError, match=f"contains '{name}' in its {where}"):
        check_elicitation_url(f"https://example.com/x{mark}{name}={value}")
