"""lint_form: secret fields in many spellings and languages, false positives, link warnings."""

from typing import Any

import pytest

from mcp_elicit.schema import FormLint, SecretFinding, lint_form
from mcp_elicit.schema.limits import MAX_MESSAGE


def findings(name: str = "f", prop: dict[str, Any] | None = None, **kw: Any) -> list[SecretFinding]:
    prop = {"type": "string", **(prop or {})}
    return lint_form("", {"type": "object", "properties": {name: prop}}, **kw).secret_fields


def category_of_name(name: str) -> str | None:
    found = findings(name)
    return found[0].category if found else None


def category_of_title(title: str) -> str | None:
    found = findings("f", {"title": title})
    return found[0].category if found else None


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("password", "password"),
        ("passwd", "password"),
        ("pwd", "password"),
        ("user_password", "password"),
        ("newPassword", "password"),
        ("NEW_PASSWORD", "password"),
        ("confirm-password", "password"),
        ("userpassword", "password"),
        ("Passphrase", "password"),
        ("passcode", "password"),
        ("db_pass", "password"),
        ("passwords", "password"),
        ("ｐａｓｓｗｏｒｄ", "password"),  # full-width
        ("pass\u200bword", "password"),  # zero-width space inside
        ("api_key", "API key"),
        ("apiKey", "API key"),
        ("APIKey", "API key"),
        ("api-key", "API key"),
        ("x-api-key", "API key"),
        ("X-API-KEY", "API key"),
        ("apikey", "API key"),
        ("client_secret", "secret"),
        ("clientSecret", "secret"),
        ("webhook_secret", "secret"),
        ("secret_key", "secret"),
        ("access_token", "access token"),
        ("accessToken", "access token"),
        ("refresh_token", "access token"),
        ("bearer", "access token"),
        ("auth_token", "access token"),
        ("token", "access token"),
        ("jwt", "access token"),
        ("pin", "PIN"),
        ("pin_code", "PIN"),
        ("pincode", "PIN"),
        ("otp", "one-time code"),
        ("totp", "one-time code"),
        ("2fa_code", "one-time code"),
        ("mfa_code", "one-time code"),
        ("verification_code", "one-time code"),
        ("one_time_code", "one-time code"),
        ("two_factor_code", "one-time code"),
        ("recovery_codes", "one-time code"),
        ("card_number", "payment card number"),
        ("cardNumber", "payment card number"),
        ("cc_number", "payment card number"),
        ("ccnum", "payment card number"),
        ("credit_card", "payment card number"),
        ("creditCardNumber", "payment card number"),
        ("debit_card_number", "payment card number"),
        ("cvv", "card security code"),
        ("cvc", "card security code"),
        ("cvv2", "card security code"),
        ("security_code", "card security code"),
        ("ssn", "social security number"),
        ("social_security_number", "social security number"),
        ("SocialSecurityNumber", "social security number"),
        ("private_key", "secret key"),
        ("privateKey", "secret key"),
        ("privkey", "secret key"),
        ("ssh_key", "secret key"),
        ("signing_key", "secret key"),
        ("hmac_key", "secret key"),
        ("license_key", "license key"),
        ("credentials", "credentials"),
        ("aws_creds", "credentials"),
        ("connection_string", "credentials"),
        ("seed_phrase", "wallet recovery phrase"),
        ("mnemonic", "wallet recovery phrase"),
        ("gitlab_pat", "access token"),
        ("recovery_words", "wallet recovery phrase"),
        ("security_answer", "security answer"),
        ("mothers_maiden_name", "security answer"),
        # one-word and vendor spellings
        ("idtoken", "access token"),
        ("authcode", "one-time code"),
        ("onetimecode", "one-time code"),
        ("code_verifier", "secret"),  # PKCE: with it a stolen authorization code is redeemed
        ("oauth_verifier", "secret"),
        ("verifycode", "one-time code"),
        ("verify_code", "one-time code"),
        ("openai_key", "API key"),
        ("OpenAIKey", "API key"),
        ("stripe_key", "API key"),
        ("consumer_key", "API key"),
        ("account_key", "secret key"),
        ("ccv", "card security code"),
    ],
)
def test_secret_names(name: str, category: str) -> None:
    assert category_of_name(name) == category


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("password1", "password"),
        ("password2", "password"),
        ("new_password1", "password"),
        ("newPassword2", "password"),
        ("passwords2", "password"),
        ("pwd2", "password"),
        ("passwd1", "password"),
        ("pass2", "password"),
        ("pin4", "PIN"),
        ("otp6", "one-time code"),
        ("apiKey2", "API key"),
        ("api_key2", "API key"),
        ("token2", "access token"),
        ("accessToken2", "access token"),
        ("secret2", "secret"),
        ("cvv3", "card security code"),
        ("пароль2", "password"),
        # words of the vocabulary that end in digits keep them
        ("cvv2", "card security code"),
        ("2fa_code", "one-time code"),
    ],
)
def test_numbered_secret_names(name: str, category: str) -> None:
    # Django's sign-up form has password1 and password2: the digits only number the field.
    assert category_of_name(name) == category


