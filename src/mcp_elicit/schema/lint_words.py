"""Vocabulary of the secret-field lint and of the URL check's credential names (data only; the
matching is in ``secret_words.py``).

Words are written the way the lint's tokenizer produces them: NFKC, case-folded, accents
removed from Latin words ("clé" -> "cle", "Schlüssel" -> "schlussel"), a plural "s"
dropped, and the stop words below removed ("mot de passe" -> "mot passe"). Digits that
number a word are dropped ("password2" -> "password", "pin4" -> "pin"), except in the words
below that end in digits ("cvv2", "last4"). A word ending in ``*`` matches any token
starting with it (used for Russian inflections).

Decisions, each deliberate (see also the ``lint`` module docstring):

* ``token`` alone is flagged unless the same text also has a counting word (``max_tokens``,
  ``token_count``, "number of tokens"): LLM token counts are not credentials.
  ``tokenizer`` / ``tokenize`` are other words and never match. A qualified token
  (``access_token``, ``api token``, ``bearer``) is always flagged.
* A match directly followed by a word that makes it *about* the secret rather than the
  secret itself (``password_hint``, ``password_length``, ``api_key_name``,
  ``access_key_id``, ``private_key_path``, ``token_url``) is not flagged. Password hints
  are not the password; a key's name, id or path is not the key.
* ``key`` alone, ``public_key``, ``sort_key``, ``keyword`` are not flagged; ``key`` after a
  qualifier (api, secret, private, access, signing, license, a vendor such as openai or
  stripe, ...) is, unless "public" appears in the same text.
* ``code`` alone (postal, country, promo, discount, confirmation codes) is not flagged;
  verification / security / one-time / recovery / auth codes are, in one word too
  (``authcode``, ``onetimecode``).
* ``pass`` is flagged only as the last word of a field name (``db_pass``), never in prose
  ("pass the test"); ``boarding_pass`` is flagged too and needs the override, while a
  mountain, hall, season, ski or bus pass is not.
* ``pin`` is always flagged, even where a "PIN code" is a postal code (India): override it.
* ``cc`` alone (email copy) is not flagged; ``cc_number`` / ``ccnum`` are.
* IBAN, bank account and routing numbers are *not* flagged: they identify where money
  goes and are routinely printed on invoices; they do not authorize a payment.
* National ID numbers that are routinely asked for in ordinary forms (Brazilian CPF,
  Italian codice fiscale, Chinese resident ID) are not flagged; the US SSN and the Korean
  resident registration number, often used as authenticators, are.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CATEGORY_TEXT",
    "CODE_QUALIFIERS",
    "COUNT_WORDS",
    "KEY_QUALIFIERS",
    "META_AFTER",
    "META_BEFORE",
    "OTHER_WORD_AFTER",
    "OTHER_WORD_BEFORE",
    "PHRASES",
    "STOP_WORDS",
    "SUBSTRINGS",
    "SUFFIXES",
    "TOKEN_QUALIFIERS",
]

#: Category -> how a message names it (with its article).
CATEGORY_TEXT: Final = {
    "password": "a password",
    "PIN": "a PIN",
    "API key": "an API key",
    "access token": "an access token",
    "secret": "a secret",
    "secret key": "a secret or private key",
    "license key": "a license key",
    "one-time code": "a one-time or verification code",
    "payment card number": "a payment card number",
    "card security code": "a card security code",
    "social security number": "a social security number",
    "credentials": "credentials",
    "wallet recovery phrase": "a wallet recovery phrase",
    "security answer": "the answer to a security question",
    "secret value": "a secret value",
}

#: Removed before phrase matching so "clé d'API" and "número de tarjeta" line up.
STOP_WORDS: Final = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "for",
        "your",
        "my",
        "our",
        "to",
        "de",
        "d",
        "du",
        "des",
        "la",
        "le",
        "l",
        "les",
        "del",
        "da",
        "do",
        "dos",
        "das",
        "di",
        "della",
        "dello",
        "dei",
        "degli",
        "el",
        "lo",
        "los",
        "il",
        "gli",
        "votre",
        "vos",
        "ton",
        "ta",
        "tu",
        "su",
        "sus",
        "seu",
        "sua",
        "der",
        "die",
        "dem",
        "den",
        "ihr",
        "ihre",
        "ihren",
        "dein",
        "deine",
    }
)

#: Their presence in a text makes a bare "token" a count, not a credential.
COUNT_WORDS: Final = frozenset(
    {
        "max",
        "min",
        "maximum",
        "minimum",
        "count",
        "num",
        "number",
        "limit",
        "budget",
        "usage",
        "used",
        "total",
        "input",
        "output",
        "prompt",
        "completion",
        "length",
        "size",
        "estimate",
        "context",
        "window",
        "per",
        "rate",
        "cost",
        "price",
        "generate",
        "generated",
        "remaining",
    }
)

#: A match directly followed by one of these is about the secret, not the secret.
META_AFTER: Final = frozenset(
    {
        "hint",
        "length",
        "len",
        "policy",
        "strength",
        "rule",
        "requirement",
        "expiry",
        "expire",
        "expiration",
        "age",
        "changed",
        "updated",
        "manager",
        "protected",
        "required",
        "enabled",
        "count",
        "name",
        "id",
        "label",
        "type",
        "format",
        "fingerprint",
        "prefix",
        "suffix",
        "last4",
        "last",
        "location",
        "path",
        "file",
        "url",
        "uri",
        "endpoint",
        "header",
        "param",
        "parameter",
        "env",
        "variable",
        "var",
        "provider",
        "storage",
        "reset",
        "field",
    }
)

#: A match directly preceded by one of these is about the secret, not the secret.
META_BEFORE: Final = frozenset(
    {
        "name",
        "label",
        "id",
        "hint",
        "length",
        "type",
        "format",
        "fingerprint",
    }
)

#: Word -> words that, just before it, make it another word ("palabra clave" is a keyword,
#: a mountain pass no password).
OTHER_WORD_BEFORE: Final[dict[str, frozenset[str]]] = {
    "clave": frozenset({"palabra"}),
    "chiave": frozenset({"parola"}),
    "pass": frozenset({"mountain", "hall", "season", "ski", "bus"}),
}

#: Word -> words that, just after it, make it another word (a Secret Santa is a gift game).
OTHER_WORD_AFTER: Final[dict[str, frozenset[str]]] = {
    "secret": frozenset({"santa"}),
}

#: ``<qualifier> key`` (or ``<qualifier>key`` in one word) asks for a key of this category.
KEY_QUALIFIERS: Final = {
    "api": "API key",
    "openai": "API key",
    "anthropic": "API key",
    "stripe": "API key",
    "twilio": "API key",
    "sendgrid": "API key",
    "mailgun": "API key",
    "consumer": "API key",
    "secret": "secret key",
    "private": "secret key",
    "priv": "secret key",
    "access": "secret key",
    "auth": "secret key",
    "encryption": "secret key",
    "decryption": "secret key",
    "signing": "secret key",
    "master": "secret key",
    "hmac": "secret key",
    "ssh": "secret key",
    "client": "secret key",
    "account": "secret key",
    "app": "API key",
    "application": "API key",
    "session": "secret key",
    "recovery": "secret key",
    "wallet": "secret key",
    "shared": "secret key",
    "root": "secret key",
    "license": "license key",
    "licence": "license key",
    "product": "license key",
    "activation": "license key",
}

#: ``<qualifier> token`` is always a credential, even next to counting words.
TOKEN_QUALIFIERS: Final = frozenset(
    {
        "access",
        "refresh",
        "bearer",
        "auth",
        "oauth",
        "api",
        "id",
        "session",
        "personal",
        "bot",
        "app",
        "github",
        "gitlab",
        "slack",
        "security",
        "device",
        "csrf",
        "reset",
        "service",
        "account",
        "user",
        "client",
        "verification",
    }
)

_P = "password"
_T = "access token"
_O = "one-time code"
_C = "payment card number"
_V = "card security code"
_S = "social security number"

#: ``<qualifier> code`` (or ``<qualifier>code`` in one word) asks for a code of this
#: category; ``code`` alone does not (postal, country, promo codes).
CODE_QUALIFIERS: Final = {
    "mfa": _O,
    "onetime": _O,
    "verification": _O,
    "verify": _O,
    "authenticator": _O,
    "auth": _O,
    "authorization": _O,
    "authentication": _O,
    "recovery": _O,
    "backup": _O,
    "sms": _O,
    "reset": _O,
    "access": _O,
    "login": _O,
    "security": _V,
}

#: Token sequences -> category. ``key`` phrases come from :data:`KEY_QUALIFIERS`.
PHRASES: Final[dict[tuple[str, ...], str]] = {
    # passwords, in the usual spellings and languages
    ("password",): _P,
    ("passwd",): _P,
    ("pwd",): _P,
    ("pw",): _P,
    ("pword",): _P,
    ("passphrase",): _P,
    ("passcode",): _P,
    ("pass", "word"): _P,
    ("pass", "phrase"): _P,
    ("pass", "code"): _P,
    ("mot", "passe"): _P,
    ("motdepasse",): _P,
    ("mdp",): _P,
    ("contrasena",): _P,
    ("clave",): _P,
    ("senha",): _P,
    ("chiave",): "secret key",
    ("парол*",): _P,
    # PIN
    ("pin",): "PIN",
    ("pincode",): "PIN",
    ("пин",): "PIN",
    # tokens
    ("token",): _T,
    ("jwt",): _T,
    ("bearer",): _T,
    ("jeton",): _T,
    # personal access tokens, as the forges name them ("GitHub" is split into "git hub")
    ("github", "pat"): _T,
    ("gitlab", "pat"): _T,
    ("git", "hub", "pat"): _T,
    ("git", "lab", "pat"): _T,
    ("токен*",): _T,
    # secrets and keys
    ("open", "ai", "key"): "API key",  # "OpenAIKey" splits into three words
    ("secret",): "secret",
    ("secrete",): "secret",
    ("secreta",): "secret",
    ("cle", "api"): "API key",
    ("cle", "secrete"): "secret key",
    ("cle", "privee"): "secret key",
    ("chave", "api"): "API key",
    ("chave", "secreta"): "secret key",
    ("chave", "privada"): "secret key",
    ("chave", "acesso"): "secret key",
    ("ключ*", "api"): "API key",
    ("api", "ключ*"): "API key",
    ("секретн*", "ключ*"): "secret key",
    ("закрыт*", "ключ*"): "secret key",
    ("приватн*", "ключ*"): "secret key",
    ("ключ*", "доступ*"): "secret key",
    # one-time and verification codes
    ("otp",): _O,
    ("totp",): _O,
    ("hotp",): _O,
    ("2fa",): _O,
    ("mfa", "token"): _O,
    ("two", "factor"): _O,
    ("one", "time", "code"): _O,
    ("one", "time", "pin"): _O,
    ("onetime", "pin"): _O,
    ("onetimepin",): _O,
    ("authenticator", "app"): _O,
    ("code", "verification"): _O,
    # OAuth: PKCE's code_verifier redeems a stolen authorization code; OAuth 1's verifier too
    ("code", "verifier"): "secret",
    ("oauth", "verifier"): "secret",
    ("codigo", "verificacion"): _O,
    ("codigo", "verificacao"): _O,
    ("codice", "verifica"): _O,
    ("код", "подтвержден*"): _O,
    ("одноразов*",): _O,
    # payment cards
    ("card", "number"): _C,
    ("card", "num"): _C,
    ("card", "no"): _C,
    ("card", "nr"): _C,
    ("cardnumber",): _C,
    ("cardno",): _C,
    ("creditcard",): _C,
    ("debitcard",): _C,
    ("credit", "card"): _C,
    ("debit", "card"): _C,
    ("cc", "number"): _C,
    ("cc", "num"): _C,
    ("cc", "no"): _C,
    ("ccnum",): _C,
    ("ccnumber",): _C,
    ("ccn",): _C,
    ("numero", "carte"): _C,
    ("numero", "tarjeta"): _C,
    ("numero", "cartao"): _C,
    ("numero", "carta"): _C,
    ("номер", "карт*"): _C,
    ("номер", "банковск*", "карт*"): _C,
    ("номер", "кредитн*", "карт*"): _C,
    ("номер", "дебетов*", "карт*"): _C,
    ("номер", "ваш*", "карт*"): _C,
    ("кредитн*", "карт*"): _C,
    ("cvv",): _V,
    ("ccv",): _V,
    ("cvc",): _V,
    ("cvv2",): _V,
    ("cvc2",): _V,
    ("csc",): _V,
    ("cvn",): _V,
    ("card", "verification"): _V,
    ("cryptogramme",): _V,
    ("code", "securite"): _V,
    ("codigo", "seguridad"): _V,
    ("codigo", "seguranca"): _V,
    ("codice", "sicurezza"): _V,
    # social security numbers
    ("ssn",): _S,
    ("social", "security"): _S,
    ("social", "insurance", "number"): _S,
    ("securite", "sociale"): _S,
    ("seguro", "social"): _S,
    ("seguranca", "social"): _S,
    ("снилс",): _S,
    # credentials and wallets
    ("credential",): "credentials",
    ("cred",): "credentials",
    ("connection", "string"): "credentials",
    ("session", "cookie"): "credentials",
    ("seed", "phrase"): "wallet recovery phrase",
    ("seed", "word"): "wallet recovery phrase",
    ("recovery", "phrase"): "wallet recovery phrase",
    ("mnemonic", "phrase"): "wallet recovery phrase",
    ("mnemonic",): "wallet recovery phrase",
    ("recovery", "word"): "wallet recovery phrase",
    ("restore", "wallet"): "wallet recovery phrase",
    # answers that reset an account as a password would
    ("security", "question"): "security answer",
    ("security", "answer"): "security answer",
    ("memorable", "word"): "security answer",
    ("mother", "maiden", "name"): "security answer",
}

#: A token *ending* with one of these (and longer than it) is flagged: identifiers
#: written as one word (``userpassword``, ``clientsecret``, ``accesstoken``) and German
#: compounds, whose last part is the head (``Zugangsschlüssel`` is a key,
#: ``Schlüsselwort`` is a word).
SUFFIXES: Final = {
    "password": _P,
    "passwd": _P,
    "passphrase": _P,
    "passcode": _P,
    "passwort": _P,
    "kennwort": _P,
    "token": _T,
    "secret": "secret",
    "schlussel": "secret key",
    "schluessel": "secret key",
    "geheimzahl": "PIN",
    "geheimnummer": "PIN",
    "zugangsdaten": "credentials",
    "anmeldedaten": "credentials",
    "kartennummer": _C,
    "kreditkarte": _C,
    "prufnummer": _V,
    "sicherheitscode": _V,
    "bestatigungscode": _O,
    "sozialversicherungsnummer": _S,
}

#: Substrings of the text with spaces removed, for scripts written without spaces.
SUBSTRINGS: Final = {
    "密码": _P,
    "密碼": _P,
    "口令": _P,
    "パスワード": _P,
    "パスコード": _P,
    "비밀번호": _P,
    "패스워드": _P,
    "暗証番号": "PIN",
    "핀번호": "PIN",
    "pin码": "PIN",
    "令牌": _T,
    "トークン": _T,
    "토큰": _T,
    "密钥": "secret key",
    "密鑰": "secret key",
    "秘钥": "secret key",
    "私钥": "secret key",
    "秘密鍵": "secret key",
    "シークレット": "secret",
    "시크릿": "secret",
    "비밀키": "secret key",
    "개인키": "secret key",
    "apiキー": "API key",
    "api키": "API key",
    "验证码": _O,
    "驗證碼": _O,
    "認証コード": _O,
    "確認コード": _O,
    "ワンタイム": _O,
    "인증번호": _O,
    "인증코드": _O,
    "卡号": _C,
    "卡號": _C,
    "信用卡": _C,
    "クレジットカード": _C,
    "カード番号": _C,
    "카드번호": _C,
    "신용카드": _C,
    "安全码": _V,
    "セキュリティコード": _V,
    "보안코드": _V,
    "주민등록번호": _S,
    "社会安全号": _S,
    "社會安全號": _S,
    "社会保障号": _S,
    "助记词": "wallet recovery phrase",
    "助記詞": "wallet recovery phrase",
    "凭据": "credentials",
    "認証情報": "credentials",
}
