"""What in a URL is personal data about the user: the personal-data part of the server's URL check.

The spec: a URL-mode question's URL must not carry sensitive information about the user --
credentials (:mod:`mcp_elicit.server.url_credentials`) and personal data. The URL ends up in
browser history, server logs, referrers and chat messages. :func:`find_personal_data` says where
a URL carries some; :func:`mcp_elicit.server.urls.check_elicitation_url` refuses it then. It
looks for:

* **An email address** anywhere in the path, query or fragment (decoded).
* **A parameter named for personal data** with a value: a phone number, a date of birth, a
  person's name, a postal address, a passport, national id or driving licence number, a bank
  account. Names are read into words as the form lint reads them (``phoneNumber``,
  ``phone-number`` and ``PHONE_NUMBER`` are one name) and matched on their last words, so
  ``customer_phone`` and ``billingAddress`` are refused too.

What passes: what cannot be told from any other data by its form alone. A value is not read
for what it is (a 16-digit order number and a card number look alike; ``?user=ada`` may be an
account handle); a name is read only when it says plainly what it holds (``address`` alone
is also an IP, a wallet or a server address, ``name`` alone a file's). Names in the path itself
(``/settings/phone``) and parameters without a value pass, as for credentials.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import SplitResult, unquote

from mcp_elicit.schema.secret_words import name_words
from mcp_elicit.server.url_credentials import url_parameters

__all__ = ["find_personal_data"]

_EMAIL: Final = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")

# Written as people spell them; read through ``name_words`` (which drops "of") and matched
# against a parameter name's last words.
_PERSONAL_NAMES: Final = {
    "a phone number": ("phone", "phone_number", "mobile", "mobile_number", "telephone", "msisdn"),
    "a date of birth": ("dob", "birthdate", "birth_date", "date_of_birth", "birthday"),
    "a person's name": (
        "full_name",
        "first_name",
        "last_name",
        "given_name",
        "family_name",
        "middle_name",
        "maiden_name",
        "surname",
        "firstname",
        "lastname",
        "fullname",
    ),
    "a postal address": (
        "street",
        "street_address",
        "home_address",
        "postal_address",
        "mailing_address",
        "billing_address",
        "shipping_address",
    ),
    "an identity document number": (
        "passport",
        "passport_number",
        "national_id",
        "national_id_number",
        "drivers_license",
        "driver_license",
        "driving_licence",
        "tax_id",
    ),
    "a bank account": ("iban", "account_number", "bank_account", "routing_number"),
}
_PERSONAL_WORDS: Final = {
    name_words(spelling): what for what, spellings in _PERSONAL_NAMES.items() for spelling in spellings
}
_LONGEST: Final = max(len(words) for words in _PERSONAL_WORDS)


def find_personal_data(parts: SplitResult) -> str | None:
    """Where ``parts`` carries personal data about the user, as a message says it
    (``"'phone' in its query (a phone number)"``), or None."""
    if _EMAIL.search(unquote(f"{parts.path}?{parts.query}#{parts.fragment}")):
        return "an email address"
    for where, name, value in url_parameters(parts):
        if not value.strip():
            continue
        words = name_words(name)
        for start in range(max(0, len(words) - _LONGEST), len(words)):
            what = _PERSONAL_WORDS.get(words[start:])
            if what is not None:
                return f"{name!r} in its {where} ({what})"
    return None
