""" "Safe URL handling", server side: a URL-mode elicitation MUST NOT carry a pre-authenticated URL
that grants access to a protected resource (a malicious client could use it to act as the user).

The engine checks every URL before it is sent (``ctx.elicit_url`` -> ``server/urls.py``), refusing
query parameters named like credentials or sessions. The most common pre-authenticated URLs on the
web are signed links (S3, CloudFront, Azure SAS) and session ids in the path; they are refused too.
"""

from __future__ import annotations

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Answer, Client, UrlQuestion
from tests.helpers import Script

SIGNED_URLS = {
    "s3-presigned": "https://reports.s3.amazonaws.com/q3.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIAEXAMPLE%2F20260728%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20260728T000000Z"
    "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=9f2c0e",
    "cloudfront-signed": "https://d111111abcdef8.cloudfront.net/reports/q3.pdf?Expires=1785283200"
    "&Signature=nitfHRCrtziwO2HwPfWw~yYDhUF5EwRunQA-j19DzZrvDh6hQ73lDx~-ar3UocvvRQVw6EkC~GdpGQyyOSKQim"
    "&Key-Pair-Id=K2JCJMDEHXQW5F",
    "azure-sas": "https://acct.blob.core.windows.net/reports/q3.pdf?sv=2022-11-02&se=2026-07-29T00%3A00%3A00Z"
    "&sr=b&sp=r&sig=Zm9vYmFy%3D",
    "servlet-session-in-path": "https://app.example.com/account;jsessionid=0F3A9C1E7B2D4A6F",
}


def server_sending(url: str) -> Server:
    app = Server("preauth", version="1", state_keys=["spec-preauth-tests-only-key-0123456789abcdef"])

    @app.tool()
    async def connect(ctx: Context) -> str:
        await ctx.elicit_url("Open the report", url, key="link")
        return "unreachable"

    return app


async def test_an_ordinary_connect_url_goes_out() -> None:
    url = "https://mcp.example.com/connect/3f9a2c7e1b"
    person = Script(url=lambda question: Answer("decline"))
    async with Client.connect(server_sending(url), answerer=person) as client:
        await client.call_tool("connect")
    ((question),) = person.asked
    assert isinstance(question, UrlQuestion)
    assert question.url == url


@pytest.mark.parametrize("url", list(SIGNED_URLS.values()), ids=list(SIGNED_URLS))
async def test_a_signed_or_session_bearing_url_is_never_sent(url: str) -> None:
    person = Script()  # never asked
    async with Client.connect(server_sending(url), answerer=person) as client:
        result = (await client.call_tool("connect")).raw
    assert "inputRequests" not in result, result["inputRequests"]
    assert result["isError"] is True
    assert person.asked == []