@pytest.mark.parametrize(
    ("title", "category"),
    [
        # French
        ("Mot de passe", "password"),
        ("Votre mot de passe", "password"),
        ("Clé API", "API key"),
        ("Clé d'API", "API key"),
        ("Numéro de carte", "payment card number"),
        ("Code de vérification", "one-time code"),
        # German
        ("Passwort", "password"),
        ("Kennwort", "password"),
        ("Einmalpasswort", "password"),
        ("API-Schlüssel", "secret key"),
        ("Zugangsschlüssel", "secret key"),
        ("Geheimzahl", "PIN"),
        ("Kreditkartennummer", "payment card number"),
        ("Nummer der Kreditkarte", "payment card number"),
        # Spanish
        ("Contraseña", "password"),
        ("Clave", "password"),
        ("Número de tarjeta", "payment card number"),
        ("Código de seguridad", "card security code"),
        ("Número de seguro social", "social security number"),
        # Portuguese
        ("Senha", "password"),
        ("Sua senha", "password"),
        ("Chave de API", "API key"),
        # Italian
        ("Password", "password"),
        ("Chiave API", "secret key"),
        ("Numero della carta", "payment card number"),
        # Russian
        ("Пароль", "password"),
        ("Введите пароль", "password"),
        ("Токен доступа", "access token"),
        ("Ключ API", "API key"),
        ("API-ключ", "API key"),
        ("PIN-код", "PIN"),
        ("Код подтверждения", "one-time code"),
        ("Номер банковской карты", "payment card number"),
        ("Номер кредитной карты", "payment card number"),
        ("Номер вашей карты", "payment card number"),
        # Chinese
        ("密码", "password"),
        ("请输入您的密码", "password"),
        ("访问令牌", "access token"),
        ("API 密钥", "secret key"),
        ("验证码", "one-time code"),
        ("社会安全号码", "social security number"),
        ("钱包助记词", "wallet recovery phrase"),
        # Japanese
        ("パスワード", "password"),
        ("アクセストークン", "access token"),
        ("暗証番号", "PIN"),
        ("クレジットカード番号", "payment card number"),
        # Korean
        ("비밀번호", "password"),
        ("API 키", "API key"),
        ("카드 번호", "payment card number"),
        ("인증번호", "one-time code"),
        # English prose
        ("Enter your GitHub personal access token", "access token"),
        ("GitHub PAT", "access token"),
        ("Your API token (at most 40 characters)", "access token"),
        ("Credit card number", "payment card number"),
        ("Your PIN", "PIN"),
    ],
)
def test_secret_titles_in_many_languages(title: str, category: str) -> None:
    assert category_of_title(title) == category


@pytest.mark.parametrize(
    "name",
    [
        # LLM token counts are not credentials
        "max_tokens",
        "maxTokens",
        "maxtokens",
        "token_count",
        "num_tokens",
        "total_tokens",
        "token_limit",
        "tokenizer",
        "tokenizer_name",
        # about a secret, not the secret
        "password_hint",
        "passwordHint",
        "password_length",
        "min_password_length",
        "password_policy",
        "api_key_name",
        "apiKeyName",
        "access_key_id",
        "private_key_path",
        "token_url",
        "secret_name",
        "api_key_header",
        # keys and codes that are not secrets
        "public_key",
        "ssh_public_key",
        "sort_key",
        "key",
        "keyword",
        "idempotency_key",
        "keyboard_layout",
        "postal_code",
        "zip_code",
        "country_code",
        "promo_code",
        "discount_code",
        "confirmation_code",
        "code",
        # look-alike words
        "cc",
        "cc_emails",
        "bcc",
        "secretary",
        "passenger",
        "compass",
        "bypass",
        "pass_rate",
        "passport_number",
        "pinned",
        "pineapple",
        "cardholder_name",
        "card_type",
        "business_card",
        # deliberately not flagged: identifiers, not credentials
        "iban",
        "account_number",
        "routing_number",
        # numbered words that are not secrets, and numbered words about a secret
        "address2",
        "ipv4",
        "sha256",
        "oauth2_scopes",
        "key1",
        "code2",
        "max_tokens2",
        "token_count2",
        "password2_hint",
        "card_number_last4",
        "account_key_id",
        "stripe_public_key",
        "openai_model",
        # another word with "pass" or "secret" in it
        "mountain_pass",
        "hall_pass",
    ],
)
def test_not_secret_names(name: str) -> None:
    assert findings(name) == []


