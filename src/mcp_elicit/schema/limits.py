"""Size caps, applied before any deep inspection.

They bound the work done on a hostile schema or answer and keep forms usable. A schema
beyond a cap is refused by :func:`~mcp_elicit.schema.check_schema`; the lint scans only
the first part of an over-long text and says so.
"""

from __future__ import annotations

#: Fields in one form.
MAX_PROPERTIES = 200
#: Choices in one enum, ``oneOf`` or ``anyOf``.
MAX_OPTIONS = 1000
#: Characters (code points) in a property name.
MAX_NAME = 256
#: Characters in any other string of a schema: title, description, option value, option
#: title, string default, ``$schema``.
MAX_TEXT = 8192
#: Characters of a form ``message`` that :func:`~mcp_elicit.schema.lint_form` scans.
MAX_MESSAGE = 65536
#: Problems reported by one ``check_schema`` call; the last one says the list was cut.
MAX_PROBLEMS = 100
#: Unknown keys named one by one in an ``AnswerInvalid``; the rest are counted.
MAX_UNKNOWN_REPORTED = 20
#: Characters of a date-time answer (RFC 3339 allows long fractions; nobody needs them).
MAX_DATETIME = 64
#: Characters of an email address (RFC 5321 path limit).
MAX_EMAIL = 254
#: Characters of a ``uri`` answer (browsers and servers commonly stop near here).
MAX_URI = 8192