@pytest.mark.parametrize(
    "title",
    [
        "palabra clave",
        "parola chiave",
        "Schlüsselwort",
        "Maximum number of tokens to generate",
        "The tokenizer to use",
        "Length of the password",
        "Name of the API key",
        "Your full name",
        "Postal code",
        "Your IBAN",
        "Secret Santa gift idea",
    ],
)
def test_not_secret_titles(title: str) -> None:
    assert category_of_title(title) is None


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "boolean"},
        {"type": "string", "enum": ["password", "passkey"]},
        {"type": "string", "oneOf": [{"const": "pwd", "title": "Password"}]},
        {"type": "array", "items": {"type": "string", "enum": ["token"]}},
        {"type": "string", "format": "date-time"},
        {"type": "string", "format": "date"},
    ],
)
def test_fields_that_cannot_hold_secrets_are_skipped(prop: dict[str, Any]) -> None:
    assert lint_form("", {"type": "object", "properties": {"password": prop}}).secret_fields == []


def test_numbers_can_hold_secrets() -> None:
    assert findings("pin", {"type": "integer"})[0].category == "PIN"


def test_where_and_matched() -> None:
    found = findings("value", {"title": "Token", "description": "Paste your api key here"})
    assert found == [
        SecretFinding("value", "title", "token", "access token"),
        SecretFinding("value", "description", "api key", "API key"),
    ]
    assert str(found[1]) == "field 'value': its description asks for an API key ('api key')"


def test_negations_stay_flagged() -> None:
    # The lint does not understand "never": the override is the way out, on purpose.
    assert findings("name", {"description": "Never your password"})[0].where == "description"


def test_secret_looking_defaults() -> None:
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nabc"
    assert findings("config", {"default": pem})[0] == SecretFinding(
        "config", "default", "-----BEGIN O…", "secret value"
    )
    assert findings("config", {"default": "ghp_" + "a" * 36})[0].where == "default"
    assert findings("config", {"default": "sk-" + "A1b2" * 8})[0].where == "default"
    assert findings("config", {"default": "AKIAIOSFODNN7EXAMPLE"})[0].where == "default"
    assert findings("config", {"default": "hello"}) == []


def test_allow_secrets() -> None:
    assert findings("password", allow_secrets=["password"]) == []
    assert findings("password", allow_secrets=["other"]) != []


def test_message_is_not_linted_for_secrets() -> None:
    schema = {"type": "object", "properties": {"new_name": {"type": "string"}}}
    assert lint_form("Your API key expired. Pick a name for the new one.", schema).secret_fields == []


# --- URL warnings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "what", "snippet"),
    [
        ("Go to https://evil.example/login now", "a URL", "'https://evil.example/login'"),
        ("see http://x.example", "a URL", "'http://x.example'"),
        ("visit www.evil.example", "a www. address", "'www.evil.example'"),
        ("write to mailto:boss@evil.example", "a link", "'mailto:boss@evil.example'"),
        ("run javascript:alert(1)", "a link", "'javascript:alert(1)'"),
        ("[Click here](https://evil.example)", "a markdown link", "'[Click here](https://evil.example)'"),
        ("[Click here](evil)", "a markdown link", "'[Click here](evil)'"),
        ('<a href="https://evil.example">x</a>', "an HTML link", "'<a href=\"https://evil.example\">'"),
        (
            "\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\",
            "a terminal hyperlink escape",
            "'\\x1b]8;;https://evil'",
        ),
    ],
)
def test_link_warnings_in_message(message: str, what: str, snippet: str) -> None:
    warnings = lint_form(message, {"type": "object", "properties": {}}).url_warnings
    assert warnings == [
        f"message contains {what} {snippet}: a client may render it as a clickable link whose "
        "target the user cannot check; send links in URL mode or write them as plain text"
    ]


def test_link_warnings_everywhere_a_client_displays_text() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "title": "See https://x.example", "description": "or www.y.example"},
            "b": {"type": "string", "oneOf": [{"const": "x", "title": "https://z.example"}]},
            "c": {"type": "string", "enum": ["http://w.example"]},
            "d": {"type": "string", "enum": ["v"], "enumNames": ["www.v.example"]},
            "e": {"type": "array", "items": {"anyOf": [{"const": "u", "title": "[u](https://u.example)"}]}},
            "f": {"type": "array", "items": {"type": "string", "enum": ["www.t.example"]}},
            "g": {"type": "string", "default": "https://s.example/login"},
            "h": {"type": "string", "oneOf": [{"const": "https://r.example", "title": "R"}]},
            "www.q.example": {"type": "string"},
        },
    }
    wheres = [w.split(" contains ")[0] for w in lint_form("plain text", schema).url_warnings]
    assert wheres == [
        "field 'a' title",
        "field 'a' description",
        "field 'b' choice title",
        "field 'c' choice",
        "field 'd' choice title",
        "field 'e' choice title",
        "field 'f' choice",
        "field 'g' default",
        "field 'h' choice",
        "field 'www.q.example' name",
    ]


@pytest.mark.parametrize(
    ("message", "snippet"),
    [
        # Python's \b counts CJK letters as word characters: links glued to them are links too.
        ("请访问https://evil.example/login 登录", "'https://evil.example/login'"),
        ("详情见www.evil.example", "'www.evil.example'"),
        ("请点击javascript:alert(1)", "'javascript:alert(1)'"),
        ("電話tel:+81312345678", "'tel:+81312345678'"),
        ("x_https://evil.example", "'https://evil.example'"),
    ],
)
def test_links_glued_to_other_text_are_found(message: str, snippet: str) -> None:
    (warning,) = lint_form(message, {"type": "object", "properties": {}}).url_warnings
    assert f" {snippet}: " in warning


@pytest.mark.parametrize(
    "text",
    [
        "Plain text",
        "Call the hotel:+1 555 0100",
        "Your email, e.g. jane@example.com",
        "example.com is fine",
        "a [bracket] and (paren)",
        "ratio 3:2",
    ],
)
def test_no_link_warning(text: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "description": text}}}
    assert lint_form(text, schema).url_warnings == []


def test_long_message_is_scanned_up_to_the_cap() -> None:
    message = "x" * MAX_MESSAGE + " https://late.example"
    assert lint_form(message, {"type": "object", "properties": {}}).url_warnings == [
        f"message is {len(message)} characters long; only the first {MAX_MESSAGE} were scanned for links"
    ]


def test_link_warnings_are_capped() -> None:
    message = " ".join(f"https://{i}.example" for i in range(20))
    assert len(lint_form(message, {"type": "object", "properties": {}}).url_warnings) == 5
    props = {f"f{i}": {"type": "string", "description": message} for i in range(50)}
    warnings = lint_form(message, {"type": "object", "properties": props}).url_warnings
    assert len(warnings) == 51
    assert warnings[-1].startswith("and ")
    assert warnings[-1].endswith(" more link warnings")


def test_link_snippets_are_escaped() -> None:
    warning = lint_form(
        "https://evil.example/\u202egnp.exe", {"type": "object", "properties": {}}
    ).url_warnings[0]
    assert "\u202e" not in warning
    assert "\\u202e" in warning


@pytest.mark.parametrize(
    ("message", "schema"),
    [
        (None, None),
        (5, []),
        ("x", {"properties": [1, 2]}),
        ("x", {"properties": {"a": 5, 5: {"type": "string"}, "b": {"title": 5, "oneOf": "x", "items": 3}}}),
        ("x", {"properties": {"b": {"oneOf": [5, {"title": None}], "enumNames": [1], "enum": [None]}}}),
        ("x", {"properties": {"b": {"items": {"anyOf": 5, "enum": 7}}}}),
    ],
)
def test_lint_never_raises(message: Any, schema: Any) -> None:
    result = lint_form(message, schema)
    assert isinstance(result, FormLint)


def test_clean_property() -> None:
    assert lint_form("hi", {"type": "object", "properties": {"name": {"type": "string"}}}).clean


@pytest.mark.parametrize(
    ("description", "category"),
    [
        ("The 12 words that restore your wallet", "wallet recovery phrase"),
        ("The 6-digit code from your authenticator app", "one-time code"),
        ("Answer to your security question", "security answer"),
    ],
)
def test_secrets_named_only_in_the_description(description: str, category: str) -> None:
    (found,) = findings("f6", {"description": description})
    assert found.category == category
